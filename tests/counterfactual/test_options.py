"""The study's analysis and sizing options: --correction, --two-sided, --kl-floor,
--token-denominator — the paper's reading by default, the authors' code's one flag away."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.counterfactual import definitions as cfd
from analysis.counterfactual.report import StudyReportOptions, build_report
from store.jobs import list_jobs
from tests.counterfactual.test_study_plan import _spec
from workbench.engine.variants import get_variant
from workbench.counterfactual import run_study
from workbench.perturb.tokenize import CallableTokenizer, WordTokenizer, token_change_fraction


def test_the_token_fraction_denominators():
    # "a b c" → "a x c d": edit distance 2 (substitute b, insert d); longer = 4, original = 3.
    words = WordTokenizer()
    assert token_change_fraction("a b c", "a x c d", words) == 2 / 4
    assert token_change_fraction("a b c", "a x c d", words, "original") == 2 / 3
    with pytest.raises(ValueError):
        token_change_fraction("a", "b", words, "mean")


def test_kl_floors():
    # P = (1, 0), Q = (0.5, 0.5): KL = log2(2) = 1 bit under both readings (Q has no zero).
    p, q = np.array([[1.0, 0.0]]), np.array([[0.5, 0.5]])
    assert cfd.kl_divergence(p, q, "q")[0] == pytest.approx(1.0)
    # Flooring P at 1e-10 as well: P' = (1 − 1e-10, 1e-10) after renormalising, so
    # KL = (1 − ε)·log2((1 − ε)/0.5) + ε·log2(ε/0.5) ≈ 1 − 3.4e-9.
    eps = 1e-10 / (1 + 1e-10)
    expected = ((1 - eps) * np.log2((1 - eps) / 0.5) + eps * np.log2(eps / 0.5))
    assert cfd.kl_divergence(p, q, "both")[0] == pytest.approx(expected, abs=1e-15)
    # Q with a zero where P is not: the floors differ (log2(1e12) vs log2(1e10) per term).
    zero = np.array([[1.0, 0.0]])
    assert cfd.kl_divergence(np.array([[0.5, 0.5]]), zero, "q")[0] == pytest.approx(
        0.5 * np.log2(0.5 / (1 / (1 + 1e-12))) + 0.5 * np.log2(0.5 / (1e-12 / (1 + 1e-12))))
    with pytest.raises(ValueError):
        cfd.kl_divergence(p, q, "none")


def test_a_study_with_other_analysis_settings_reuses_every_generation(study_db, fake_model,
                                                                      make_engine):
    engine = make_engine()
    first = run_study(study_db, _spec(), engine=engine)
    holm = run_study(study_db, _spec(correction="holm", sides="two", kl_floor="both"),
                     engine=engine)
    assert holm.study != first.study and holm.generated == 0
    report = build_report(study_db, holm.study, options=StudyReportOptions(n_boot=50))
    assert (report.meta["correction"], report.meta["sides"], report.meta["kl_floor"]) == (
        "holm", "two", "both")
    tests = report.section("tests").frame
    assert tests["test"].str.contains("two-sided").all()
    main = tests[tests["group"] != "Regression"]
    assert (main["significant"] == (main["p_holm"] < 0.05)).all()
    raw = build_report(study_db, first.study,
                       options=StudyReportOptions(n_boot=50, correction="none")).section("tests")
    assert (raw.frame["significant"] == (raw.frame["p"] < 0.05)).all()


def test_regressions_are_marked_uncorrected_as_table_11(study_db, fake_model, make_engine):
    outcome = run_study(study_db, _spec(), engine=make_engine())
    tests = build_report(study_db, outcome.study, options=StudyReportOptions(n_boot=50)) \
        .section("tests").frame
    reg = tests[tests["group"] == "Regression"]
    assert len(reg) and (reg["family_size"] <= 1).all()
    assert (reg["p_bonferroni"].fillna(-1) == reg["p"].fillna(-1)).all()


def test_the_original_length_denominator_sizes_the_paraphrase(study_db, fake_model,
                                                              make_engine):
    engine = make_engine()
    outcome = run_study(study_db, _spec(token_denominator="original"), engine=engine)
    tokenizer = CallableTokenizer(lambda t: engine.runner(fake_model).backend.tokenize(
        t, special=False))
    checked = 0
    for job in list_jobs(study_db, outcome.study_id, role="paraphrase"):
        if job.sample_index:
            continue
        variant = get_variant(study_db, job.variant_id)
        target = get_variant(study_db, variant.details["reference_variant_id"])
        original = target.details.get("control_baseline_text") or study_db.execute(
            "SELECT question FROM items WHERE id = ?", [variant.item_id]).fetchone()[0]
        assert variant.details["token_denominator"] == "original"
        assert variant.details["target_fraction"] == pytest.approx(
            token_change_fraction(original, target.text, tokenizer, "original"), abs=1e-6)
        checked += 1
    assert checked == 4


def test_two_sided_bootstrap_and_t_in_the_power_simulation():
    from analysis.counterfactual import power

    z = np.random.default_rng(3).normal(0.0, 2.0, 60)
    one = power.simulate_cell(z, 0.5, 1.0, sims=100, n_boot=200, rng=np.random.default_rng(0))
    two = power.simulate_cell(z, 0.5, 1.0, sims=100, n_boot=200, rng=np.random.default_rng(0),
                              sides="two")
    # The same draws: a two-sided test at the same α rejects no more often (JSD, KL).
    assert two["jsd"][0] <= one["jsd"][0] and two["kl"][0] <= one["kl"][0]
    fixed = power.simulate_cell(z, 0.5, 0.0, sims=200, n_boot=200, originals="fixed",
                                rng=np.random.default_rng(1))
    assert all(rejections <= 0.15 * 200 for rejections, _ in fixed.values())  # still a null
    with pytest.raises(ValueError, match="originals"):
        power.simulate_cell(z, 0.5, 0.0, sims=1, n_boot=1, originals="kept")
