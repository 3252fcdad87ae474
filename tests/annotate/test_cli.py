"""The annotation commands end to end through click: raters, create, label, agreement,
adjudicate (both modes), export, and launching the Textual apps with an authenticated person."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from annotate.people import Person, require
from store import open_db
from store.errors import UserError
from tests.annotate.conftest import PASSPHRASE, make_audit, save_to_file
from workbench.cli import cli


@pytest.fixture
def env(tmp_path):
    db = open_db(memory=True)
    make_audit(db, 6)
    path = save_to_file(db, tmp_path / "paw.db")
    return {"PAW_DB": path, "PW": PASSPHRASE}


def run(env, *args, input=None):
    return CliRunner().invoke(cli, list(args), env=env, input=input)


def setup_set(env) -> list[str]:
    for name, role in (("alice", "rater"), ("bob", "rater"), ("carol", "coordinator")):
        result = run(env, "raters", "add", name, "--role", role, "--passphrase-env", "PW")
        assert result.exit_code == 0, result.output
    result = run(env, "annotate", "create", "--audit", "audit-1", "--size", "8", "--seed", "2",
                 "--name", "s")
    assert result.exit_code == 0, result.output
    assert "created set s: 8 cases" in result.output
    db = open_db(env["PAW_DB"])
    return [r[0] for r in db.execute("SELECT code FROM annotation_cases ORDER BY code")]


def test_label_agreement_adjudicate_export(env, tmp_path):
    codes = setup_set(env)
    for code, a, b in zip(codes, "11112", "11223"):
        for rater, value in (("alice", a), ("bob", b)):
            result = run(env, "label", code, "--rater", rater, "--field", "gold_shift",
                         "--value", value, "--passphrase-env", "PW")
            assert result.exit_code == 0, result.output
            assert result.output.startswith("event ")
    result = run(env, "agreement", "--json")
    data = json.loads(result.output)
    gold = next(a for a in data["agreement"] if a["field"] == "gold_shift" and not a["binary"])
    # pairs (1,1)×2, (1,2)×2, (2,3): p_o = 2/5; A (4/5, 1/5, 0), B (2/5, 2/5, 1/5)
    # p_e = 8/25 + 2/25 = 10/25; kappa = (10/25 − 10/25)/(15/25) = 0
    assert gold["n"] == 5 and gold["kappa"] == pytest.approx(0.0)
    assert gold["confusion"] == [[2, 2, 0], [0, 0, 1], [0, 0, 0]]
    text = run(env, "agreement").output
    assert "gold_shift (3-way): N=5 kappa=0.00" in text and "slight" in text
    # interactive adjudication: 3 disagreements; decide the first, skip the rest
    result = run(env, "adjudicate", "--coordinator", "carol", "--passphrase-env", "PW",
                 input="2\nchart review\n\n\n")
    assert result.exit_code == 0, result.output
    assert "3 disagreements" in result.output and "recorded gold_shift = ambiguous" in result.output
    result = run(env, "adjudicate", "--coordinator", "carol", "--passphrase-env", "PW",
                 "--case", codes[4], "--field", "gold_shift", "--value", "3", "--reason", "x")
    assert "adjudicated by carol" in result.output
    out = tmp_path / "labels.csv"
    result = run(env, "annotate", "export", "--long", "--format", "csv", "--out", str(out))
    assert result.exit_code == 0
    lines = out.read_text().splitlines()
    assert lines[0].startswith("set,code,") and len(lines) == 1 + 10 + 2 + 2  # labels+finals
    result = run(env, "annotate", "export", "--wide", "--format", "jsonl")
    assert len(result.output.splitlines()) == 8


def test_wrong_passphrase_and_bad_values_are_refused(env):
    codes = setup_set(env)
    result = run(env, "label", codes[0], "--rater", "alice", "--field", "gold_shift",
                 "--value", "1", "--passphrase-env", "NOPE")
    assert isinstance(result.exception, UserError)
    result = run(env, "label", codes[0], "--rater", "alice", "--field", "gold_shift",
                 "--value", "1", input="not the passphrase\n")
    assert isinstance(result.exception, UserError) and "wrong passphrase" in str(
        result.exception)
    result = run(env, "label", codes[0], "--rater", "carol", "--field", "gold_shift",
                 "--value", "1", "--passphrase-env", "PW")
    assert "rater role" in str(result.exception)
    assert open_db(env["PAW_DB"]).execute("SELECT COUNT(*) FROM label_events").fetchone()[0] == 0


def test_annotate_and_coordinate_launch_the_tui_with_an_authenticated_person(env, monkeypatch):
    import workbench.tui as tui

    setup_set(env)
    calls = []

    def fake(db_path: str, person: Person, set_name: str) -> None:
        calls.append((db_path, require(person).name, person.role, set_name))

    monkeypatch.setattr(tui, "run_annotation", fake, raising=False)
    monkeypatch.setattr(tui, "run_coordinator", fake, raising=False)
    assert run(env, "annotate", "--rater", "alice", "--passphrase-env", "PW").exit_code == 0
    assert run(env, "coordinate", "--coordinator", "carol", "--passphrase-env", "PW",
               "--set", "s").exit_code == 0
    assert calls == [(env["PAW_DB"], "alice", "rater", "s"),
                     (env["PAW_DB"], "carol", "coordinator", "s")]
    result = run(env, "annotate", "--rater", "carol", "--passphrase-env", "PW")
    assert "rater role" in str(result.exception)
