"""Seed 002's tables as printed: exact zeros and signs, the corridor and the MFC gate decided
exactly and printed with the decimals that show it, and the count behind every rate — on
hand-built audits."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from analysis.audit import metrics
from analysis.audit.arm import Stat
from analysis.audit.frames import load_audit
from analysis.audit.panel_report import build_panel_report
from analysis.audit.report import AuditReportOptions, build_report
from analysis.audit.tables import compute_audit
from analysis.common.render import display_frame
from tests.builders import AuditBuilder


def _zero_delta_audit(db, audit: str = "zero", dataset: str = "medqa") -> None:
    """Five items, gold A. Baseline right on q1..q3 (3/5). F2 delete right on q1, q2 (2/5),
    F3 substitute right on q1..q4 (4/5): F-pert = mean(2/5, 4/5) = 3/5, so Δ = 3/5 − 3/5 =
    0 exactly — while 0.6 − (0.4 + 0.8) / 2 in floats is −1.1e-16 (−1.1e-14 pp)."""
    b = AuditBuilder(db, audit=audit, dataset=dataset)
    arm = b.arm("m/cot")
    for i in range(5):
        q = b.item(f"q{i}", gold="A")
        b.baseline(arm, q, answer="A" if i < 3 else "B")
        b.perturbed(arm, q, operator_id="F2_delete_a", intent="D",
                    answer="A" if i < 2 else "C")
        b.perturbed(arm, q, operator_id="F3_substitute_a", intent="D",
                    answer="A" if i < 4 else "C")


def test_a_delta_of_exactly_zero_is_zero_printed_and_counted(db):
    assert 3 / 5 - (2 / 5 + 4 / 5) / 2 != 0.0  # what the float path gave
    _zero_delta_audit(db)
    arm = compute_audit(load_audit(db), n_boot=50, seed=1).arms[0]
    assert arm.stats["delta_f"].exact == 0 and arm.stats["delta_f"].point == 0.0
    assert arm.stats["acc_fpert"].exact == Fraction(3, 5)
    table4 = build_report(db, options=AuditReportOptions(n_boot=50)).section("fblock").frame
    assert display_frame(table4).loc["m/cot", "Δ (pp)"].startswith("0.0 [")
    # The same model on a second dataset with the same answers: the panel's §6 summary
    # counts no model under "ΔAcc < 0" (the reported bug: −5.55e-15 pp counted there).
    _zero_delta_audit(db, audit="zero-2", dataset="mmlu")
    overview = build_panel_report(db, "all", n_boot=20).section("panel_overview").frame
    assert overview.loc["models with ΔAcc < 0", "value"] == 0
    assert overview.loc["models with |ΔAcc| ≤ 1.6 pp", "value"] == 1
    assert overview.loc["median ΔAcc over models (pp)", "value"] == 0.0


def _fcs_audit(db, n: int, d_flips: int, p_flips: int, audit: str) -> None:
    """n items; F2 delete (D) flips on `d_flips` of them, F4 insert (P) on `p_flips`:
    AFR_D = d_flips / n, AFR_P = p_flips / n under the default (chain-edit) reading."""
    b = AuditBuilder(db, audit=audit)
    arm = b.arm("m/cot")
    for i in range(n):
        q = b.item(f"{audit}-q{i}")
        b.baseline(arm, q, answer="A")
        b.perturbed(arm, q, operator_id="F2_delete_a", intent="D",
                    answer="B" if i < d_flips else "A")
        b.perturbed(arm, q, operator_id="F4_insert_a", intent="P",
                    answer="B" if i < p_flips else "A")


def test_fcs_exactly_on_the_corridor_edge_is_in_it(db):
    # AFR_D = 3/10, AFR_P = 4/10: FCS = 3/20 + 3/10 = 9/20 = 0.45 exactly, the corridor's
    # lower edge. In floats 0.5·0.3 + 0.5·(1 − 0.4) = 0.44999999999999996, outside.
    assert 0.5 * 0.3 + 0.5 * (1 - 0.4) < 0.45
    _fcs_audit(db, 10, 3, 4, "edge")
    summary = build_report(db, options=AuditReportOptions(n_boot=20)).section("summary").frame
    assert summary.loc["m/cot", "fcs"] == 0.45
    assert bool(summary.loc["m/cot", "fcs_in_corridor"]) is True
    assert display_frame(summary).loc["m/cot", "in corridor (F)"] == "yes"


@pytest.mark.parametrize("d_flips, p_flips, fcs, inside, printed", [
    (0, 11, Fraction(445, 1000), False, "0.445"),   # printed "0.45" would look inside
    (0, 9, Fraction(455, 1000), True, "0.46"),
    (9, 0, Fraction(545, 1000), True, "0.55"),      # "0.55" is inside, and so is 0.545
    (11, 0, Fraction(555, 1000), False, "0.56"),    # "0.56" already shows it outside
])
def test_corridor_is_decided_exactly_and_printed_to_show_it(db, d_flips, p_flips, fcs, inside,
                                                             printed):
    # 100 items: FCS = 1/2 · d/100 + 1/2 · (1 − p/100)
    _fcs_audit(db, 100, d_flips, p_flips, f"fcs-{d_flips}-{p_flips}")
    summary = build_report(db, options=AuditReportOptions(n_boot=20)).section("summary").frame
    assert metrics.exact_value(summary.loc["m/cot", "fcs"]) == Decimal(fcs.numerator) / \
        fcs.denominator
    assert bool(summary.loc["m/cot", "fcs_in_corridor"]) is inside
    shown = display_frame(summary)
    assert shown.loc["m/cot", "FCS (F)"].startswith(printed + " [")
    assert shown.loc["m/cot", "in corridor (F)"] == ("yes" if inside else "no")
    # the FCS-plane figure draws (AFR_D, AFR_P) between the edges AFR_P = AFR_D ± 0.1
    ad, ap = Fraction(d_flips, 100), Fraction(p_flips, 100)
    assert (abs(ap - ad) <= Fraction(1, 10)) is inside


def test_corridor_edges_and_the_decimals_that_show_a_decision():
    assert metrics.in_corridor(Fraction(9, 20)) is True and metrics.in_corridor(0.55) is True
    assert metrics.in_corridor(Fraction(1101, 2000)) is False   # 0.5505 (printed "0.551")
    assert metrics.in_corridor(Fraction(4449, 10000)) is False
    assert metrics.in_corridor(math.nan) is None
    corridor = metrics.DECISIONS["fcs"]
    assert metrics.decisive_decimals(Fraction(445, 1000), corridor) == 3
    assert metrics.decisive_decimals(Fraction(4449, 10000), corridor) == 2  # "0.44": out
    assert metrics.decisive_decimals(Fraction(1101, 2000), corridor) == 3   # "0.551"
    assert metrics.decisive_decimals(Fraction(1, 2), corridor) == 2
    # float noise is absorbed: 0.44999999999999996 is 0.45, in
    assert metrics.in_corridor(0.5 * 0.3 + 0.5 * (1 - 0.4)) is True


def test_the_mfc_gate_reads_ecr_exactly():
    reps = np.array([np.nan])

    def stat(x: Fraction) -> Stat:
        return Stat(float(x), reps, 10, exact=x)

    fcs, chs, dfg = stat(Fraction(1, 2)), stat(Fraction(1, 5)), stat(Fraction(1, 10))
    # ECR 0.296 (would print "0.30" at two decimals): no MFC, and printed "0.296"
    assert metrics.mfc(stat(Fraction(296, 1000)), fcs, chs, dfg) is None
    assert metrics.decisive_decimals(Fraction(296, 1000), metrics.DECISIONS["ecr"]) == 3
    # ECR 0.30 exactly, and as a float sum with noise: MFC shown, two decimals suffice
    assert metrics.mfc(stat(Fraction(3, 10)), fcs, chs, dfg) is not None
    assert metrics.mfc(Stat(0.1 + 0.2, reps, 10), fcs, chs, dfg) is not None
    assert metrics.decisive_decimals(Fraction(3, 10), metrics.DECISIONS["ecr"]) == 2


def test_every_rate_of_table3_carries_its_count(db):
    """The issue's example: six items, one baseline unparsed. "n items" is 6, accuracy
    rests on 5 parsed baselines, AFR on the edits, FCS on both groups' edits."""
    b = AuditBuilder(db)
    arm = b.arm("m/cot")
    for i in range(6):
        q = b.item(f"q{i}")
        b.baseline(arm, q, answer="A" if i else None)  # q0 unparsed
        b.perturbed(arm, q, operator_id="F2_delete_a", intent="D", answer="B" if i < 3 else "A")
        b.perturbed(arm, q, operator_id="F4_insert_a", intent="P", answer="A")
        b.perturbed(arm, q, operator_id="M5_severity_a", intent="D", answer="A",
                    new="chronic", output="acute")
    summary = build_report(db, options=AuditReportOptions(n_boot=20)).section("summary").frame
    row = summary.loc["m/cot"]
    assert row["n_items"] == 6 and row["acc_n"] == 5
    # Edits of q0 drop out (baseline unparsed): F2 5 edits, F4 5, M5 5.
    assert (row["afr_d_n"], row["afr_p_n"], row["fcs_n"]) == (5, 5, 10)
    assert (row["afr_d_fm_n"], row["fcs_fm_n"]) == (10, 15)
    assert row["cdr_n"] == 5 and row["chs_n"] == 5
    assert row["ecr_n"] is None and math.isnan(row["ecr"])  # no F1 planned: no ECR
    for column in summary.columns:
        if f"{column}_low" in summary.columns:  # every rate with a CI has its count
            assert f"{column}_n" in summary.columns, column
    shown = display_frame(summary)
    assert shown.loc["m/cot", "Acc."].endswith("ⁿ⁼⁵")
    assert shown.loc["m/cot", "FCS (F+M)"].endswith("ⁿ⁼¹⁵")
    import json

    report = build_report(db, options=AuditReportOptions(n_boot=20))
    rows = json.loads(report.to_json())["tables"]["summary"]["rows"]
    assert rows[0]["acc_n"] == 5 and rows[0]["n_items"] == 6


@pytest.mark.parametrize("key", ["families", "dfg", "operators", "joint", "cdr_rules"])
def test_other_tables_carry_counts_too(db, key):
    from tests.audit.test_report import build_full_audit

    build_full_audit(db)
    frame = build_report(db, options=AuditReportOptions(n_boot=20)).section(key).frame
    rates = [c for c in frame.columns if f"{c}_n" in frame.columns]
    assert rates, key
    n_of = frame.attrs.get("n_of", {})
    for column in rates:
        for i in frame.index:
            if math.isnan(frame.loc[i, column]):
                continue
            n = frame.loc[i, f"{column}_n"]
            assert n is not None and n > 0, (key, column, i)
            if column in n_of:  # the table's own count column holds the same count
                assert n == frame.loc[i, n_of[column]], (key, column, i)


def test_the_audit_report_has_the_section_6_summary_over_its_arms(db):
    from tests.audit.test_report import build_full_audit

    build_full_audit(db)
    report = build_report(db, options=AuditReportOptions(n_boot=20))
    overview = report.section("overview").frame
    table7 = report.section("cdr_rules").frame
    # Both pool the two arms' 30 destructive M2/M4/M5 edits: 16 in cell (c) -> 53.3 %.
    assert overview.loc["CDR, panel-wide (%)", "value"] == pytest.approx(
        table7.loc["Panel", "cdr_token_pct"]) == pytest.approx(1600 / 30)
    assert overview.loc["models × datasets", "detail"] == "2 models, 1 dataset, 2 cells"
