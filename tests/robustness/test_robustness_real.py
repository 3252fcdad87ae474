"""A tiny real robustness run: the embedded SmolLM2-135M answers, proposes and judges, the
paper's embedder (all-MiniLM-L6-v2 when installed, else the TF-IDF fallback) embeds.

Run once per module through the real CLI (`paw robustness`, then `paw report`) on an
on-disk store: two demo vignettes, all six prefixes, short budgets. A 135M model's answers
and verdicts say nothing clinical; the tests check that every stage stored what it should,
that every profile number is in its range, and that running again generates nothing.
"""

from __future__ import annotations

import contextlib
import io
import json
import math

import pytest

from analysis.robustness.data import load_robustness
from analysis.robustness.profiles import compute_profiles
from store.db import open_db
from store.jobs import list_audits, list_jobs
from workbench.cli import main
from workbench.datasets.demo import import_demo

pytestmark = pytest.mark.model

ITEMS = "demo-003,demo-001"
ARGS = ["robustness", "--dataset", "demo", "--items", ITEMS, "--max-tokens", "32",
        "--cfv-max-tokens", "96", "--judge-max-tokens", "40"]


def _paw(args: list[str], capsys) -> str:
    try:
        main(args)
    except SystemExit as exc:  # main exits only on errors
        raise AssertionError(f"paw {' '.join(args)} exited {exc.code}: "
                             f"{capsys.readouterr().err}") from None
    return capsys.readouterr().out


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """(db path, first run's stdout) after one real run through the CLI."""
    path = tmp_path_factory.mktemp("robustness") / "paw.db"
    db = open_db(path, create=True)
    import_demo(db)
    db.conn.close()
    out = io.StringIO()  # capsys is per test; this fixture runs once per module
    with contextlib.redirect_stdout(out):
        main([*ARGS, "--db", str(path)])
    return path, out.getvalue()


def test_every_stage_stored(store) -> None:
    path, printed = store
    db = open_db(path)
    (audit,) = list_audits(db, kind="robustness")
    assert f"robustness {audit.name}:" in printed and "EDD embedder:" in printed
    jobs = list_jobs(db, audit.id)
    roles = {j.role for j in jobs}
    assert {"baseline", "demographic", "cfv_propose", "judge_flags"} <= roles
    assert {j.status for j in jobs} <= {"done", "not_fired"}
    assert sum(j.role == "demographic" for j in jobs) == 12  # 2 items x 6 prefixes
    # One CFV attempt per item: re-answered, or a format failure (variant not fired).
    assert sum(j.role == "cfv_answer" for j in jobs) == 2
    # Every judge job has a stored verdict (parsed or 'unparsed'), none silently lost.
    judged = db.execute(
        "SELECT COUNT(*) FROM jobs j JOIN generations g ON g.key = j.generation_key "
        "JOIN judgements jd ON jd.judge_generation_id = g.id WHERE j.audit_id = ? "
        "AND j.role LIKE 'judge_%'", [audit.id]).fetchone()[0]
    assert judged == sum(j.role.startswith("judge_") for j in jobs) > 0
    # The seven explanations of each question have a vector of the run's embedder.
    assert audit.config["embedder"] in ("minilm", "tfidf")
    assert f"EDD embedder: {audit.config['embedder']}" in printed


def test_every_profile_number_in_range(store) -> None:
    path, _ = store
    db = open_db(path)
    data = load_robustness(db)
    p = compute_profiles(data, n_boot=50, seed=0)
    (arm,) = p.arms
    # Shares lie in [0, 1]; flags per question in [0, 6] (at most one flag per prefix is
    # not a rule, but 40 tokens hold at most a few flag lines per explanation).
    for name, e in arm.estimates.items():
        if name == "edd":
            continue
        top = 1.0 if not name.startswith("flags_") else 6.0 * 3
        if e.n == 0:
            assert math.isnan(e.value), name
        else:
            assert 0.0 <= e.low <= e.value <= e.high <= top, (name, e)
    edd = arm.estimates["edd"]
    assert edd.n == 2  # both questions have their seven explanations embedded
    assert 0.0 <= edd.low <= edd.value <= edd.high <= 2.0
    attempts = p.attempts
    assert set(attempts["state"]) <= {"scored", "unjudged"}
    assert set(attempts["outcome"].dropna()) <= {"valid", "same_direction", "too_dramatic",
                                                 "circular", "format_failure"}


def test_rerun_generates_nothing(store, capsys) -> None:
    path, _ = store
    out = _paw([*ARGS, "--db", str(path)], capsys)
    assert "0 new generation(s), 0 new verdict(s), 0 new embedding(s)" in out


def test_report_through_the_cli(store, capsys, tmp_path) -> None:
    path, _ = store
    target = tmp_path / "rob.md"
    out = _paw(["report", "--robustness", "1", "--out", str(target), "--n-boot", "50",
                "--db", str(path)], capsys)
    assert "wrote" in out and target.is_file()
    text = target.read_text()
    assert "Table 5: model profiles" in text and "Figure 5" in text
    assert (tmp_path / "rob_directions.png").is_file()
    assert (tmp_path / "rob_flag_categories.png").is_file()
    js = json.loads(_paw(["report", "--robustness", "1", "--format", "json", "--n-boot", "0",
                          "--db", str(path)], capsys))
    assert js


def test_units_flips_and_export_of_the_real_run(store, capsys, tmp_path) -> None:
    """On the real run: every verdict is read through its own unit, the clinician set holds
    one case per judge decision, and the run is in `paw flips` and `paw export`."""
    from analysis.exports import ROBUSTNESS_EDIT_COLUMNS
    from annotate.sets.audit import create_set
    from annotate.sets.robustness import verdict_units

    path, _ = store
    db = open_db(path)
    data = load_robustness(db)
    v = data.verdicts
    assert not v.duplicated(["role", "arm_id", "item_id", "variant_id"]).any()
    answers = data.answers.set_index(["arm_id", "item_id", "variant_id"])
    for r in v[v["role"] != "judge_cfv"].itertuples():
        assert answers.loc[(r.arm_id, r.item_id, r.variant_id), "generation_id"] == \
            r.subject_generation_id
    units = verdict_units(db, int(data.audit["id"]))
    the_set = create_set(db, int(data.audit["id"]), 500, seed=0, name="real-units")
    decisions = {(u["test"], u["decision"]) for u in units}
    assert sum(the_set.strata.values()) == len(decisions)
    n = db.execute("SELECT COUNT(DISTINCT stratum || '/' || variant_id || '/' || "
                   "perturbed_generation_id) FROM annotation_cases WHERE set_id = ?",
                   [the_set.id]).fetchone()[0]
    assert n == len(decisions)  # each case its own unit
    out = _paw(["flips", "--audit", "1", "--all", "--json", "--db", str(path)], capsys)
    listed = json.loads(out)
    done = int((data.answers["role"] == "demographic").sum())
    assert listed["total"] <= done + 2 and {r["block"] for r in listed["rows"]} <= {
        "demographic", "CFV"}
    out = _paw(["export", "--audit", "1", "--format", "csv", "--out", str(tmp_path),
                "--db", str(path)], capsys)
    assert "-edits.csv (14 rows)" in out and "-wide.csv (2 rows)" in out
    import pandas as pd

    long = pd.read_csv(next(tmp_path.glob("*-edits.csv")))
    assert tuple(long.columns) == ROBUSTNESS_EDIT_COLUMNS
    assert long["edd_embedder"].notna().all()


def test_a_set_is_drawn_from_the_real_run(store, tmp_path) -> None:
    # Issue 35, criterion 5: the embedded 135M judge's replies often do not parse; a set is
    # drawn anyway, and its config counts what lacked a verdict (a copy of the store: the
    # other tests read the run without a set).
    import sqlite3

    from annotate.sets.audit import create_set

    path, _ = store
    copy = tmp_path / "copy.db"
    source, target = sqlite3.connect(path), sqlite3.connect(copy)
    source.backup(target)  # the WAL's pages included
    source.close()
    target.close()
    db = open_db(copy)
    (audit,) = list_audits(db, kind="robustness")
    the_set = create_set(db, audit.id, 20, seed=0)
    config = json.loads(db.execute("SELECT config_json FROM annotation_sets WHERE id = ?",
                                   [the_set.id]).fetchone()[0])
    assert the_set.size >= 1 and set(config["unparsed"]) == {"cfv", "direction", "flags"}
    unjudged = db.execute("SELECT COUNT(*) FROM annotation_cases WHERE set_id = ? AND "
                          "stratum LIKE 'cfv|%'", [the_set.id]).fetchone()[0]
    assert config["n_unjudged_drawn"] <= unjudged
    print(f"real run: {the_set.size} cases, unparsed {config['unparsed']}, "
          f"unjudged CFV drawn {config['n_unjudged_drawn']}")
