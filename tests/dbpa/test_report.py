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
    # k = 5, B = 999: the smallest p is (1 + 999/252)/1000 = 0.00496, × 6 = 0.030 ≤ 0.05,
    # so every test could reject (no † in the cells).
    spec = DbpaSpec(dataset="demo", models=("fake",), k=5, permutations=999,
                    operators=("M3_distractor_a", "M5_severity_a", "M4_negation_a"),
                    item_ids=("demo-005", "demo-003"), distances=("jsd", "energy"))
    outcome = run_dbpa(demo_db, spec, engine=engine)
    for (op, item, distance), p in P.items():
        # Hand-set p and ω: the stored null level no longer belongs to them, so it is
        # cleared (ω* then undefined).
        demo_db.execute(
            "UPDATE dbpa_tests SET p_value = ?, effect_size = ?, null_mean = NULL, status = "
            "'ok' WHERE perturbation = ? AND distance = ? AND item_id = (SELECT id FROM items "
            "WHERE source_id = ?)", [p, 1 - p if distance == "jsd" else 0.2, op, distance, item])
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
    # 6 perturbation tests and 2 identity controls (which agree: ns under both).
    assert "2 of 8 tests flip" in report.sections[0].note
    assert "WARNING" not in report.sections[0].note
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
                    should_change=("M3_distractor_a",), should_not_change=("M5_severity_a",),
                    allow_small_k=True)
    outcome = run_dbpa(demo_db, spec, engine=engine)
    note = build_report(demo_db, outcome.audit).section("tpr_fpr").note
    assert "should change = M3_distractor_a; should not = M5_severity_a" in note


def test_sensitivity_first_in_every_format_and_roc_under_case_study_2(report, tmp_path):
    md, _ = report.write(tmp_path / "r.md", "md")
    text = md.read_text()
    assert text.index("## Sensitivity") < text.index("## Case study 1") \
        < text.index("## Case study 2") < text.index("![ROC") < text.index("## Identity")
    assert "![" not in text[:text.index("## Sensitivity")]
    html = report.to_html()
    assert html.index("<h2>Sensitivity") < html.index("<img") < html.index("<h2>Identity")
    assert next(iter(json.loads(report.to_json())["tables"])) == "sensitivity"


def test_json_carries_b_seed_ids_and_the_monte_carlo_interval(demo_db, fake_model, engine):
    from analysis.dbpa.design import monte_carlo_interval

    spec = DbpaSpec(dataset="demo", models=("fake",), k=5, permutations=499,
                    operators=("M5_severity_a",), item_ids=("demo-005",),
                    distances=("jsd", "energy_emb"))
    outcome = run_dbpa(demo_db, spec, engine=engine)
    report = build_report(demo_db, outcome.audit)
    rows = json.loads(report.to_json())["tables"]["tests"]["rows"]
    stored = {(r[0], r[1]): r[2:] for r in demo_db.execute(
        "SELECT perturbation, distance, permutations, permutation_seed, n_at_least, "
        "generation_ids_json FROM dbpa_tests")}
    assert len(rows) == len(stored) == 4
    for row in rows:
        b, seed, count, ids = stored[(row["perturbation"], row["distance"])]
        assert (row["permutations"], row["permutation_seed"], row["n_at_least"]) == (b, seed,
                                                                                    count)
        assert {"baseline": row["baseline_generation_ids"],
                "perturbed": row["perturbed_generation_ids"]} == json.loads(ids)
        assert len(row["baseline_generation_ids"]) == 5
        se, low, high = monte_carlo_interval(count, b)
        assert (row["p_mc_se"], row["p_value_low"], row["p_value_high"]) == (
            pytest.approx(se), pytest.approx(low), pytest.approx(high))
        # Family of 1, k = 5: N = 252, floor (1 + 499·t/252)/500 (t = 2 for energy_emb).
        t = 2 if row["distance"] == "energy_emb" else 1
        assert row["p_floor"] == pytest.approx((1 + 499 * t / 252) / 500)
        assert row["p_floor_adjusted"] == row["p_floor"] and row["can_reject"] is True
    # The ids are JSON-only: the Markdown table leaves them out, the p carries its interval.
    text = report.to_markdown()
    assert "generation_ids" not in text and "p_value [" not in text
    import re

    tests_table = text[text.index("## Every test"):]
    assert len(re.findall(r"\| [\d.e-]+ \[[\d.e-]+, [\d.e-]+\] \|", tests_table)) == 4


def test_effect_against_its_null_level_and_the_identity_control(demo_db, fake_model, engine):
    from analysis.dbpa.definitions import OMEGA_MAX

    spec = DbpaSpec(dataset="demo", models=("fake",), k=6, permutations=199,
                    operators=("M3_distractor_a", "M5_severity_a"),
                    item_ids=("demo-005", "demo-003"), distances=("jsd",))
    outcome = run_dbpa(demo_db, spec, engine=engine)
    report = build_report(demo_db, outcome.audit)
    frame = report.section("tests").frame
    for row in frame.itertuples():
        # ω* = (ω − ω₀)/(√ln 2 − ω₀), by hand from the stored columns.
        assert row.effect_std == pytest.approx(
            (row.effect_size - row.null_mean) / (OMEGA_MAX["jsd"] - row.null_mean))
    severity = frame[frame["perturbation"] == "M5_severity_a"]
    identity = frame[frame["perturbation"] == "identity_control"]
    # The identity control asks the same question: ω within chance of its null level
    # (|ω − ω₀| < 3 SD₀; one test's ω* scatters by SD₀/(ω_max − ω₀) ≈ 0.2 at k = 6). The
    # severity edit switches vocabulary: ω* above every identity control's.
    assert ((identity["effect_size"] - identity["null_mean"]).abs()
            < 3 * identity["null_sd"]).all()
    assert severity["effect_std"].min() > identity["effect_std"].max()
    controls = report.section("identity").frame
    assert controls.loc["tfidf / jsd", "n"] == 2
    rate = float((identity["p_value"] <= 0.05).mean())
    assert controls.loc["tfidf / jsd", "rejected (p ≤ α)"] == rate
    assert report.section("tpr_fpr").frame.loc["tfidf / jsd", "FPR (identity)"] == rate
    assert report.meta["identity_control"] is True and "warning" not in report.meta


def test_a_run_that_cannot_reject_warns_in_the_report(demo_db, fake_model, engine):
    # k = 3, B = 199: N = 20, floor (1 + 199/20)/200 = 0.0547 > 0.05 even for one test.
    spec = DbpaSpec(dataset="demo", models=("fake",), k=3, permutations=199,
                    operators=("M5_severity_a",), item_ids=("demo-005",),
                    distances=("jsd",), allow_small_k=True)
    outcome = run_dbpa(demo_db, spec, engine=engine)
    report = build_report(demo_db, outcome.audit)
    assert report.meta["warning"].startswith("WARNING: 2 of 2 test results (†) could not "
                                             "reject at α = 0.05")
    assert report.sections[0].note.startswith("WARNING")
    cells = report.sections[0].frame["tfidf / jsd"]
    assert all(cell.endswith("†") for cell in cells)
    floors = report.section("tests").frame["p_floor"]
    assert floors.tolist() == [pytest.approx((1 + 199 / 20) / 200)] * 2
    assert "WARNING" in report.to_markdown().split("## Sensitivity")[0]  # in the header too


def test_a_stored_correction_that_is_none_of_its_values_is_refused(demo_db, fake_model,
                                                                   engine):
    # "Holm" was looked up as column p_Holm (a KeyError deep in the table code); the run's
    # settings are now read as `Correction` where the report reads them.
    from store.db import dumps, loads
    from store.errors import UserError

    spec = DbpaSpec(dataset="demo", models=("fake",), k=5, permutations=999,
                    operators=("M5_severity_a",), item_ids=("demo-005",))
    outcome = run_dbpa(demo_db, spec, engine=engine)
    config = loads(demo_db.execute("SELECT config_json FROM audits WHERE id = ?",
                                   [outcome.audit_id]).fetchone()[0])
    assert config["correction"] == "holm"
    assert build_report(demo_db, outcome.audit).meta["correction"] == "holm"
    demo_db.execute("UPDATE audits SET config_json = ? WHERE id = ?",
                    [dumps({**config, "correction": "Holm"}), outcome.audit_id])
    with pytest.raises(UserError) as refused:
        build_report(demo_db, outcome.audit)
    assert str(refused.value) == (f"DBPA run {outcome.audit}'s stored settings: correction "
                                  "'Holm' is not one of holm, bonferroni, none")


def test_mostly_identical_shared_seed_pairs_warn_and_lower_the_reach(demo_db, fake_model,
                                                                      engine):
    # Shared seeds: the fake answers depend on the seed and on 'severe' only, so the
    # distractor's 8 pairs are the baseline's own texts (identical) and the severity
    # edit's 8 are not: 8 of 16 pairs = 50%, the threshold.
    from analysis.dbpa.definitions import IDENTICAL_PAIRS_WARN

    spec = DbpaSpec(dataset="demo", models=("fake",), k=8, permutations=199, seeds="shared",
                    operators=("M3_distractor_a", "M5_severity_a"), item_ids=("demo-005",),
                    distances=("jsd",))
    outcome = run_dbpa(demo_db, spec, engine=engine)
    report = build_report(demo_db, outcome.audit)
    assert IDENTICAL_PAIRS_WARN == 0.5
    assert "WARNING: 8 of 16 shared-seed pairs (50%, at least 50%) are identical texts" in \
        report.meta["warning"]
    assert "0.42/0.11/0.21 at 5 of 10" in report.meta["warning"]
    tests = _tests(report)
    distractor = tests[("M3_distractor_a", "demo-005", "jsd")]
    severity = tests[("M5_severity_a", "demo-005", "jsd")]
    assert (distractor.identical_pairs, severity.identical_pairs) == (8, 0)
    # no pair left to swap: the distractor's test could not reject whatever its outputs
    assert distractor.p_floor == 1.0 and distractor.can_reject is False
    from analysis.dbpa.design import smallest_p

    assert severity.p_floor == pytest.approx(smallest_p(8, 8, 199, "jsd", "paired"))
    # the identity control (independent seeds, unpaired) counts no pairs
    identity = [r for r in report.section("tests").frame.itertuples()
                if r.perturbation == "identity_control"]
    assert identity and all(r.identical_pairs != r.identical_pairs for r in identity)  # NaN


def test_few_identical_pairs_do_not_warn(demo_db, fake_model, engine):
    spec = DbpaSpec(dataset="demo", models=("fake",), k=8, permutations=199, seeds="shared",
                    operators=("M5_severity_a",), item_ids=("demo-005",), distances=("jsd",))
    report = build_report(demo_db, run_dbpa(demo_db, spec, engine=engine).audit)
    assert "identical texts" not in report.meta.get("warning", "")
