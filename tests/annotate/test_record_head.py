"""Issue 34, criterion 8: the record head where the user will find it.

`paw verify`, `paw annotate merge`, `paw report --coordinator` and `paw backup` print the
head with where to keep it and the command to check it later. A store whose `-wal` was
deleted after a crash loses acknowledged labels and still verifies on its own (SQLite's
contract); the head kept from before the crash catches it, as it catches an older backup
restored over a newer store. And `paw annotate merge EMPTYDIR` says that nothing was
found instead of exiting 0 silently.
"""

from __future__ import annotations

import re
import shutil
import sqlite3

from tests.annotate.test_cli import AS_CAROL, env, run, setup_set  # noqa: F401  (fixture)
from tests.paw_cli import paw

HEAD = re.compile(r"record head ([0-9a-f]{64}): keep it outside (\S+) .*later "
                  r"`paw verify --head \1 --db (\S+)`")


def label(where: dict, code: str, rater: str, value: str) -> None:
    result = run(where, "label", code, "--rater", rater, "--field", "gold_shift", "--value",
                 value, "--passphrase-env", "PW")
    assert result.exit_code == 0, result.output


def test_a_deleted_wal_is_caught_by_the_kept_head(env, capsys, monkeypatch,  # noqa: F811
                                                  tmp_path):
    codes = setup_set(env)
    db = env["PAW_DB"]
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    holder = sqlite3.connect(db)  # another process keeps the store open: no checkpoint
    holder.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for code in codes[:3]:
        label(env, code, "alice", "1")  # acknowledged: committed, in paw.db-wal
    code, out, err = paw(capsys, "verify", "--db", db)
    assert code == 0, err
    found = HEAD.search(out)
    assert found, out
    kept = found.group(1)
    assert found.group(2) == str(tmp_path) and found.group(3) == db
    # The crash: the -wal is gone (what is left is the main file alone).
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    shutil.copyfile(db, crashed / "paw.db")
    holder.close()
    lost = str(crashed / "paw.db")
    code, out, err = paw(capsys, "verify", "--db", lost)
    assert code == 0 and "annotation record ok" in out, out + err  # SQLite's contract
    code, out, err = paw(capsys, "verify", "--head", kept, "--db", lost)
    assert code == 1 and "annotation record ok" not in out, out


def test_an_older_backup_restored_is_caught_and_backup_prints_its_head(
        env, capsys, monkeypatch, tmp_path):  # noqa: F811
    codes = setup_set(env)
    db = env["PAW_DB"]
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    label(env, codes[0], "alice", "1")
    code, out, err = paw(capsys, "backup", str(tmp_path / "old.db"), "--db", db)
    assert code == 0, err
    backup_head = HEAD.search(out)
    assert backup_head and backup_head.group(3) == str(tmp_path / "old.db"), out
    label(env, codes[1], "alice", "2")
    code, out, _ = paw(capsys, "verify", "--db", db)
    kept = HEAD.search(out).group(1)
    assert kept != backup_head.group(1)
    code, out, _ = paw(capsys, "verify", "--head", kept, "--db", str(tmp_path / "old.db"))
    assert code == 1
    code, out, _ = paw(capsys, "verify", "--head", backup_head.group(1), "--db", db)
    assert code == 0  # the older head is still in the newer record


def test_report_and_merge_print_the_head_and_an_empty_folder_is_said(
        env, capsys, monkeypatch, tmp_path):  # noqa: F811
    codes = setup_set(env)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    label(env, codes[0], "alice", "1")
    code, _, err = paw(capsys, "report", "--audit", "audit-1", "--n-boot", "0", "--out",
                       str(tmp_path / "r.md"), *AS_CAROL)
    assert code == 0, err
    assert HEAD.search(err), err
    folder = tmp_path / "files"
    folder.mkdir()
    code, out, err = paw(capsys, "annotate", "merge", str(folder), *AS_CAROL)
    assert code == 1 and err.startswith(f"paw: error: {folder}: no rater file in it"), err
    code, out, err = paw(capsys, "annotate", "pack", "s", "--rater", "bob", "--out",
                         str(folder / "bob.paw-rater"), *AS_CAROL)
    assert code == 0, err
    code, out, err = paw(capsys, "annotate", "merge", str(folder), *AS_CAROL)
    assert code == 0, err
    assert "0 new labels merged" in out and HEAD.search(out), out
    (folder / "alice.paw-rater").write_bytes(b"half a file")  # named as one: said, not skipped
    (folder / "other.db").write_bytes(b"")  # any other file: left alone
    code, out, err = paw(capsys, "annotate", "merge", str(folder), *AS_CAROL)
    assert code == 1 and f"refused: {folder / 'alice.paw-rater'}: " in err, err
    assert "0 new labels merged" in out
