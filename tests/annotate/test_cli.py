"""The annotation commands end to end through click: setup (first coordinator, raters added by
the coordinator), create with the two raters, label, agreement, adjudicate (both modes),
export; who may run what; bounded passphrase attempts; launching the Textual apps."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from annotate.trust.identity import Person, require
from store import open_db
from store.errors import UserError
from tests.annotate.conftest import PASSPHRASE, make_audit, save_to_file
from workbench.cli import cli

AS_CAROL = ("--coordinator", "carol", "--passphrase-env", "PW")


@pytest.fixture
def env(tmp_path):
    db = open_db(memory=True)
    make_audit(db, 6)
    path = save_to_file(db, tmp_path / "paw.db")
    return {"PAW_DB": path, "PW": PASSPHRASE}


@pytest.fixture
def no_delay(monkeypatch):
    """Record the delays after wrong passphrases instead of sleeping."""
    import workbench.cli.signin as signin

    waited: list[float] = []
    monkeypatch.setattr(signin, "_sleep", waited.append)
    return waited


def run(env, *args, input=None):
    return CliRunner().invoke(cli, list(args), env=env, input=input)


def add(env, name: str, role: str = "rater"):
    extra = () if name == "carol" else ("--coordinator", "carol",
                                        "--coordinator-passphrase-env", "PW")
    return run(env, "raters", "add", name, "--role", role, "--passphrase-env", "PW", *extra)


def setup_set(env) -> list[str]:
    result = add(env, "carol", "coordinator")  # the setup: first person, no authority needed
    assert result.exit_code == 0 and "self-registered" in result.output, result.output
    for name in ("alice", "bob"):
        result = add(env, name)
        assert result.exit_code == 0 and "by carol" in result.output, result.output
    result = run(env, "annotate", "create", "--audit", "audit-1", "--size", "8", "--seed", "2",
                 "--name", "s", "--raters", "alice,bob", *AS_CAROL)
    assert result.exit_code == 0, result.output
    assert "created set s: 8 cases" in result.output and "raters alice and bob" in result.output
    db = open_db(env["PAW_DB"])
    return [r[0] for r in db.execute("SELECT code FROM annotation_cases ORDER BY code")]


def test_label_agreement_adjudicate_export(env, tmp_path):
    codes = setup_set(env)
    for code, a, b in zip(codes, "11112", "11223"):
        for rater, value in (("alice", a), ("bob", b)):
            result = run(env, "label", code, "--rater", rater, "--field", "gold_shift",
                         "--value", value, "--passphrase-env", "PW")
            assert result.exit_code == 0, result.output
            assert result.stdout.startswith("event ")
    result = run(env, "agreement", "--json", *AS_CAROL)
    data = json.loads(result.stdout)
    gold = next(a for a in data["agreement"] if a["field"] == "gold_shift" and not a["binary"])
    # pairs (1,1)×2, (1,2)×2, (2,3): p_o = 2/5; A (4/5, 1/5, 0), B (2/5, 2/5, 1/5)
    # p_e = 8/25 + 2/25 = 10/25; kappa = (10/25 − 10/25)/(15/25) = 0
    assert gold["n"] == 5 and gold["kappa"] == pytest.approx(0.0)
    assert gold["confusion"] == [[2, 2, 0], [0, 0, 1], [0, 0, 0]]
    text = run(env, "agreement", *AS_CAROL).stdout
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
    result = run(env, "annotate", "export", "--long", "--format", "csv", "--out", str(out),
                 *AS_CAROL)
    assert result.exit_code == 0, result.output
    lines = out.read_text().splitlines()
    assert lines[0].startswith("set,code,") and len(lines) == 1 + 10 + 2 + 2  # labels+finals
    # The head the export was computed from: printed, and on every row.
    head = open_db(env["PAW_DB"]).execute(
        "SELECT hash FROM record_log ORDER BY id DESC LIMIT 1").fetchone()[0]
    assert f"record head {head}" in result.output
    assert all(line.endswith(head) for line in lines[1:])
    result = run(env, "annotate", "export", "--wide", "--format", "jsonl", *AS_CAROL)
    assert len(result.stdout.splitlines()) == 8


def test_coordinator_commands_refuse_without_the_coordinator(env):
    codes = setup_set(env)
    run(env, "label", codes[0], "--rater", "alice", "--field", "gold_shift", "--value", "1",
        "--passphrase-env", "PW")
    for args in (("agreement",), ("annotate", "export", "--format", "csv")):
        result = run(env, *args)
        assert isinstance(result.exception, UserError) and "--coordinator" in str(
            result.exception), args
        result = run(env, *args, "--coordinator", "alice", "--passphrase-env", "PW")
        assert "coordinator role" in str(result.exception), args
        assert "no_shift" not in result.output


def test_registering_needs_the_coordinator_once_one_exists(env, no_delay):
    setup_set(env)
    result = run(env, "raters", "add", "mallory", "--role", "coordinator",
                 "--passphrase-env", "PW")
    assert "--coordinator NAME" in str(result.exception)
    result = run(env, "raters", "add", "mallory", "--coordinator", "carol",
                 "--passphrase-env", "PW", input="guess one\nguess two\nguess three\n")
    assert "wrong passphrase 3 times" in str(result.exception)
    result = run(env, "raters", "add", "mallory", "--coordinator", "alice",
                 "--coordinator-passphrase-env", "PW", "--passphrase-env", "PW")
    assert "coordinator role" in str(result.exception)
    assert open_db(env["PAW_DB"]).execute(
        "SELECT COUNT(*) FROM people WHERE name = 'mallory'").fetchone()[0] == 0


def test_wrong_passphrases_are_bounded_with_a_growing_delay(env, no_delay):
    codes = setup_set(env)
    result = run(env, "label", codes[0], "--rater", "alice", "--field", "gold_shift",
                 "--value", "1", "--passphrase-env", "NOPE")
    assert isinstance(result.exception, UserError)
    result = run(env, "label", codes[0], "--rater", "alice", "--field", "gold_shift",
                 "--value", "1", input="wrong 1\nwrong 2\nwrong 3\nnever read\n")
    assert "wrong passphrase 3 times; stopped" in str(result.exception)
    assert no_delay == [1.0, 2.0, 4.0]
    no_delay.clear()
    result = run(env, "label", codes[0], "--rater", "alice", "--field", "gold_shift",
                 "--value", "1", input=f"wrong 1\n{PASSPHRASE}\n")
    assert result.exit_code == 0 and no_delay == [1.0], result.output
    result = run(env, "label", codes[1], "--rater", "carol", "--field", "gold_shift",
                 "--value", "1", "--passphrase-env", "PW")
    assert "rater role" in str(result.exception)
    # alice's one gold-shift label: itself and its (empty) new answer.
    assert open_db(env["PAW_DB"]).execute("SELECT COUNT(*) FROM label_events").fetchone()[0] == 2


def test_a_missing_database_is_an_error_except_for_creating_commands(tmp_path):
    missing = tmp_path / "nope.db"
    environment = {"PAW_DB": str(missing), "PW": PASSPHRASE}
    for args in (("agreement",), ("verify",), ("datasets",), ("label", "X", "--rater", "a",
                 "--field", "note", "--value", "v"), ("annotate", "export", "--format", "csv"),
                 ("report",), ("coordinate", "--coordinator", "c"), ("models", "list")):
        result = run(environment, *args)
        assert isinstance(result.exception, UserError), (args, result.output)
        assert "no such database" in str(result.exception), args
        assert not missing.exists(), args
    result = run(environment, "raters", "add", "carol", "--role", "coordinator",
                 "--passphrase-env", "PW")
    assert result.exit_code == 0 and missing.exists(), result.output


def test_annotate_and_coordinate_launch_the_tui_with_an_authenticated_person(env, monkeypatch):
    import workbench.tui as tui

    setup_set(env)
    calls = []

    def fake(db_path: str, person: Person, set_name: str, **options) -> None:
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
    # A rater registered by the coordinator but not named for the set cannot open it.
    assert add(env, "dave").exit_code == 0
    result = run(env, "annotate", "--rater", "dave", "--passphrase-env", "PW")
    assert "not one of the two raters" in str(result.exception)
    assert len(calls) == 2


def test_report_annotation_sections_need_the_coordinator_and_carry_the_head(env):
    codes = setup_set(env)
    for rater in ("alice", "bob"):
        run(env, "label", codes[0], "--rater", rater, "--field", "gold_shift", "--value", "1",
            "--passphrase-env", "PW")
    # People are registered: the report is the coordinator's (issue 35: blinding in every
    # command); without a sign-in it is refused in one line, nothing printed.
    plain = run(env, "report", "--audit", "audit-1", "--json", "--n-boot", "0")
    assert isinstance(plain.exception, UserError) and plain.stdout == ""
    assert "paw report: people are registered" in str(plain.exception)
    result = run(env, "report", "--audit", "audit-1", "--json", "--n-boot", "0", *AS_CAROL)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    titles = [t["title"] for t in data["tables"].values()]
    assert any("agreement" in t.lower() for t in titles), titles
    head = open_db(env["PAW_DB"]).execute(
        "SELECT hash FROM record_log ORDER BY id DESC LIMIT 1").fetchone()[0]
    assert data["meta"]["annotation_record_head"] == head
    assert f"annotation record head {head} (verified)" in result.output


def test_kappa_plots_reach_the_report_only_for_the_coordinator(env, tmp_path):
    # The κ-over-labels PNGs show both raters' labels: not without sign-in, and not for a
    # rater who names herself as the coordinator (her right passphrase does not help).
    codes = setup_set(env)
    for rater in ("alice", "bob"):
        run(env, "label", codes[0], "--rater", rater, "--field", "gold_shift", "--value", "1",
            "--passphrase-env", "PW")
    out = tmp_path / "plain.md"
    plain = run(env, "report", "--audit", "audit-1", "--n-boot", "0", "--out", str(out))
    assert isinstance(plain.exception, UserError), plain.output
    assert not list(tmp_path.glob("plain*"))
    rater = run(env, "report", "--audit", "audit-1", "--n-boot", "0", "--out",
                str(tmp_path / "alice.md"), "--coordinator", "alice", "--passphrase-env", "PW")
    assert rater.exit_code != 0 and "needs the coordinator role" in str(rater.exception)
    assert not list(tmp_path.glob("alice*"))
    signed = run(env, "report", "--audit", "audit-1", "--n-boot", "0", "--out",
                 str(tmp_path / "carol.md"), *AS_CAROL)
    assert signed.exit_code == 0, signed.output
    pngs = sorted(p.name for p in tmp_path.glob("carol_kappa_*.png"))
    assert any(p.endswith("_gold_shift.png") for p in pngs), pngs
    assert "κ over paired labels: gold_shift (3-way)" in (tmp_path / "carol.md").read_text()
