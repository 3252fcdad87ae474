"""A whole audit with the real embedded SmolLM2-135M: a two-arm panel on three demo items.

One audit is run once per module (a few minutes on 2 cores): the embedded model under two
prompt templates (a panel of two), one or more operators of every block, M2/M4/M5 for the
joint table and the judge, greedy and short. The tests then check the stored audit and
every report table, and that running it again generates nothing.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from analysis.audit.tables import TABLE_KEYS, audit_tables

from analysis.audit.report import AuditReportOptions, build_report
from store.db import open_db
from store.generations import get_generation_by_id
from store.jobs import list_jobs
from workbench.audit import AuditSpec, run_audit
from workbench.engine import AuditEngine
from workbench.perturb import resolve_operators
from workbench.engine.variants import get_variant
from workbench.datasets.demo import import_demo

ITEMS = ("demo-003", "demo-001", "triage-001")
"""demo-003 fires every M operator; demo-001 has no severity word (M5 does not fire);
triage-001 is yes/no (the option shuffle does not fire)."""

OPERATORS = ("F1_truncate_50,F2_delete_a,F4_insert_a,M2_sex,M3_distractor_a,M4_negation_a,"
             "M5_severity_a,shuffle")

N_BOOT = 50


def _spec() -> AuditSpec:
    return AuditSpec(dataset="demo", models=("default",),
                     templates=("neutral_cot@1", "strict_medical@1"),
                     operators=resolve_operators(OPERATORS), item_ids=ITEMS, max_tokens=64)


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    """(db, outcome) of the audit, run once for the module on an on-disk store."""
    path = tmp_path_factory.mktemp("audit") / "paw.db"
    db = open_db(path)
    import_demo(db)
    outcome = run_audit(db, _spec(), engine=AuditEngine(db))
    return db, outcome


@pytest.fixture(scope="module")
def tables(audited):
    db, outcome = audited
    return audit_tables(db, outcome.audit, n_boot=N_BOOT)


def _count(db, sql: str, params=()) -> int:
    return db.execute(sql, params).fetchone()[0]


def test_audit_finished_with_every_block(audited) -> None:
    db, outcome = audited
    assert not outcome.stopped
    assert set(outcome.job_counts) <= {"done", "not_fired"}
    roles = {r[0] for r in db.execute("SELECT DISTINCT role FROM jobs WHERE audit_id = ? AND "
                                      "status = 'done'", [outcome.audit_id])}
    assert roles == {"baseline", "direct", "m_block", "f_block", "shuffle"}


def test_rerun_generates_nothing_new(audited) -> None:
    db, outcome = audited
    before = _count(db, "SELECT COUNT(*) FROM generations")
    judged = _count(db, "SELECT COUNT(*) FROM judgements")
    again = run_audit(db, _spec(), engine=AuditEngine(db))
    assert again.audit_id == outcome.audit_id
    assert again.generated == 0
    assert _count(db, "SELECT COUNT(*) FROM generations") == before
    assert _count(db, "SELECT COUNT(*) FROM judgements") == judged
    assert again.job_counts == outcome.job_counts


def test_not_fired_variants_have_jobs_but_no_generation(audited, tables) -> None:
    db, outcome = audited
    rows = db.execute(
        "SELECT i.source_id, v.operator_id, j.status, j.generation_key, "
        "(SELECT COUNT(*) FROM generations g WHERE g.variant_id = v.id) "
        "FROM jobs j JOIN variants v ON v.id = j.variant_id JOIN items i ON i.id = j.item_id "
        "WHERE j.audit_id = ? AND v.fired = 0", [outcome.audit_id]).fetchall()
    found = {(r[0], r[1]) for r in rows}
    assert ("demo-001", "M5_severity_a") in found
    assert ("triage-001", "option_shuffle") in found
    assert all(r[2] == "not_fired" and r[3] is None and r[4] == 0 for r in rows)
    firing = tables["firing"]
    shuffle = firing[firing["operator"] == "option_shuffle"]
    # 3 items x 2 arms planned; the yes/no item's 2 jobs did not fire, nor enter any rate.
    assert shuffle["planned"].sum() == 6 and shuffle["fired"].sum() == 4
    assert (firing["used"] <= firing["generated"]).all()
    assert (firing["generated"] <= firing["fired"]).all()
    assert (firing["fired"] <= firing["planned"]).all()


def test_panel_of_two_templates(audited, tables) -> None:
    db, outcome = audited
    arms = [r[0] for r in db.execute("SELECT label FROM arms WHERE audit_id = ? ORDER BY id",
                                     [outcome.audit_id])]
    assert arms == ["default/neutral_cot@1", "default/strict_medical@1"]
    assert list(tables["summary"].index) == arms
    baselines = list_jobs(db, outcome.audit_id, role="baseline", status="done")
    assert len(baselines) == 6
    # Different system prompts: six distinct baseline generations, so each arm's F-block
    # edits its own chains.
    assert len({j.generation_key for j in baselines}) == 6
    sources = {r[0] for r in db.execute(
        "SELECT DISTINCT v.source_generation_id FROM jobs j JOIN variants v ON v.id = "
        "j.variant_id WHERE j.audit_id = ? AND j.role = 'f_block'", [outcome.audit_id])}
    baseline_ids = {r[0] for r in db.execute(
        "SELECT g.id FROM jobs j JOIN generations g ON g.key = j.generation_key "
        "WHERE j.audit_id = ? AND j.role = 'baseline'", [outcome.audit_id])}
    assert sources == baseline_ids


def test_f1_continues_from_the_baselines_own_tokens(audited) -> None:
    db, outcome = audited
    checked = 0
    for job in list_jobs(db, outcome.audit_id, role="f_block", status="done"):
        variant = get_variant(db, job.variant_id)
        ids = variant.details.get("prefix_token_ids")
        if variant.operator_id != "F1_truncate_50" or ids is None:
            continue
        baseline = get_generation_by_id(db, variant.source_generation_id)
        assert list(baseline.output_token_ids[:len(ids)]) == ids
        assert baseline.output.startswith(variant.text)
        continued = db.execute("SELECT prefix, prefix_token_ids_json FROM generations "
                               "WHERE key = ?", [job.generation_key]).fetchone()
        assert continued[0] == variant.text and continued[1] == str(ids).replace(" ", "")
        checked += 1
    assert checked > 0


def test_judge_verdicts_stored(audited, tables) -> None:
    db, outcome = audited
    subjects = _count(db, (
        "SELECT COUNT(DISTINCT g.id) FROM jobs j JOIN variants v ON v.id = j.variant_id "
        "JOIN generations g ON g.key = j.generation_key WHERE j.audit_id = ? AND "
        "j.status = 'done' AND v.fired = 1 AND v.family IN ('M2', 'M4', 'M5')"),
        [outcome.audit_id])
    rows = db.execute(
        "SELECT ju.method, ju.verdict, g.mode FROM judgements ju "
        "JOIN generations g ON g.id = ju.judge_generation_id").fetchall()
    assert subjects > 0 and len(rows) == subjects
    assert {r[0] for r in rows} == {"llm_judge:default"}
    assert {r[1] for r in rows} <= {"yes", "no"}
    assert {r[2] for r in rows} == {"judge"}
    assert "cdr_judge" in tables["summary"].columns


# ---- every table present, every number within its definition's range -------------------

UNIT = {"acc", "cdr", "cdr_judge", "afr_d", "afr_p", "fcs", "ecr", "chs", "dfg", "mfc", "afr",
        "afr_d_fm", "afr_p_fm", "fcs_fm", "mfc_fm"}
"""Columns whose values are rates or composites in [0, 1] (CHS: weights ≤ 1; MFC and FCS:
convex combinations of [0, 1] quantities)."""


def _bounds(table: str, column: str) -> tuple[float, float] | None:
    if column.endswith("_n"):
        return (0.0, math.inf)  # the count behind a rate
    base = column.removesuffix("_low").removesuffix("_high")
    if table == "families":
        return (0.0, 1.0)  # flip rates
    if base in UNIT or base.startswith("acc["):
        return (0.0, 1.0)
    if base.endswith("_pct") or base.startswith("cdr_judge_pct") or base.startswith("("):
        return (0.0, 100.0)  # percentages (Table 6 cells are titled '(a) …' etc.)
    if base.endswith("_pp"):
        return (-100.0, 100.0)  # differences of two percentages
    if base.startswith("n") or base in ("planned", "fired", "generated", "used", "unparsed",
                                        "baseline_unparsed"):
        return (0.0, math.inf)  # counts
    return None


def test_every_table_present_and_in_range(tables) -> None:
    assert tuple(tables) == TABLE_KEYS
    numbers = 0
    for name, frame in tables.items():
        assert not frame.empty, name
        for column in frame.columns:
            bounds = _bounds(name, str(column))
            values = frame[column]
            if bounds is None:
                continue
            for value in values:
                if value is None or (isinstance(value, float) and math.isnan(value)):
                    continue  # undefined ('–'): nothing fired or parsed for it
                assert bounds[0] <= float(value) <= bounds[1], (name, column, value)
                numbers += 1
        for column in frame.columns:
            low, high = f"{column}_low", f"{column}_high"
            if low in frame.columns and high in frame.columns:
                for lo, hi in zip(frame[low], frame[high]):
                    if not (math.isnan(lo) or math.isnan(hi)):
                        assert lo <= hi, (name, column)
    assert numbers > 50  # the check saw real numbers, not only undefined cells
    summary = tables["summary"]
    defined = summary["acc"].notna().sum()
    assert defined >= 1  # at least one arm parsed some baselines
    from analysis.common.rounding import rounded

    for reading in ("", "_fm"):
        for value, in_corridor in zip(summary[f"fcs{reading}"],
                                      summary[f"fcs_in_corridor{reading}"]):
            if not math.isnan(value):  # decided on FCS as printed (two decimals)
                assert in_corridor == (0.45 <= float(rounded(value, 2)) <= 0.55)
    joint = tables["joint"]
    cells = [c for c in joint.columns
             if str(c).startswith("(") and not str(c).endswith(("_low", "_high", "_n"))]
    assert len(cells) == 4
    for _, row in joint.iterrows():
        if row["n"] > 0:
            assert abs(sum(row[c] for c in cells) - 100.0) < 1e-6


def test_report_writes_markdown_and_png(audited, tmp_path) -> None:
    db, outcome = audited
    report = build_report(db, outcome.audit, options=AuditReportOptions(n_boot=N_BOOT))
    written, pngs = report.write(tmp_path / "report.md", "md")
    text = Path(written).read_text(encoding="utf-8")
    for title in ("Table 3", "Table 4", "Table 6", "Table 11"):
        assert title in text
    assert len(pngs) == 3  # Figures 2a, 2b, 4
    assert all(Path(png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for png in pngs)
    # The embedded model's parameter count reached Figure 4's data (GGUF header).
    params = report.section("fcs_params").frame
    assert set(params["n_params"]) == {134_515_008}
