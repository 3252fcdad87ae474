"""Seed 002 Appendix G robustness analyses (Table 10, MFC sweep, correlations, leave-one-outs)
and Table 9, on hand-built audits."""

from __future__ import annotations

import math

import pytest
from scipy.stats import kendalltau

from analysis.audit.report import AuditReportOptions, build_report

from analysis.audit.tables import compute_audit

from analysis.audit.frames import load_audit
from analysis.audit.appendix_g import (
    chs_sensitivity_table,
    mfc_sensitivity_table,
    pearson,
    summary_table,
    template_table,
    units_of_audit,
)
from tests.builders import AuditBuilder

MENINGITIS = {"A": "Bacterial meningitis", "B": "Tension headache", "C": "Migraine",
              "D": "Subarachnoid hemorrhage"}


def _three_arms(db) -> None:
    """Three arms whose CHS ranking depends on the weights (worked out in the test)."""
    b = AuditBuilder(db)
    q1, q2 = b.item("q1", options=MENINGITIS), b.item("q2", options=MENINGITIS)
    plan = {  # arm: (baselines q1, q2), (M5 answers q1, q2), baseline chain
        "a1/cot": (("A", "B"), ("B", "B"), "one two"),              # miss + keep
        "a2/cot": (("B", "C"), ("D", "A"), "one two three four"),  # two false alarms
        "a3/cot": (("B", "B"), ("C", "B"), "a b c d e f"),          # benign flip + keep
    }
    for label, (bases, answers, chain) in plan.items():
        arm = b.arm(label)
        for q, base, answer in zip((q1, q2), bases, answers):
            b.baseline(arm, q, answer=base, output=chain)
            b.perturbed(arm, q, operator_id="M5_severity_a", intent="D", answer=answer,
                        new="chronic")


def test_table10_kendall_tau_per_hazard_scheme(db):
    """Table 10: "Kendall-τ vs. the default ranking" for each of the six schemes
    (w_miss, w_fa, w_nf) = (1.0,0.3,0.5), (1.5,0.3,0.5), (0.7,0.3,0.5), (1.0,0.6,0.5),
    (1.0,0.3,0.8), (1.0,0.5,0.5)."""
    _three_arms(db)
    units = units_of_audit(compute_audit(load_audit(db), n_boot=0))
    table, n = chs_sensitivity_table(units)
    assert n == 3
    # CHS = Σ weights / 2 edits. Default: a1 1.0/2 = 0.5, a2 2·0.3/2 = 0.3, a3 0.5/2 = 0.25
    # doubled miss: 0.75, 0.3, 0.25 — same order, τ = 1; softer miss: 0.35, 0.3, 0.25, τ = 1
    # doubled FA: 0.5, 0.6, 0.25 — pair (a1, a2) discordant: τ = (2 − 1) / 3 = 1/3
    # heavier benign: 0.5, 0.3, 0.4 — pair (a2, a3) discordant: τ = 1/3
    # equalised: 0.5, 0.5, 0.25 — a1/a2 tied in one ranking: τ_b = 2 / √(3·2) = 0.8165
    expected = {"default": 1.0, "doubled miss": 1.0, "softer miss": 1.0,
                "doubled FA": 1 / 3, "heavier benign": 1 / 3, "equalised": 2 / math.sqrt(6)}
    for scheme, tau in expected.items():
        assert table.loc[scheme, "kendall_tau"] == pytest.approx(tau), scheme
    # scipy's τ-b on the same vectors agrees (the module calls it; this checks the input).
    assert kendalltau([0.5, 0.3, 0.25], [0.5, 0.5, 0.25]).statistic == pytest.approx(
        2 / math.sqrt(6))
    summary = summary_table(units, table, mfc_sensitivity_table(units)[0])
    assert summary.loc["CHS weights: min Kendall τ over the 5 other schemes",
                       "value"] == pytest.approx(1 / 3)


def test_chain_length_correlation_across_cells(db):
    """Appendix G: "Pearson correlations of mean baseline-chain length with cell metrics"."""
    _three_arms(db)
    units = units_of_audit(compute_audit(load_audit(db), n_boot=0))
    summary = summary_table(units, *[t[0] for t in (chs_sensitivity_table(units),
                                                      mfc_sensitivity_table(units))])
    # chain words x = (2, 4, 6), CHS y = (0.5, 0.3, 0.25): dx = (−2, 0, 2),
    # dy = (0.15, −0.05, −0.1); Σdxdy = −0.5, Σdx² = 8, Σdy² = 0.035;
    # r = −0.5 / √(8 · 0.035) = −0.9449
    row = summary.loc["chain length vs CHS across cells: Pearson r"]
    assert row["value"] == pytest.approx(-0.5 / math.sqrt(0.28))
    assert row["n"] == 3 and 0 < row["p_value"] < 1
    # FCS is undefined (no preserving edit): the correlation says '–', it does not crash.
    assert math.isnan(summary.loc["chain length vs FCS across cells: Pearson r", "value"])


def test_fewer_than_three_arms_gives_a_note_not_a_number(db):
    b = AuditBuilder(db)
    arm = b.arm("m/cot")
    q = b.item("q1")
    b.baseline(arm, q, answer="A")
    b.perturbed(arm, q, operator_id="M5_severity_a", intent="D", answer="B", new="chronic")
    report = build_report(db, options=AuditReportOptions(n_boot=10))
    table10 = report.section("robust_chs_weights")
    assert table10.frame["kendall_tau"].isna().all()
    assert "Needs ≥ 3 arms" in table10.note and "this report has 1" in table10.note
    assert "Needs ≥ 2 prompt templates" in report.section("robust_templates").note
    # Two points always give r = ±1: below three the module reports NaN with n.
    r, p, n = pearson([1.0, 2.0], [3.0, 5.0])
    assert math.isnan(r) and math.isnan(p) and n == 2
    # An audit with no arms at all renders too.
    AuditBuilder(db, audit="empty")
    assert "Table 10" in build_report(db, options=AuditReportOptions(n_boot=10)).to_markdown()


def test_f4_leave_one_out_and_template_table(db):
    """Appendix G: "Removing F4 (the preserving operator) from the F-block Δ average
    shifts the panel-wide median by about 0.1 p"; Table 9 compares prompt templates."""
    b = AuditBuilder(db)
    q1, q2 = b.item("q1", gold="A"), b.item("q2", gold="A")
    for label, f4_answer in (("m/neutral_cot@1", "B"), ("m/self_grounding@1", "A")):
        arm = b.arm(label)
        for q in (q1, q2):
            b.baseline(arm, q, answer="A")
            b.perturbed(arm, q, operator_id="F2_delete_a", intent="D", answer="A")
            b.perturbed(arm, q, operator_id="F4_insert_a", intent="P", answer=f4_answer)
    result = compute_audit(load_audit(db), n_boot=0)
    neutral, grounded = result.arms
    # neutral: F2 1, F4 0 -> F-pert 1/2, Δ = +1/2; without F4: F-pert 1, Δ = 0
    assert neutral.stats["delta_f"].point == pytest.approx(0.5)
    assert neutral.stats["delta_f_no_f4"].point == pytest.approx(0.0)
    assert grounded.stats["delta_f"].point == pytest.approx(0.0)
    units = units_of_audit(result)
    summary = summary_table(units, chs_sensitivity_table(units)[0],
                            mfc_sensitivity_table(units)[0])
    # median Δ: (50 + 0) / 2 = 25 pp -> without F4 (0 + 0) / 2 = 0: shift −25 pp;
    # neutral's Δ goes from + to 0, a sign change.
    assert summary.loc["F4 left out of Δ: shift of the median Δ (pp)",
                       "value"] == pytest.approx(-25.0)
    assert summary.loc["F4 left out of Δ: units whose Δ changes sign", "value"] == 1.0
    # Table 9: FCS = 0.5·AFR_D + 0.5·(1 − AFR_P); neutral: AFR_D 0/2, AFR_P 2/2 -> 0.0;
    # self-grounding: AFR_P 0/2 -> 0.5; ΔFCS vs the neutral reference = +0.5.
    table9 = template_table([r for r in result.arms])
    assert table9.loc["m · neutral_cot@1", "reference"]
    assert table9.loc["m · self_grounding@1", "delta_fcs"] == pytest.approx(0.5)
