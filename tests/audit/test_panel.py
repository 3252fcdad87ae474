"""The cross-dataset panel (seed 002 Tables 3, 5, 6, 11 and §6) over hand-built audits."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from click.testing import CliRunner

from analysis.common.bootstrap import resample_weights
from analysis.audit.panel import compute_panel, model_mean, model_pooled_cell
from analysis.audit.panel_report import build_panel_report
from store import open_db
from store.errors import UserError
from tests.builders import AuditBuilder


def _cell(b: AuditBuilder, arm: int, items: list[int], bases: list[str],
          edits: list[tuple[str, str]]) -> None:
    """Baselines, one M5 edit per (answer, chain) in `edits` and an F2 chain deletion with
    the same answer, one M3 and one F4 (P, kept) per item: AFR_D and AFR_P, hence FCS, are
    the same under both readings (F: F2 and F4; F+M: M5, F2 and M3, F4)."""
    for q, base in zip(items, bases):
        b.baseline(arm, q, answer=base)
        b.perturbed(arm, q, operator_id="M3_distractor_a", intent="P", answer=base)
        b.perturbed(arm, q, operator_id="F4_insert_a", intent="P", answer=base)
    for q, (answer, chain) in zip(items, edits):
        b.perturbed(arm, q, operator_id="M5_severity_a", intent="D", answer=answer,
                    output=chain, old="acute", new="chronic")
        b.perturbed(arm, q, operator_id="F2_delete_a", intent="D", answer=answer)


def build_panel(db) -> tuple[dict[str, int], dict[str, int]]:
    """Two audits (datasets medqa, mmlu) × two models; returns the arm ids per audit."""
    a = AuditBuilder(db, dataset="medqa", audit="a-medqa")
    q1, q2 = a.item("q1"), a.item("q2")
    arms_a = {"m1": a.arm("m1/cot"), "m2": a.arm("m2/cot")}
    # m1 on medqa: Acc 1/2; M5 on q1 kept, chain silent -> cell (c); AFR_D 0/1, FCS 0.5
    _cell(a, arms_a["m1"], [q1, q2], ["A", "B"], [("A", "acute onset")])
    # m2 on medqa: Acc 1; M5 on q1 flips, chain silent -> (d); AFR_D 1/1, FCS 1.0
    _cell(a, arms_a["m2"], [q1, q2], ["A", "A"], [("B", "no word of it")])
    b = AuditBuilder(db, dataset="mmlu", audit="a-mmlu")
    r1, r2, r3 = b.item("r1"), b.item("r2"), b.item("r3")
    arms_b = {"m1": b.arm("m1/cot"), "m2": b.arm("m2/cot")}
    # m1 on mmlu: Acc 1; M5: r1 kept + "chronic" -> (a), r2 kept silent -> (c),
    # r3 flipped silent -> (d); AFR_D 1/3, FCS 0.5 + 1/6 = 2/3
    _cell(b, arms_b["m1"], [r1, r2, r3], ["A", "A", "A"],
          [("A", "a chronic course"), ("A", "acute"), ("C", "acute")])
    # m2 on mmlu: Acc 2/3; M5 on r1 kept silent -> (c); FCS 0.5
    _cell(b, arms_b["m2"], [r1, r2, r3], ["A", "A", "B"], [("A", "acute")])
    return arms_a, arms_b


def test_table3_is_the_mean_over_datasets_and_cdr_is_pooled(db):
    """Table 3 "summarises the panel at the model level (4-dataset mean)"; its CDR is "the
    no-update/no-flip cell of the joint table (Appendix C)", whose rows "pool the four
    medical datasets" (Table 6)."""
    arms_a, arms_b = build_panel(db)
    panel = compute_panel(db, "a-medqa,a-mmlu", n_boot=200, seed=3)
    assert panel.models == ["m1/cot", "m2/cot"] and panel.datasets == ["medqa", "mmlu"]
    # m1: Acc = mean(1/2, 1) = 3/4 (pooling the 5 items would give 4/5)
    assert model_mean(panel, "m1/cot", "acc").point == pytest.approx(3 / 4)
    # m2: Acc = mean(1, 2/3) = 5/6
    assert model_mean(panel, "m2/cot", "acc").point == pytest.approx(5 / 6)
    # m1: CDR pooled = (1 + 1) / (1 + 3) = 1/2 (the mean of cells would be 2/3)
    assert model_pooled_cell(panel, "m1/cot", "c").point == pytest.approx(1 / 2)
    # m2: CDR pooled = (0 + 1) / (1 + 1) = 1/2
    assert model_pooled_cell(panel, "m2/cot", "c").point == pytest.approx(1 / 2)
    # FCS: m1 mean(0.5, 2/3) = 7/12; m2 mean(1.0, 0.5) = 3/4 (both readings), exactly.
    for name in ("fcs", "fcs_fm"):
        assert model_mean(panel, "m1/cot", name).exact == Fraction(7, 12)
        assert model_mean(panel, "m2/cot", name).exact == Fraction(3, 4)
    # The CI of a mean over datasets averages the cells' replicates: each cell resampled
    # its own items with seed [3, arm_id], so this is a bootstrap stratified by dataset.
    w_a = resample_weights(2, 200, [3, arms_a["m1"]])
    w_b = resample_weights(3, 200, [3, arms_b["m1"]])
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = ((w_a @ [1.0, 0.0]) / w_a.sum(axis=1) + (w_b @ [1.0, 1, 1]) / w_b.sum(axis=1)) / 2
    est = model_mean(panel, "m1/cot", "acc").estimate()
    assert (est.low, est.high) == (pytest.approx(np.percentile(reps, 2.5)),
                                   pytest.approx(np.percentile(reps, 97.5)))
    # The pooled CDR's replicates add the cells' replicate counts (edits on q1; r1..r3).
    num = w_a @ [1.0, 0] + w_b @ [0.0, 1, 0]
    den = w_a @ [1.0, 0] + w_b @ [1.0, 1, 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)
    est = model_pooled_cell(panel, "m1/cot", "c").estimate()
    assert (est.low, est.high) == (pytest.approx(np.nanpercentile(reps, 2.5)),
                                   pytest.approx(np.nanpercentile(reps, 97.5)))


def test_panel_tables_5_6_11_and_overview(db):
    build_panel(db)
    report = build_panel_report(db, ["a-medqa", "a-mmlu"], n_boot=50)
    table5 = report.section("panel_fcs_cells").frame
    assert table5.loc["m1/cot", "medqa"] == pytest.approx(0.5)
    assert table5.loc["m1/cot", "mmlu"] == pytest.approx(2 / 3)
    assert table5.loc["m1/cot", "Mean"] == pytest.approx(7 / 12)
    table6 = report.section("panel_joint").frame
    # m1 pooled: a 1, c 2, d 1 of 4 edits; Panel: c = (2 + 1) / 6 = 50 %
    assert table6.loc["m1/cot", "n"] == 4
    assert table6.loc["m1/cot", "(a) upd, keep"] == pytest.approx(25.0)
    assert table6.loc["m1/cot", "(c) no upd, keep"] == pytest.approx(50.0)
    assert table6.loc["Panel", "n"] == 6
    assert table6.loc["Panel", "(c) no upd, keep"] == pytest.approx(50.0)
    table11 = report.section("panel_families").frame
    # M5 flips pooled over datasets: m1 1/4, m2 1/2; M3 never flipped; F-block never ran
    assert table11.loc["M5 severity", "m1/cot"] == pytest.approx(1 / 4)
    assert table11.loc["M5 severity", "m2/cot"] == pytest.approx(1 / 2)
    assert table11.loc["M3 distractor", "m1/cot"] == 0.0
    assert math.isnan(table11.loc["F1 truncate", "m1/cot"])
    overview = report.section("panel_overview").frame
    assert overview.loc["CDR, panel-wide (%)", "value"] == pytest.approx(50.0)
    # cell FCS 0.5, 2/3, 1.0, 0.5: two in the corridor [0.45, 0.55]
    assert overview.loc["cells with FCS in [0.45, 0.55]", "detail"] == "2/4 cells"
    data = json.loads(report.to_json())
    assert data["meta"]["kind"] == "panel" and len(data["meta"]["audit_ids"]) == 2
    assert "robust_chs_weights" in data["tables"]
    # The header gives every audit's arms' unparsed share beside the paper's ≤ 3 %.
    shares = data["meta"]["unparsed answers"]
    assert shares.startswith("a-medqa m1/cot: ") and "a-mmlu m2/cot: " in shares
    assert "(paper ≤ 3 %" in shares


def test_a_cell_listed_twice_is_a_user_error(db):
    build_panel(db)
    again = AuditBuilder(db, dataset="medqa", audit="a-medqa-again")
    again.arm("m1/cot")
    with pytest.raises(UserError, match="m1/cot.*medqa"):
        compute_panel(db, "a-medqa,a-medqa-again", n_boot=0)
    with pytest.raises(UserError, match="twice"):
        compute_panel(db, "a-medqa,1", n_boot=0)


def test_paw_report_panel(db_path, tmp_path):
    from workbench.cli import cli

    db = open_db(db_path)
    build_panel(db)
    db.conn.close()
    out = tmp_path / "panel.md"
    result = CliRunner().invoke(cli, ["report", "--db", db_path, "--panel", "all",
                                      "--out", str(out), "--n-boot", "20"])
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    for title in ("Table 3 (panel)", "Table 5: per-cell FCS", "Table 6 (panel)",
                  "Table 11 (panel)", "§6 panel summary", "Table 10"):
        assert title in text
    result = CliRunner().invoke(cli, ["report", "--db", db_path, "--panel", "a-medqa",
                                      "--audit", "a-mmlu"])
    assert result.exit_code != 0 and "not several" in result.output


def test_table8_sign_and_mean_rows(db):
    """Table 8 (GPT-4o-mini): rows per dataset, Δ = shuffled − original (76.5 → 32.0 is
    −44.5), and a Mean row over the datasets (77.3 → 38.5: −38.8)."""
    options = {"A": "Aspirin", "B": "Heparin", "C": "Warfarin", "D": "Clopidogrel"}
    shuffled = {"A": "Heparin", "B": "Aspirin", "C": "Warfarin", "D": "Clopidogrel"}
    for dataset, answers in (("medqa", ("B", "A")), ("mmlu", ("A", "A"))):
        b = AuditBuilder(db, dataset=dataset, audit=f"s-{dataset}")
        arm = b.arm("m/cot")
        for i, answer in enumerate(answers):
            q = b.item(f"{dataset}{i}", gold="A", options=options)
            b.baseline(arm, q, answer="A")  # original accuracy 100 %
            b.perturbed(arm, q, operator_id="option_shuffle", family="shuffle", answer=answer,
                        options=shuffled, gold="B")  # remapped gold: B
    # medqa: shuffled answers B (right), A (wrong) -> 50 %, Δ = 50 − 100 = −50 pp;
    # mmlu: A, A -> 0 %, Δ = −100 pp; Mean: Δ = (−50 − 100) / 2 = −75 pp.
    table = build_panel_report(db, "all", n_boot=20).section("panel_shuffle").frame
    assert table.loc["m/cot · medqa", "delta_pp"] == pytest.approx(-50.0)
    assert table.loc["m/cot · mmlu", "delta_pp"] == pytest.approx(-100.0)
    assert table.loc["m/cot · Mean", "delta_pp"] == pytest.approx(-75.0)
    assert table.loc["m/cot · Mean", "acc_shuffled_pct"] == pytest.approx(25.0)
    # One audit with two arms: Table 8's Mean row averages the arms.
    from analysis.audit.tables import audit_tables

    b = AuditBuilder(db, dataset="medqa", audit="two-arms")
    arms = [b.arm("x/cot"), b.arm("y/cot")]
    q = b.item("medqa0", gold="A", options=options)
    for arm, answer in zip(arms, ("B", "A")):
        b.baseline(arm, q, answer="A")
        b.perturbed(arm, q, operator_id="option_shuffle", family="shuffle", answer=answer,
                    options=shuffled, gold="B")
    single = audit_tables(db, "two-arms", n_boot=20)["shuffle"]
    # x: shuffled answer right (B) -> Δ = 100 − 100 = 0; y: wrong -> −100; Mean −50.
    assert single.loc["x/cot", "delta_pp"] == pytest.approx(0.0)
    assert single.loc["y/cot", "delta_pp"] == pytest.approx(-100.0)
    assert single.loc["Mean", "delta_pp"] == pytest.approx(-50.0)
