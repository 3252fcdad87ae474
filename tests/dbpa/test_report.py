"""The DBPA report on hand-set p-values: Holm/Bonferroni, flips, TPR/FPR and AUC by hand."""

from __future__ import annotations

import json

import pytest

from analysis.dbpa.report import build_report
from workbench.dbpa import DbpaSpec, run_dbpa

# Raw p-values set by hand per (operator, item, distance); jsd's effect size is 1 − p,
# energy's a constant 0.2 (so its ω carries no ranking).
P = {
    ("M5_severity_a", "demo-005", "jsd"): 0.001, ("M5_severity_a", "demo-003", "jsd"): 0.004,
    ("M4_negation_a", "demo-005", "jsd"): 0.02, ("M4_negation_a", "demo-003", "jsd"): 0.30,
    ("M3_distractor_a", "demo-005", "jsd"): 0.01, ("M3_distractor_a", "demo-003", "jsd"): 0.60,
    ("M5_severity_a", "demo-005", "energy"): 0.001,
    ("M5_severity_a", "demo-003", "energy"): 0.001,
    ("M4_negation_a", "demo-005", "energy"): 0.001,
    ("M4_negation_a", "demo-003", "energy"): 0.5,
    ("M3_distractor_a", "demo-005", "energy"): 0.5,
    ("M3_distractor_a", "demo-003", "energy"): 0.9,
}


@pytest.fixture
def report(demo_db, fake_model, engine):
    spec = DbpaSpec(dataset="demo", models=("fake",), k=3, permutations=9,
                    operators=("M3_distractor_a", "M5_severity_a", "M4_negation_a"),
                    item_ids=("demo-005", "demo-003"), distances=("jsd", "energy"))
    outcome = run_dbpa(demo_db, spec, engine=engine)
    for (op, item, distance), p in P.items():
        demo_db.execute(
            "UPDATE dbpa_tests SET p_value = ?, effect_size = ?, status = 'ok' WHERE "
            "perturbation = ? AND distance = ? AND item_id = (SELECT id FROM items WHERE "
            "source_id = ?)", [p, 1 - p if distance == "jsd" else 0.2, op, distance, item])
    return build_report(demo_db, outcome.audit)


def _tests(report):
    frame = report.section("tests").frame
    return {(r.perturbation, r.item, r.distance): r for r in frame.itertuples()}


def test_holm_and_bonferroni_by_hand(report):
    rows = _tests(report)
    # jsd family of 6, sorted raw p: .001 .004 .01 .02 .30 .60
    # Holm: .001·6 = .006; .004·5 = .02; .01·4 = .04; .02·3 = .06; .30·2 = .6; .60·1 → .6
    holm = {("M5_severity_a", "demo-005"): 0.006, ("M5_severity_a", "demo-003"): 0.02,
            ("M3_distractor_a", "demo-005"): 0.04, ("M4_negation_a", "demo-005"): 0.06,
            ("M4_negation_a", "demo-003"): 0.6, ("M3_distractor_a", "demo-003"): 0.6}
    for (op, item), value in holm.items():
        assert rows[(op, item, "jsd")].p_holm == pytest.approx(value)
        assert rows[(op, item, "jsd")].p_bonferroni == pytest.approx(
            min(1.0, P[(op, item, "jsd")] * 6))
    # energy: three ties at .001 → .006 each (step-down max), then .5·3 = 1.5 → 1.
    assert rows[("M4_negation_a", "demo-005", "energy")].p_holm == pytest.approx(0.006)
    assert rows[("M4_negation_a", "demo-003", "energy")].p_holm == pytest.approx(1.0)


def test_sensitivity_table_is_first_and_counts_flips(report):
    assert report.sections[0].json_key == "sensitivity"
    table = report.sections[0].frame
    flipped = sorted(table.index[table["flip"] == "FLIP"])
    # Holm decisions — jsd: M5·005, M5·003, M3·005 significant; energy: M5·005, M5·003,
    # M4·005. They differ for M4·005 (ns → sig) and M3·005 (sig → ns).
    assert flipped == ["M3_distractor_a · demo-005", "M4_negation_a · demo-005"]
    assert "2 of 6 tests flip" in report.sections[0].note
    assert table.loc["M5_severity_a · demo-005", "tfidf / jsd"] == "sig ω=0.999**"
    assert table.loc["M4_negation_a · demo-005", "tfidf / jsd"] == "ns ω=0.980"


def test_tpr_fpr_and_auc_by_hand(report):
    rates = report.section("tpr_fpr").frame
    jsd, energy = rates.loc["tfidf / jsd"], rates.loc["tfidf / energy"]
    # Intent D (M4, M5) should change, P (M3) should not.
    assert (jsd["n should change"], jsd["n should not change"]) == (4, 2)
    assert jsd["TPR"] == 0.5 and jsd["FPR"] == 0.5
    assert energy["TPR"] == 0.75 and energy["FPR"] == 0.0
    # AUC(1 − p), jsd: positives p .001 .004 .02 .30 vs negatives .01 .60 → pairs won:
    # vs .01: 2, vs .60: 4 → 6/8. energy: vs .5: 3 + one tie (½), vs .9: 4 → 7.5/8.
    assert jsd["ROC-AUC (1 − p)"] == pytest.approx(0.75)
    assert energy["ROC-AUC (1 − p)"] == pytest.approx(0.9375)
    assert jsd["ROC-AUC (ω)"] == pytest.approx(0.75)
    assert energy["ROC-AUC (ω)"] == pytest.approx(0.5)


def test_roc_png_and_json(report):
    png = report.figures[0].render()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    payload = json.loads(report.to_json())
    assert next(iter(payload["tables"])) == "sensitivity"
    assert payload["meta"]["kind"] == "dbpa" and payload["meta"]["correction"] == "holm"


def test_partition_override(demo_db, fake_model, engine):
    spec = DbpaSpec(dataset="demo", models=("fake",), k=3, permutations=9,
                    operators=("M3_distractor_a", "M5_severity_a"), item_ids=("demo-005",),
                    should_change=("M3_distractor_a",), should_not_change=("M5_severity_a",))
    outcome = run_dbpa(demo_db, spec, engine=engine)
    note = build_report(demo_db, outcome.audit).section("tpr_fpr").note
    assert "should change = M3_distractor_a; should not = M5_severity_a" in note
