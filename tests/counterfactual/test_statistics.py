"""Seed-000 statistics against values worked out by hand and against scipy/sklearn/statsmodels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.spatial.distance import jensenshannon
from sklearn.metrics import matthews_corrcoef, mutual_info_score

from analysis.counterfactual import comparison as cfc

from analysis.counterfactual import definitions as cfd

from analysis.counterfactual import statistics as cfs

LN2 = math.log(2)


# ---------------------------------------------------------------- KL and JSD


def test_kl_by_hand_and_scipy():
    # P = (0.5, 0.5), Q = (0.25, 0.75):
    # KL = 0.5·log2(0.5/0.25) + 0.5·log2(0.5/0.75) = 0.5·1 + 0.5·(−0.5849625) = 0.2075187
    p, q = np.array([[0.5, 0.5]]), np.array([[0.25, 0.75]])
    assert cfd.kl_divergence(p, q)[0] == pytest.approx(0.2075187, abs=1e-7)
    assert cfd.kl_divergence(p, q)[0] == pytest.approx(stats.entropy(p[0], q[0], base=2))
    assert cfd.kl_divergence(p, p)[0] == pytest.approx(0.0)


def test_kl_with_a_zero_in_q_uses_the_documented_floor():
    # Q(No) = 0 < P(No): Q floored at 1e-12 and renormalised (1 + 1e-12 total):
    # KL = 0.5·log2(0.5/(1/(1+1e-12))) + 0.5·log2(0.5/(1e-12/(1+1e-12)))
    #    ≈ 0.5·(−1) + 0.5·log2(5e11) = −0.5 + 0.5·38.86314 = 18.93157
    value = cfd.kl_divergence(np.array([[0.5, 0.5]]), np.array([[1.0, 0.0]]))[0]
    assert math.isfinite(value)
    assert value == pytest.approx(18.93157, abs=1e-4)
    # A zero in P is no problem at all: 0·log(0/q) = 0.
    assert cfd.kl_divergence(np.array([[1.0, 0.0]]), np.array([[0.5, 0.5]]))[0] == \
        pytest.approx(1.0)


def test_jsd_by_hand_bounds_and_scipy():
    # M = (0.375, 0.625);
    # KL(P‖M) = 0.5·log2(0.5/0.375) + 0.5·log2(0.5/0.625) = 0.5·0.4150375 − 0.5·0.3219281
    #         = 0.0465547
    # KL(Q‖M) = 0.25·log2(0.25/0.375) + 0.75·log2(0.75/0.625) = 0.25·(−0.5849625)
    #           + 0.75·0.2630344 = −0.1462406 + 0.1972758 = 0.0510352
    # JSD = ½(0.0465547 + 0.0510352) = 0.0487949
    p, q = np.array([[0.5, 0.5]]), np.array([[0.25, 0.75]])
    assert cfd.js_divergence(p, q)[0] == pytest.approx(0.0487949, abs=1e-7)
    assert cfd.js_divergence(p, q)[0] == pytest.approx(jensenshannon(p[0], q[0], base=2) ** 2)
    # Disjoint distributions reach the upper bound 1 (base 2, §3.3: "bounded in [0, 1]").
    assert cfd.js_divergence(np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]))[0] == 1.0
    rng = np.random.default_rng(0)
    a, b = rng.dirichlet(np.ones(4), 50), rng.dirichlet(np.ones(4), 50)
    values = cfd.js_divergence(a, b)
    assert np.all((values >= 0) & (values <= 1))
    assert values == pytest.approx([jensenshannon(x, y, base=2) ** 2 for x, y in zip(a, b)])
    assert values == pytest.approx(cfd.js_divergence(b, a))  # symmetric


def test_logit_of_the_first_label():
    # (0.8, 0.2): log(0.8/0.2) = log 4 = 1.3862944
    assert cfd.logit_first(np.array([[0.8, 0.2]]))[0] == pytest.approx(math.log(4))
    # k > 2: logit of P(first) against the rest: 0.5 → 0
    assert cfd.logit_first(np.array([[0.5, 0.25, 0.25]]))[0] == pytest.approx(0.0)


# ---------------------------------------------------------------- answers


def test_majority_vote_and_the_tie_rule():
    codes = np.array([[0, 0, 1],     # 2 of 3 → label 0
                      [0, 1, -1],    # 1–1 tie, one unparsed → higher probability (label 1)
                      [-1, -1, -1],  # nothing parsed → no answer
                      [2, 1, 0],     # three-way tie → label 2 (probability 0.5)
                      [1, 1, 1]])
    probs = np.array([[0.9, 0.1, 0.0], [0.3, 0.7, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5],
                      [0.6, 0.4, 0.0]])
    answers, ties = cfd.majority_vote(codes, probs)
    assert answers.tolist() == [0, 1, -1, 2, 1]
    assert ties.tolist() == [False, True, False, True, False]


# ---------------------------------------------------------------- aggregate metrics


def test_flip_rate_mi_phi_by_hand_and_sklearn():
    a = np.array([0, 0, 0, 1, 0, 1, 1, 1])
    b = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    table = cfd.contingency(a, b, 2)
    # Table [[3, 1], [1, 3]], n = 8; p = [[.375, .125], [.125, .375]], margins all 0.5.
    assert table.tolist() == [[3, 1], [1, 3]]
    # FR = 2/8 = 0.25
    assert cfd.flip_rate_from_tables(table) == pytest.approx(0.25)
    # MI = 2·0.375·log2(0.375/0.25) + 2·0.125·log2(0.125/0.25) = 0.75·0.5849625 − 0.25
    #    = 0.1887219 bits
    assert cfd.mi_from_tables(table) == pytest.approx(0.1887219, abs=1e-7)
    assert cfd.mi_from_tables(table) == pytest.approx(mutual_info_score(a, b) / LN2)
    # φ = (p11·p00 − p10·p01)/√(0.5⁴) = (0.140625 − 0.015625)/0.25 = 0.5
    phi, degenerate = cfd.phi_from_tables(table)
    assert phi == pytest.approx(0.5)
    assert not degenerate
    assert phi == pytest.approx(matthews_corrcoef(a, b))
    assert phi == pytest.approx(np.corrcoef(a, b)[0, 1])


def test_systematic_disagreement_gives_negative_phi():
    a = np.array([0, 0, 1, 1, 1, 0])
    b = 1 - a  # every answer reversed: φ = −1, MI = H(a) = 1 bit, FR = 1
    table = cfd.contingency(a, b, 2)
    assert cfd.phi_from_tables(table)[0] == pytest.approx(-1.0)
    assert cfd.mi_from_tables(table) == pytest.approx(1.0)
    assert cfd.flip_rate_from_tables(table) == pytest.approx(1.0)


def test_k_by_k_tables_match_sklearn():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 4, 200)
    b = np.where(rng.random(200) < 0.6, a, rng.integers(0, 4, 200))
    table = cfd.contingency(a, b, 4)
    assert cfd.mi_from_tables(table) == pytest.approx(mutual_info_score(a, b) / LN2)
    assert cfd.phi_from_tables(table)[0] == pytest.approx(matthews_corrcoef(a, b))
    assert cfd.flip_rate_from_tables(table) == pytest.approx(np.mean(a != b))


def test_degenerate_tables_follow_the_papers_convention():
    # The paper's Table 4 (Gender-remove, RES, 8B): φ difference 1.00 beside MI .081.
    # Original: 99 'yes' (0) and 1 'no' (1). Perturbed answers equal the original: the table
    # [[99, 0], [0, 1]] has φ = 1 and MI = H(0.01) = −0.99·log2 0.99 − 0.01·log2 0.01
    # = 0.0143546 + 0.0664386 = 0.0807932 bits. The baseline flips the one 'no' to 'yes':
    # [[99, 0], [1, 0]] has a constant second margin, so φ is 0/0 → 0, and MI = 0.
    original = np.array([0] * 99 + [1])
    perturbed, baseline = original.copy(), np.zeros(100, dtype=int)
    t_pert, t_base = cfd.contingency(original, perturbed, 2), cfd.contingency(original, baseline, 2)
    assert cfd.mi_from_tables(t_pert) == pytest.approx(0.0807932, abs=1e-7)
    assert cfd.mi_from_tables(t_base) == 0.0
    phi_p, deg_p = cfd.phi_from_tables(t_pert)
    phi_b, deg_b = cfd.phi_from_tables(t_base)
    assert (phi_p, bool(deg_p)) == (1.0, False)
    assert (phi_b, bool(deg_b)) == (0.0, True)
    assert phi_b == matthews_corrcoef(original, baseline)  # sklearn's convention too
    assert round(float(cfd.mi_from_tables(t_pert) - cfd.mi_from_tables(t_base)), 3) == 0.081
    # An empty table has no value at all.
    empty = np.zeros((2, 2))
    assert math.isnan(cfd.mi_from_tables(empty)) and math.isnan(cfd.phi_from_tables(empty)[0])
    assert math.isnan(cfd.flip_rate_from_tables(empty))


# ---------------------------------------------------------------- paired t-test


def test_paired_t_test_by_hand_and_scipy():
    # Δ = (0.1, 0.2, 0.3, −0.1): mean 0.125; deviations −0.025, 0.075, 0.175, −0.225;
    # s² = (0.000625 + 0.005625 + 0.030625 + 0.050625)/3 = 0.0291667, s = 0.1707825;
    # t = 0.125 / (0.1707825/√4) = 1.4638501, df = 3.
    target = np.array([0.3, 0.5, 0.4, 0.1])
    baseline = np.array([0.2, 0.3, 0.1, 0.2])
    result = cfs.paired_t_test("jsd", target, baseline)
    assert result.effect == pytest.approx(0.125)
    assert result.statistic == pytest.approx(1.4638501, abs=1e-6)
    assert result.p == pytest.approx(stats.t.sf(1.4638501, 3), abs=1e-6)
    reference = stats.ttest_rel(target, baseline, alternative="greater")
    assert (result.statistic, result.p) == pytest.approx((reference.statistic, reference.pvalue))
    assert result.n == 4 and result.target == pytest.approx(0.325)


def test_paired_t_test_degenerate_inputs_say_why():
    constant = cfs.paired_t_test("kl", np.array([0.2, 0.3]), np.array([0.1, 0.2]))
    assert math.isnan(constant.p) and "constant" in constant.reason
    assert constant.effect == pytest.approx(0.1)
    single = cfs.paired_t_test("kl", np.array([0.2]), np.array([0.1]))
    assert math.isnan(single.p) and "fewer than 2" in single.reason
    empty = cfs.paired_t_test("kl", np.array([]), np.array([]))
    assert math.isnan(empty.effect) and empty.n == 0
    # Identical arms: Δ = 0 for every pair — no evidence against H0 at all, p = 1 exactly.
    same = cfs.paired_t_test("jsd", np.array([0.2, 0.3, 0.1]), np.array([0.2, 0.3, 0.1]))
    assert same.p == 1.0 and same.effect == 0.0 and "identical" in same.reason
    two = cfs.paired_t_test("jsd", np.array([0.2, 0.3, 0.1]), np.array([0.2, 0.3, 0.1]),
                            sides="two")
    assert two.p == 1.0


def test_two_sided_paired_t_test_is_scipys():
    target = np.array([0.3, 0.5, 0.4, 0.1])
    baseline = np.array([0.2, 0.3, 0.1, 0.2])
    two = cfs.paired_t_test("jsd", target, baseline, sides="two")
    reference = stats.ttest_rel(target, baseline)
    assert two.p == pytest.approx(reference.pvalue) and "two-sided" in two.test
    # t = 1.4638501 > 0: the two-sided p is twice the one-sided one.
    assert two.p == pytest.approx(2 * cfs.paired_t_test("jsd", target, baseline).p)


def test_vectorised_t_rows_match_scipy():
    rng = np.random.default_rng(1)
    delta = rng.normal(0.05, 0.2, (20, 30))
    expected = [stats.ttest_1samp(row, 0.0, alternative="greater").pvalue for row in delta]
    assert cfs.paired_t_rows(delta) == pytest.approx(expected)
    two = [stats.ttest_1samp(row, 0.0).pvalue for row in delta]
    assert cfs.paired_t_rows(delta, "two") == pytest.approx(two)
    # Δ exactly 0 (identical arms): p = 1 exactly; a constant nonzero Δ: undefined.
    assert cfs.paired_t_rows(np.zeros((2, 5))).tolist() == [1.0, 1.0]
    assert np.isnan(cfs.paired_t_rows(np.full((2, 5), 0.1))).all()


# ---------------------------------------------------------------- bootstrap


def test_bootstrap_p_is_the_share_of_replicates_against_h1():
    deltas = np.array([-0.1, 0.0, 0.2, 0.3])
    # H1 targeted > baseline (flip rate): Pr(δ* ≤ 0) = 2/4; H1 targeted < baseline (MI, φ):
    # Pr(δ* ≥ 0) = 3/4.
    assert cfs.bootstrap_p(deltas, "greater") == 0.5
    assert cfs.bootstrap_p(deltas, "less") == 0.75
    # Two-sided: min(1, 2·min(Pr(δ* ≤ 0), Pr(δ* ≥ 0))) = min(1, 2·min(2/4, 3/4)) = 1.
    assert cfs.bootstrap_p(deltas, "greater", "two") == 1.0
    assert cfs.bootstrap_p(np.array([1, 1, 1, -1]), "less", "two") == 0.5  # 2·(1/4)


def test_vectorised_replicates_equal_a_per_replicate_loop_on_the_same_resamples():
    rng = np.random.default_rng(7)
    n, k = 60, 2
    orig = rng.integers(0, k, n)
    target = np.where(rng.random(n) < 0.7, orig, 1 - orig)
    base = np.where(rng.random(n) < 0.85, orig, 1 - orig)
    draws = rng.integers(0, n, (200, n))  # 200 resamples of the items
    cells = cfs.answer_cells(orig, target, base, k)
    counts = np.stack([np.bincount(cells[d], minlength=k ** 3) for d in draws])
    tables_t, tables_b = cfs.cell_tables(counts, k)
    fast_t, fast_b = cfd.table_metrics(tables_t), cfd.table_metrics(tables_b)
    for b, d in enumerate(draws):
        o, t, s = orig[d], target[d], base[d]
        assert fast_t["fr"][b] == pytest.approx(np.mean(o != t))
        assert fast_b["fr"][b] == pytest.approx(np.mean(o != s))
        assert fast_t["mi"][b] == pytest.approx(mutual_info_score(o, t) / LN2, abs=1e-12)
        assert fast_b["mi"][b] == pytest.approx(mutual_info_score(o, s) / LN2, abs=1e-12)
        assert fast_t["phi"][b] == pytest.approx(matthews_corrcoef(o, t))
        assert fast_b["phi"][b] == pytest.approx(matthews_corrcoef(o, s))


def test_multinomial_cell_counts_resample_the_items():
    # Resampling N items with replacement ⇒ cell counts ~ Multinomial(N, observed shares):
    # each cell's count has mean N·π and variance N·π(1 − π).
    cells = np.array([0] * 30 + [3] * 50 + [5] * 20)
    counts = cfs.bootstrap_counts(cells, 8, 20000, np.random.default_rng(0))
    assert (counts.sum(axis=1) == 100).all()
    for cell, share in ((0, 0.3), (3, 0.5), (5, 0.2)):
        assert counts[:, cell].mean() == pytest.approx(100 * share, rel=0.01)
        assert counts[:, cell].var() == pytest.approx(100 * share * (1 - share), rel=0.05)
    assert counts[:, [1, 2, 4, 6, 7]].sum() == 0


def test_paired_bootstrap_detects_a_clear_effect_and_not_a_null_one():
    rng = np.random.default_rng(11)
    n = 300
    orig = rng.integers(0, 2, n)
    noisy = np.where(rng.random(n) < 0.5, orig, 1 - orig)   # flips 25%
    quiet = np.where(rng.random(n) < 0.95, orig, 1 - orig)  # flips 2.5%
    results = {r.measure: r for r in cfs.paired_bootstrap(orig, noisy, quiet, 2, n_boot=500,
                                                         rng=np.random.default_rng(0))}
    assert results["fr"].effect > 0.1 and results["fr"].p < 0.01
    assert results["mi"].effect < 0 and results["mi"].p < 0.01
    assert results["phi"].effect < 0 and results["phi"].p < 0.01
    # Same answers in both arms: δ* = 0 in every replicate, which is against H1 → p = 1.
    same = {r.measure: r for r in cfs.paired_bootstrap(orig, noisy, noisy, 2, n_boot=200)}
    assert all(same[m].p == 1.0 and same[m].effect == 0.0 for m in cfd.AGGREGATE)


def test_paired_bootstrap_degenerate_inputs():
    none = cfs.paired_bootstrap(np.array([-1, 0]), np.array([0, -1]), np.array([0, 0]), 2)
    assert all(math.isnan(r.p) and r.n == 0 and "no pairs" in r.reason for r in none)
    constant = {r.measure: r for r in cfs.paired_bootstrap(
        np.zeros(10, int), np.zeros(10, int), np.zeros(10, int), 2, n_boot=50)}
    assert constant["phi"].target == 0.0 and "constant margin" in constant["phi"].reason
    assert constant["mi"].target == 0.0 and constant["mi"].reason == ""


# ---------------------------------------------------------------- regression


def test_difference_model_by_hand():
    # Δ = (1, 2, −1, −2), d = (+1, +1, −1, −1): β̂ = Σ dΔ / Σ d² = (1 + 2 + 1 + 2)/4 = 1.5;
    # residuals Δ − β̂d = (−0.5, 0.5, 0.5, −0.5): SSR = 1, σ̂² = 1/3, SE = √(σ̂²/Σd²) = √(1/12)
    # = 0.2886751; t = 1.5/0.2886751 = 5.1961524, df = 3.
    result = cfs.difference_model(np.array([1.0, 2.0, -1.0, -2.0]), np.array([1, 1, -1, -1]),
                                 alternative="greater")
    assert result.effect == pytest.approx(1.5)
    assert result.se == pytest.approx(0.2886751, abs=1e-7)
    assert result.statistic == pytest.approx(5.1961524, abs=1e-6)
    assert result.p == pytest.approx(stats.t.sf(5.1961524, 3), abs=1e-9)
    assert result.p_two_sided == pytest.approx(2 * stats.t.sf(5.1961524, 3), abs=1e-9)
    less = cfs.difference_model(np.array([1.0, 2.0, -1.0, -2.0]), np.array([1, 1, -1, -1]))
    assert less.p == pytest.approx(1 - result.p)  # H1: β < 0 against a positive β̂
    beta, *_ = np.linalg.lstsq(np.array([[1.0], [1.0], [-1.0], [-1.0]]),
                               np.array([1.0, 2.0, -1.0, -2.0]), rcond=None)
    assert beta[0] == pytest.approx(1.5)


def test_difference_model_degenerate_inputs():
    exact = cfs.difference_model(np.array([1.0, -1.0, 1.0]), np.array([1, -1, 1]))
    assert exact.effect == pytest.approx(1.0) and math.isnan(exact.p)
    assert "residual" in exact.reason
    assert "fewer than 2" in cfs.difference_model(np.array([1.0]), np.array([1])).reason
    # Identical arms: Δ = 0 for every item, β̂ = 0, p = 1 exactly (one- and two-sided).
    for sides in ("one", "two"):
        same = cfs.difference_model(np.zeros(4), np.array([1, -1, 1, 1]), sides=sides)
        assert (same.effect, same.p, same.p_two_sided) == (0.0, 1.0, 1.0)


def test_level_model_matches_a_hand_built_cluster_sandwich():
    rng = np.random.default_rng(5)
    n = 40
    z = rng.normal(0, 2, n)
    d = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    item_effect = rng.normal(0, 0.5, n)
    y_base = 0.2 + 0.9 * z + item_effect + rng.normal(0, 0.3, n)
    y_pert = 0.2 + 0.9 * z - 0.4 * d + item_effect + rng.normal(0, 0.3, n)
    result = cfs.level_model(y_pert, y_base, z, d, np.arange(n))
    # Independent computation: OLS on the stacked rows, then the cluster-robust sandwich
    # V = c·(X'X)⁻¹ (Σ_g X_g'u_g u_g'X_g) (X'X)⁻¹ with statsmodels' small-sample factor
    # c = G/(G − 1)·(N − 1)/(N − K).
    X = np.column_stack([np.ones(2 * n), np.concatenate([z, z]),
                         np.concatenate([np.zeros(n), d])])
    y = np.concatenate([y_base, y_pert])
    groups = np.concatenate([np.arange(n), np.arange(n)])
    beta = np.linalg.solve(X.T @ X, X.T @ y)
    u = y - X @ beta
    meat = sum(np.outer(X[groups == g].T @ u[groups == g], X[groups == g].T @ u[groups == g])
               for g in range(n))
    bread = np.linalg.inv(X.T @ X)
    factor = n / (n - 1) * (2 * n - 1) / (2 * n - 3)
    se = math.sqrt(factor * (bread @ meat @ bread)[2, 2])
    assert result.effect == pytest.approx(beta[2])
    assert result.se == pytest.approx(se)
    # Reference: Student's t with G − 1 = 39 degrees of freedom (not the normal).
    assert result.p == pytest.approx(stats.t.cdf(beta[2] / se, n - 1))  # H1: β < 0
    assert result.p_two_sided == pytest.approx(2 * stats.t.sf(abs(beta[2] / se), n - 1))
    assert result.effect < 0 and result.p < 0.01
    two = cfs.level_model(y_pert, y_base, z, d, np.arange(n), sides="two")
    assert two.p == pytest.approx(result.p_two_sided)


def test_level_model_two_items_uses_t_with_one_degree_of_freedom():
    # G = 2 clusters: t(1). With the normal reference a tiny β̂ came out "significant".
    z = np.array([0.3, -1.2])
    y_base = z + np.array([0.01, -0.02])
    y_pert = z + np.array([-0.05, 0.01])
    d = np.array([1.0, 1.0])
    result = cfs.level_model(y_pert, y_base, z, d, np.arange(2))
    t = result.statistic
    assert result.p == pytest.approx(stats.t.cdf(t, 1))
    assert result.p > stats.norm.cdf(t)  # the t(1) tail is heavier than the normal's


def test_level_model_identical_arms_give_p_one():
    z = np.array([0.3, -1.2, 0.5])
    same = cfs.level_model(z + 0.1, z + 0.1, z, np.array([1.0, -1.0, 1.0]), np.arange(3))
    assert (same.effect, same.p) == (0.0, 1.0) and "identical" in same.reason


def test_level_model_with_constant_z_is_not_identified():
    result = cfs.level_model(np.ones(5), np.zeros(5), np.ones(5), np.ones(5), np.arange(5))
    assert math.isnan(result.p) and "rank-deficient" in result.reason


# ---------------------------------------------------------------- corrections


def test_bonferroni_and_holm_by_hand_and_statsmodels():
    from statsmodels.stats.multitest import multipletests

    p = [0.01, 0.02, 0.03, math.nan]
    # Bonferroni, m = 3 (the undefined test is not in the family): 0.03, 0.06, 0.09.
    assert cfs.adjust(p, "bonferroni")[:3] == pytest.approx([0.03, 0.06, 0.09])
    # Holm: sorted 0.01·3 = 0.03, 0.02·2 = 0.04, 0.03·1 = 0.03 → running max 0.03, 0.04, 0.04.
    assert cfs.adjust(p, "holm")[:3] == pytest.approx([0.03, 0.04, 0.04])
    assert math.isnan(cfs.adjust(p, "holm")[3])
    assert cfs.adjust(p, "holm")[:3] == pytest.approx(multipletests(p[:3], method="holm")[1])
    assert np.isnan(cfs.adjust([math.nan], "bonferroni")).all()


def _comparison(target: str, kind: str = "main", task: str = "t", n: int = 30,
                seed: int = 0) -> cfc.Comparison:
    rng = np.random.default_rng(seed)
    p = rng.dirichlet([2, 2], n)
    q_t = rng.dirichlet([2, 2], n)
    q_b = rng.dirichlet([2, 2], n)
    return cfc.Comparison("m", target, task, "adjusted paraphrase", kind, ("Yes", "No"),
                         np.arange(n), p.argmax(1), q_t.argmax(1), q_b.argmax(1), p, q_t, q_b,
                         np.ones(n))


def test_families_and_corrections_in_analyse():
    frame = cfc.analyse([_comparison("gender_swap"), _comparison("M2_sex", seed=1),
                        _comparison("control_recall", "check", seed=2)], n_boot=100)
    main = frame[(frame["kind"] == "main") & (frame["measure"] == "jsd")]
    assert main["family"].nunique() == 1 and (main["family_size"] == 2).all()
    assert main["p_bonferroni"].tolist() == pytest.approx(np.minimum(main["p"] * 2, 1).tolist())
    check = frame[frame["kind"] == "check"]
    assert (check["family_size"] <= 1).all()  # a check is its own hypothesis
    assert check["p_bonferroni"].tolist() == pytest.approx(check["p"].tolist(), nan_ok=True)
    assert not frame[frame["kind"] == "check"]["measure"].isin(cfd.REGRESSION).any()
    assert set(frame[frame["kind"] == "main"]["measure"]) == set(cfd.METRICS) | set(cfd.REGRESSION)


def test_a_comparison_gets_the_same_bootstrap_whatever_else_is_analysed():
    alone = cfc.analyse([_comparison("gender_swap")], n_boot=200)
    together = cfc.analyse([_comparison("M2_sex", seed=4), _comparison("gender_swap")],
                          n_boot=200)
    mine = together[together["target"] == "gender_swap"].reset_index(drop=True)
    assert mine["p"].tolist() == pytest.approx(alone["p"].tolist(), nan_ok=True)
