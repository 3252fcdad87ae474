"""`paw study`, `paw power` and `paw report --study` through the real entry point."""

from __future__ import annotations

import json

import pytest

from store import open_db
from workbench.cli import main


def paw(capsys, *args: str) -> tuple[int, str, str]:
    """Run `paw ARGS` in-process; returns (exit code, stdout, stderr)."""
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("args, message", [
    (("--targets", "F9"), "operator: expected one of"),
    (("--targets", "fixed_sentence"), "--targets: expected operators that edit the question"),
    (("--baselines", "shuffle"), "--baselines: expected paraphrase_adjusted, fixed_sentence"),
    (("--samples", "2", "--seeds", "0,1,42"), "--samples: expected 3 (one per --seeds value)"),
    (("--seeds", "0,x"), "--seeds: expected numbers"),
    (("--seeds", "0.5"), "--seeds: expected whole numbers"),
    (("--template", "neutral_cot@1"), "not usable with --mode direct"),
])
def test_study_bad_arguments_are_one_line_errors(capsys, db_path, args, message):
    paw(capsys, "demo", "--import-only", "--db", db_path)
    code, out, err = paw(capsys, "study", "--dataset", "demo", *args, "--db", db_path)
    assert code != 0 and out == ""
    assert message in err and err.startswith("paw: error:") and err.count("\n") == 1


def test_study_on_a_missing_dataset(capsys, db_path):
    code, _, err = paw(capsys, "study", "--dataset", "nope", "--db", db_path)
    assert code == 1 and "no dataset named 'nope'" in err


def test_power_needs_exactly_one_source(capsys, db_path, tmp_path):
    code, _, err = paw(capsys, "power", "--db", db_path)
    assert code == 1 and "exactly one of --study or --synthetic" in err
    code, _, err = paw(capsys, "power", "--synthetic", "10", "--sigma", "a", "--db", db_path)
    assert code == 1 and "--sigma: expected numbers or START:STOP:STEP" in err
    code, _, err = paw(capsys, "power", "--study", "ghost", "--db", db_path)
    assert code == 1 and "no study 'ghost'" in err


def test_power_on_synthetic_logits_writes_the_table_and_curves(capsys, db_path, tmp_path):
    out_path = tmp_path / "power.md"
    code, out, err = paw(capsys, "power", "--synthetic", "40", "--sigma", "0.5",
                         "--sigma-pert", "0:1:0.5", "--sims", "30", "--n-boot", "40",
                         "--out", str(out_path), "--db", db_path)
    assert code == 0, err
    assert "3 cells × 30 simulations" in out and "mean false-positive rate" in out
    text = out_path.read_text()
    assert "Power per condition, σ and σ_pert" in text
    png = tmp_path / "power_power_0.png"
    assert png.read_bytes().startswith(b"\x89PNG")
    code, _, err = paw(capsys, "power", "--synthetic", "40", "--sigma", "0.5",
                       "--sigma-pert", "0", "--sims", "10", "--n-boot", "10", "--format",
                       "json", "--out", str(tmp_path / "p.json"), "--db", db_path)
    assert code == 0, err
    payload = json.loads((tmp_path / "p.json").read_text())
    assert set(payload["tables"]) == {"fpr", "conditions", "power"}


def test_power_two_sided_with_fixed_originals(capsys, db_path, tmp_path):
    code, _, err = paw(capsys, "power", "--synthetic", "30", "--sigma", "0.5", "--sigma-pert",
                       "0,1", "--sims", "20", "--n-boot", "20", "--two-sided",
                       "--fixed-originals", "--format", "json", "--out",
                       str(tmp_path / "p.json"), "--db", db_path)
    assert code == 0, err
    payload = json.loads((tmp_path / "p.json").read_text())
    assert (payload["meta"]["sides"], payload["meta"]["originals"]) == ("two", "fixed")
    assert "two-sided" in payload["tables"]["power"]["note"]


def test_report_and_power_of_a_stored_study(capsys, db_path, tmp_path, make_engine_for_path):
    db, name = make_engine_for_path(db_path)
    out_path = tmp_path / "study.json"
    code, _, err = paw(capsys, "report", "--study", name, "--format", "json", "--out",
                       str(out_path), "--n-boot", "50", "--db", db_path)
    assert code == 0, err
    payload = json.loads(out_path.read_text())
    assert payload["meta"]["kind"] == "study"
    assert "table4" in payload["tables"] and "tests" in payload["tables"]
    code, out, err = paw(capsys, "power", "--study", name, "--sigma", "0.5", "--sigma-pert",
                         "0", "--sims", "20", "--n-boot", "20", "--out",
                         str(tmp_path / "power.md"), "--db", db_path)
    assert code == 0, err
    assert "1 cells × 20 simulations" in out
    assert "fake · yes/no" in (tmp_path / "power.md").read_text()
    # Kept with the study: its report (and so the Statistics screen) carries the curves.
    assert f"kept with study {name!r}" in out
    code, _, err = paw(capsys, "power", "--study", name, "--sigma", "0.25,0.5",
                       "--sigma-pert", "0,1", "--sims", "10", "--n-boot", "10", "--out",
                       str(tmp_path / "power2.md"), "--db", db_path)
    assert code == 0, err
    code, _, err = paw(capsys, "report", "--study", name, "--format", "json", "--out",
                       str(out_path), "--n-boot", "50", "--db", db_path)
    assert code == 1 and "already exists; pass --force" in err  # not replaced unasked
    code, _, err = paw(capsys, "report", "--study", name, "--format", "json", "--out",
                       str(out_path), "--n-boot", "50", "--db", db_path, "--force")
    assert code == 0, err
    assert "power_fpr" in json.loads(out_path.read_text())["tables"]
    from analysis.counterfactual.report import StudyReportOptions, build_report

    report = build_report(open_db(db_path), name, options=StudyReportOptions(n_boot=20))
    assert "σ 0.25, 0.5" in report.section("power_fpr").note  # the latest run, not the first
    power = [f for f in report.figures if f.caption == "power curves: fake · yes/no"]
    assert len(power) == 1
    data = power[0].plot()
    assert {s.label for s in data.series} >= {"JSD σ=0.25", "JSD σ=0.5"}, data.series
    assert power[0].render().startswith(b"\x89PNG")


def test_a_stored_setting_that_is_none_of_its_values_is_refused(capsys, db_path, tmp_path,
                                                                 make_engine_for_path):
    # `sides` "Two" was read as two-sided by the t-tests and the bootstrap (`!= "one"`) and
    # as one-sided by the regressions (`!= "two"`), in the same report: now the study's
    # settings are read as `Sides` etc. once, where the study is loaded, and refused there.
    from analysis.counterfactual.data import resolve_study
    from analysis.counterfactual.definitions import Sides
    from store.db import dumps, loads

    db, name = make_engine_for_path(db_path)
    config = loads(db.execute("SELECT config_json FROM audits WHERE name = ?",
                              [name]).fetchone()[0])
    assert (config["sides"], resolve_study(db, name)["config"]["sides"]) == ("one", Sides.ONE)
    for setting, value, values in (("sides", "Two", "one, two"),
                                   ("kl_floor", "p", "q, both"),
                                   ("correction", "Holm", "bonferroni, holm, none"),
                                   ("alternative", "lesser", "less, greater")):
        db.execute("UPDATE audits SET config_json = ? WHERE name = ?",
                   [dumps({**config, setting: value}), name])
        db.conn.commit()
        code, out, err = paw(capsys, "report", "--study", name, "--n-boot", "10", "--out",
                             str(tmp_path / "study.md"), "--db", db_path)
        assert (code, out) == (1, "")
        assert err == (f"paw: error: study {name}'s stored settings: {setting} {value!r} is "
                       f"not one of {values}\n")
    assert not (tmp_path / "study.md").exists()


@pytest.mark.model
def test_the_controls_study_then_its_report_on_the_embedded_model(capsys, db_path, tmp_path):
    """Regression: these two commands crashed `paw report` (`tuple.index(x): x not in
    tuple` in data.py) when a control prompt had no parsed sample."""
    assert paw(capsys, "demo", "--import-only", "--db", db_path)[0] == 0
    code, out, err = paw(capsys, "study", "--dataset", "demo", "--models", "default",
                         "--targets", "gender_swap,control_recall,control_precision",
                         "--limit", "3", "--samples", "2", "--max-tokens", "16",
                         "--db", db_path)
    assert code == 0, err
    name = out.split("study ", 1)[1].split(" ", 1)[0]
    code, out, err = paw(capsys, "report", "--study", name, "--n-boot", "100", "--out",
                         str(tmp_path / "study.json"), "--db", db_path)
    assert code == 0, err
    payload = json.loads((tmp_path / "study.json").read_text())
    assert {"table6", "table7"} <= set(payload["tables"])
    checks = {row["check"] for row in payload["tables"]["table6"]["rows"]}
    assert checks <= {"Recall", "Precision"} and checks


@pytest.fixture
def make_engine_for_path():
    """Runs a fake-backend study into the on-disk store at a path; returns (db, name)."""
    from tests.builders import AuditBuilder
    from tests.counterfactual.conftest import STEMS, fake_responder
    from workbench.engine import AuditEngine
    from workbench.counterfactual import StudySpec, resolve_targets, run_study
    from workbench.models.fake import FakeBackend
    from workbench.models.prompts import PLAIN_CHAT_TEMPLATE

    def run(path: str):
        db = open_db(path)
        from store.models import add_model

        add_model(db, name="fake", path="/nowhere/fake.gguf", sha256="f" * 64,
                  chat_template=PLAIN_CHAT_TEMPLATE)
        builder = AuditBuilder(db, dataset="triage")
        for key, stem in STEMS.items():
            builder.item(f"t-{key}", gold="Yes", kind="binary", question=stem,
                         options={"Yes": "Yes", "No": "No"})
        spec = StudySpec(dataset="triage", models=("fake",), paraphraser="fake",
                         targets=resolve_targets("gender_swap"))
        engine = AuditEngine(db, backend_factory=lambda m: FakeBackend(fake_responder))
        return db, run_study(db, spec, engine=engine).study

    return run
