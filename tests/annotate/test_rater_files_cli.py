"""`paw annotate pack`, `paw annotate merge`, `paw annotate --file`, `paw coordinate --watch`
through click, as a coordinator and a rater would type them."""

from __future__ import annotations

import sqlite3

from annotate.raterfile.file import open_file, sign_in
from annotate.raterfile.labelling import FileLabelling
from annotate.trust.identity import require
from tests.annotate.conftest import PASSPHRASE
from tests.annotate.test_cli import AS_CAROL, env, run, setup_set  # noqa: F401  (fixture)


def test_pack_label_merge_twice_and_a_tampered_file(env, tmp_path, monkeypatch):  # noqa: F811
    import workbench.tui as tui

    setup_set(env)
    out = str(tmp_path / "alice.paw-rater")
    result = run(env, "annotate", "pack", "s", "--rater", "alice", "--out", out, *AS_CAROL)
    assert result.exit_code == 0, result.output
    assert f"wrote {out}: 8 cases of set s for alice" in result.output
    again = run(env, "annotate", "pack", "s", "--rater", "alice", "--out", out, *AS_CAROL)
    assert "already exists" in str(again.exception)
    refused = run(env, "annotate", "pack", "s", "--rater", "carol", "--out",
                  str(tmp_path / "x"), *AS_CAROL)
    assert "not one of the two raters" in str(refused.exception)
    # `paw annotate --file`: the rater signs in against her file and the screen opens.
    calls = []
    monkeypatch.setattr(tui, "run_rater_file", lambda path, person, conn: calls.append(
        (path, require(person, "rater").name, conn.close())), raising=False)
    assert run(env, "annotate", "--file", out, "--passphrase-env", "PW").exit_code == 0
    assert calls == [(out, "alice", None)]
    wrong = run({**env, "PW": "not her passphrase"}, "annotate", "--file", out,
                "--passphrase-env", "PW")
    assert "alice: wrong passphrase" in str(wrong.exception)
    conn = open_file(out)
    labelling = FileLabelling(conn, sign_in(conn, out, PASSPHRASE))
    labelling.start()
    for view in labelling.queue()[:4]:
        labelling.record(view.code, "validity", "valid")
    conn.close()
    first = run(env, "annotate", "merge", out, *AS_CAROL)
    assert first.exit_code == 0 and "alice, set s: 4 new labels merged, 0 already in" in \
        first.output, first.output
    second = run(env, "annotate", "merge", str(tmp_path), *AS_CAROL)  # the folder
    assert second.exit_code == 0 and "0 new labels merged, 4 already in" in second.output
    raw = sqlite3.connect(out)
    raw.execute("UPDATE events SET value = 'invalid' WHERE seq = 2")
    raw.commit()
    raw.close()
    tampered = run(env, "annotate", "merge", out, *AS_CAROL)
    assert tampered.exit_code == 1
    assert "refused:" in tampered.output and "event 2: its field or value was changed" in \
        tampered.output
    verify = run(env, "verify")
    assert verify.exit_code == 0, verify.output
