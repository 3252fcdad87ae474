"""Seed 000 tests: the one-sided paired t-test on Δᵢ, the paired bootstrap of flip rate/MI/φ,
the difference and level regressions (Eq. 5, Eq. 7), and the multiple-testing corrections.

Every test is one-sided by default (§3.4) and two-sided with `sides='two'` (the authors'
code). The bootstrap decides each replicate on the exact sign of δ* (`exact`).

The paired bootstrap resamples *items*, so all it needs per replicate is how often each
joint (original, targeted, baseline) answer cell was drawn: a multinomial draw over the k³
cells with the observed cell frequencies, which is exactly the distribution of those counts
under resampling N items with replacement. Every replicate's 2×2 (k×k) tables, and from
them flip rate, MI and φ, follow from the counts without touching the items.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from analysis.counterfactual.definitions import (
    AGGREGATE,
    H1,
    N_BOOT,
    Alternative,
    Sides,
    table_metrics,
)
from analysis.counterfactual.exact import metric_sign


# ---------------------------------------------------------------- tests


@dataclass(frozen=True)
class TestResult:
    """One test of a targeted perturbation against a baseline.

    Attributes:
        measure: 'mi', 'phi', 'fr', 'jsd', 'kl', 'beta_diff' or 'beta_level'.
        effect: targeted − baseline (the paper's "observed difference"); β̂ for regressions.
        target: the measure under the targeted edit (mean Δ's first term for per-sample).
        baseline: the measure under the baseline edit.
        statistic: t (t-test, regression); the bootstrap has none.
        se: standard error (regressions); NaN otherwise.
        p: p-value, one-sided in the direction of H1 unless the test was run two-sided
            (`test` then says so); NaN when undefined (see `reason`).
        n: pairs (items) the test rests on.
        test: 'paired t', 'bootstrap B=…', 'OLS', 'OLS cluster(item), t(G−1)' (+ ' (two-sided)').
        reason: why the value or p is NaN, or what is degenerate; '' when nothing is.
        p_two_sided: regressions only.
    """

    __test__ = False  # not a pytest class

    measure: str
    effect: float
    target: float
    baseline: float
    statistic: float
    se: float
    p: float
    n: int
    test: str
    reason: str = ""
    p_two_sided: float = math.nan


def paired_t_test(measure: str, d_target: np.ndarray, d_baseline: np.ndarray, *,
                  sides: Sides = Sides.ONE) -> TestResult:
    """Paired t-test on Δᵢ = d(pᵢ, p′ᵢ) − d(pᵢ, p″ᵢ); one-sided H1: E[Δ] > 0 (Eq. 6).

    Args:
        measure: 'jsd' or 'kl'.
        d_target: per-item divergence under the targeted edit.
        d_baseline: per-item divergence under the baseline edit (same items, same order).
        sides: 'one' (the paper's H1: E[Δ] > 0) or 'two' (the authors' code).

    Returns:
        The result. Δ = 0 for every pair (identical arms) gives p = 1 exactly: no evidence
        at all against H0; p is NaN with a reason for fewer than two pairs or a constant
        nonzero Δ (t = ±∞ by rounding, not by the data).
    """
    from scipy import stats

    sides = Sides(sides)  # a bare string that is neither raises here, not later
    x, y = np.asarray(d_target, dtype=float), np.asarray(d_baseline, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    n = int(x.size)
    mean_t = float(x.mean()) if n else math.nan
    mean_b = float(y.mean()) if n else math.nan
    delta = x - y
    effect = float(delta.mean()) if n else math.nan
    test = "paired t" if sides is Sides.ONE else "paired t (two-sided)"
    if n < 2:
        return TestResult(measure, effect, mean_t, mean_b, math.nan, math.nan, math.nan, n,
                          test, "fewer than 2 pairs")
    if not delta.any():
        return TestResult(measure, 0.0, mean_t, mean_b, math.nan, math.nan, 1.0, n, test,
                          "Δ = 0 for every pair (identical arms): p = 1")
    if _flat_rows(delta, np.abs(np.concatenate([x, y])).max()):
        return TestResult(measure, effect, mean_t, mean_b, math.nan, math.nan, math.nan, n,
                          test, "Δ is constant: t undefined")
    result = stats.ttest_1samp(delta, 0.0,
                               alternative="greater" if sides is Sides.ONE else "two-sided")
    return TestResult(measure, effect, mean_t, mean_b, float(result.statistic), math.nan,
                      float(result.pvalue), n, test)


FLAT_RELATIVE = 1e-9
"""Δ counts as constant when its SD is below this share of the data's scale: differences
of divergences that are equal up to rounding (0.3 − 0.2 vs 0.2 − 0.1) must not give t ≈ 10¹⁶."""


def _flat_rows(delta: np.ndarray, scale: float | np.ndarray = 0.0) -> np.ndarray:
    """Whether each row of Δ is constant up to rounding (SD ≤ `FLAT_RELATIVE` × scale)."""
    sd = delta.std(axis=-1, ddof=1) if delta.shape[-1] > 1 else np.zeros(delta.shape[:-1])
    size = np.maximum(np.abs(delta).max(axis=-1), scale)
    return sd <= FLAT_RELATIVE * size


def paired_t_rows(delta: np.ndarray, sides: Sides = Sides.ONE) -> np.ndarray:
    """One-sample t-test p-value of each row of `delta` at once (H1: mean > 0, or two-sided).

    The same test as `paired_t_test`, vectorised for the power simulation; a row that is
    exactly 0 gives p = 1, any other row with zero variance NaN (counted as "not rejected").
    """
    from scipy import stats

    sides = Sides(sides)
    delta = np.asarray(delta, dtype=float)
    n = delta.shape[-1]
    if n < 2:
        return np.full(delta.shape[:-1], np.nan)
    mean = delta.mean(axis=-1)
    sd = delta.std(axis=-1, ddof=1)
    flat = _flat_rows(delta)  # e.g. every Δ exactly 0 at σ_pert = σ = 0
    with np.errstate(invalid="ignore", divide="ignore"):
        t = mean / (sd / math.sqrt(n))
        p = stats.t.sf(t, n - 1) if sides is Sides.ONE else 2 * stats.t.sf(np.abs(t), n - 1)
    zero = ~delta.any(axis=-1)
    return np.where(zero, 1.0, np.where(flat, np.nan, p))


def answer_cells(orig: np.ndarray, target: np.ndarray, base: np.ndarray, k: int) -> np.ndarray:
    """The joint (original, targeted, baseline) answer of each item as one cell code < k³."""
    return (np.asarray(orig) * k + np.asarray(target)) * k + np.asarray(base)


def cell_tables(counts: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(original × targeted, original × baseline) k×k tables from (..., k³) cell counts."""
    counts = np.asarray(counts, dtype=float)
    pair = np.repeat(np.eye(k * k), k, axis=0)  # cell (o, t, b) → (o, t)
    skip = np.zeros((k ** 3, k * k))  # cell (o, t, b) → (o, b)
    cell = np.arange(k ** 3)
    skip[cell, (cell // (k * k)) * k + cell % k] = 1.0
    shape = (*counts.shape[:-1], k, k)
    return (counts @ pair).reshape(shape), (counts @ skip).reshape(shape)


def bootstrap_counts(cells: np.ndarray, n_cells: int, n_boot: int,
                     rng: np.random.Generator) -> np.ndarray:
    """Cell counts of `n_boot` resamples of the items with replacement: (n_boot, n_cells).

    Drawing N items uniformly with replacement and counting their cells is a multinomial
    draw with the observed cell frequencies, so that is what is drawn (N·B index draws
    become B·k³ binomial draws).
    """
    observed = np.bincount(cells, minlength=n_cells).astype(float)
    n = int(observed.sum())
    return rng.multinomial(n, observed / n, size=n_boot)


def bootstrap_p(signs: np.ndarray, alternative: Alternative, sides: Sides = Sides.ONE
                ) -> np.ndarray:
    """The bootstrap p from the replicates' δ* (or their exact signs, `exact.metric_sign`).

    One-sided, §3.4: the share of replicates inconsistent with H1 — Pr(δ* ≤ 0) when H1 says
    targeted > baseline (flip rate), Pr(δ* ≥ 0) when it says targeted < baseline (MI, φ); a
    tie δ* = 0 counts against H1. Two-sided (the authors' code): min(1, 2·min(Pr(δ* ≤ 0),
    Pr(δ* ≥ 0))). Replicates with an undefined δ* count as inconsistent either way. The
    shares are counts over B, so identical arms (every δ* = 0) give p = 1 exactly.
    """
    alternative, sides = Alternative(alternative), Sides(sides)
    signs = np.asarray(signs, dtype=float)
    bad = ~np.isfinite(signs)
    low = (bad | (signs <= 0)).mean(axis=0)
    high = (bad | (signs >= 0)).mean(axis=0)
    one = low if alternative is Alternative.GREATER else high
    if sides is Sides.ONE:
        return one
    return np.minimum(1.0, 2.0 * np.minimum(low, high))


def replicate_signs(rep_t: dict[str, np.ndarray], rep_b: dict[str, np.ndarray],
                    tables_t: np.ndarray, tables_b: np.ndarray) -> dict[str, np.ndarray]:
    """Exact sign of δ* per aggregate metric and replicate (see `exact.metric_sign`)."""
    return {metric: metric_sign(metric, tables_t, tables_b, rep_t[metric], rep_b[metric])
            for metric in AGGREGATE}


def paired_bootstrap(orig: np.ndarray, target: np.ndarray, base: np.ndarray, k: int, *,
                     n_boot: int = N_BOOT, rng: np.random.Generator | None = None,
                     sides: Sides = Sides.ONE) -> list[TestResult]:
    """The paired nonparametric bootstrap test of flip rate, MI and φ (§3.4).

    Items are resampled with replacement `n_boot` times; in each replicate the metric is
    computed for the targeted and the baseline pairs of the same items and δ* = Ψ*_targeted
    − Ψ*_baseline; p is `bootstrap_p` in the metric's H1 direction, on the *exact* sign of
    δ* (integer counts: a replicate where both arms are equal is a tie, whatever the floats).

    Args:
        orig, target, base: answer codes (0..k−1) of the same items; items where any is −1
            are left out.
        k: number of answer labels.
        n_boot: replicates B.
        rng: random generator (default: seeded with 0).
        sides: 'one' (§3.4) or 'two' (the authors' code).

    Returns:
        One result per metric, in the order MI, φ, flip rate.
    """
    sides = Sides(sides)
    rng = rng if rng is not None else np.random.default_rng(0)
    o, t, b = (np.asarray(x, dtype=int) for x in (orig, target, base))
    keep = (o >= 0) & (t >= 0) & (b >= 0)
    o, t, b = o[keep], t[keep], b[keep]
    n = int(o.size)
    test = f"bootstrap B={n_boot}" + ("" if sides is Sides.ONE else " (two-sided)")
    if n == 0:
        return [TestResult(m, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan, 0,
                           test, "no pairs with all three answers") for m in AGGREGATE]
    cells = answer_cells(o, t, b, k)
    observed = np.bincount(cells, minlength=k ** 3)
    obs_t, obs_b = (table_metrics(x) for x in cell_tables(observed, k))
    if n_boot > 0:
        tables_t, tables_b = cell_tables(bootstrap_counts(cells, k ** 3, n_boot, rng), k)
        rep_t, rep_b = table_metrics(tables_t), table_metrics(tables_b)
        signs = replicate_signs(rep_t, rep_b, tables_t, tables_b)
    results = []
    for metric in AGGREGATE:
        value_t, value_b = float(obs_t[metric]), float(obs_b[metric])
        notes = []
        if metric == "phi":
            for arm, flags in (("targeted", obs_t["phi_degenerate"]),
                               ("baseline", obs_b["phi_degenerate"])):
                if bool(flags):
                    notes.append(f"{arm} table has a constant margin: φ set to 0")
        if n_boot > 0:
            p = float(bootstrap_p(signs[metric], H1[metric], sides))
        else:
            p = math.nan
            notes.append("no bootstrap replicates (B = 0)")
        results.append(TestResult(metric, value_t - value_b, value_t, value_b, math.nan,
                                  math.nan, p, n, test, "; ".join(notes)))
    return results


# ---------------------------------------------------------------- regression


def _sided(beta: float, p_two: float, alternative: Alternative, sides: Sides) -> float:
    """The one-sided p in H1's direction from a symmetric test's two-sided p (or that p)."""
    if not (math.isfinite(beta) and math.isfinite(p_two)):
        return math.nan
    if sides is Sides.TWO:
        return p_two
    half = p_two / 2.0
    agrees = beta < 0 if alternative is Alternative.LESS else beta > 0
    return half if agrees else 1.0 - half


def _regression_nan(measure: str, n: int, test: str, reason: str,
                    beta: float = math.nan) -> TestResult:
    return TestResult(measure, beta, math.nan, math.nan, math.nan, math.nan, math.nan, n, test,
                      reason)


def _identical(measure: str, n: int, test: str) -> TestResult:
    return TestResult(measure, 0.0, math.nan, math.nan, math.nan, 0.0, 1.0, n, test,
                      "y_pert = y_base for every item (identical arms): β̂ = 0, p = 1", 1.0)


def difference_model(delta: np.ndarray, d: np.ndarray, *,
                     alternative: Alternative = Alternative.LESS,
                     sides: Sides = Sides.ONE) -> TestResult:
    """Eq. 5: Δᵢ = β_pert·dᵢ + εᵢ, Δᵢ = y_perturbed,i − y_baseline,i, OLS without intercept.

    Args:
        delta: per-item outcome differences (y = `logit_first` of each prompt).
        d: signed perturbation indicator, +1 or −1 per item.
        alternative: H1 of the one-sided t-test on β_pert: 'less' (β < 0) or 'greater'.
        sides: 'one' (§3.4's one-sided t-test) or 'two' (the authors' code).

    Returns:
        β̂ as `effect`, its SE, t (df = n − 1), p (and the two-sided p). Δ = 0 for every
        item gives p = 1 exactly.
    """
    import statsmodels.api as sm

    alternative, sides = Alternative(alternative), Sides(sides)
    delta, d = np.asarray(delta, dtype=float), np.asarray(d, dtype=float)
    keep = np.isfinite(delta) & np.isfinite(d) & (d != 0)
    delta, d = delta[keep], d[keep]
    n = int(delta.size)
    test = "OLS" if sides is Sides.ONE else "OLS (two-sided)"
    if n < 2:
        return _regression_nan("beta_diff", n, test, "fewer than 2 pairs")
    if not delta.any():
        return _identical("beta_diff", n, test)
    fit = sm.OLS(delta, d[:, None]).fit()
    beta, se = float(fit.params[0]), float(fit.bse[0])
    if not se > 0:
        return _regression_nan("beta_diff", n, test, "no residual variance: t undefined", beta)
    p_two = float(fit.pvalues[0])
    return TestResult("beta_diff", beta, math.nan, math.nan, float(fit.tvalues[0]), se,
                      _sided(beta, p_two, alternative, sides), n, test, "", p_two)


def level_model(y_target: np.ndarray, y_baseline: np.ndarray, z: np.ndarray, d: np.ndarray,
                groups: np.ndarray, *, alternative: Alternative = Alternative.LESS,
                sides: Sides = Sides.ONE) -> TestResult:
    """Eq. 7 (Appendix A): yᵢ = β0 + β1·zᵢ + β_pert·dᵢ + εᵢ on stacked baseline (d = 0) and
    perturbed (d = ±1) rows, z = the original prompt's output, SEs clustered by item.

    The reference distribution is Student's t with G − 1 degrees of freedom (G clusters),
    with statsmodels' small-sample factor G/(G − 1)·(N − 1)/(N − K) on the sandwich: §3.4
    asks for "a one-sided t-test", and with the normal reference the null false-positive
    rate at α = 0.05 was 0.113 with 3 items and 0.079 with 5 (issue 23); t(G − 1) is the
    reference Cameron & Miller (2015, "A Practitioner's Guide to Cluster-Robust
    Inference", J. Human Resources 50(2), §VI.A) recommend for few clusters, and Stata's
    default for `vce(cluster)`.

    Returns:
        β̂_pert as `effect`, its clustered SE, t statistic, p (and the two-sided p).
    """
    import statsmodels.api as sm

    alternative, sides = Alternative(alternative), Sides(sides)
    arrays = [np.asarray(a, dtype=float) for a in (y_target, y_baseline, z, d)]
    groups = np.asarray(groups)
    keep = np.logical_and.reduce([np.isfinite(a) for a in arrays]) & (arrays[3] != 0)
    y_t, y_b, z, d = (a[keep] for a in arrays)
    groups = groups[keep]
    n = int(y_t.size)
    test = "OLS cluster(item), t(G−1)" + ("" if sides is Sides.ONE else " (two-sided)")
    if n < 2:
        return _regression_nan("beta_level", n, test, "fewer than 2 pairs")
    if np.array_equal(y_t, y_b):
        return _identical("beta_level", n, test)
    y = np.concatenate([y_b, y_t])
    X = np.column_stack([np.ones(2 * n), np.concatenate([z, z]),
                         np.concatenate([np.zeros(n), d])])
    if np.linalg.matrix_rank(X) < X.shape[1]:
        return _regression_nan("beta_level", n, test,
                               "design is rank-deficient (z constant?): β not identified")
    fit = sm.OLS(y, X).fit(cov_type="cluster", use_t=True,
                           cov_kwds={"groups": np.concatenate([groups, groups])})
    beta, se = float(fit.params[2]), float(fit.bse[2])
    if not se > 0:
        return _regression_nan("beta_level", n, test, "zero clustered SE: test undefined",
                               beta)
    p_two = float(fit.pvalues[2])
    return TestResult("beta_level", beta, math.nan, math.nan, float(fit.tvalues[2]), se,
                      _sided(beta, p_two, alternative, sides), n, test, "", p_two)


# ---------------------------------------------------------------- corrections


def adjust(pvalues: Sequence[float], method: str) -> np.ndarray:
    """Family-wise corrected p-values (statsmodels `multipletests`); NaN stays NaN and does
    not count in the family's size.

    Args:
        pvalues: the raw p-values of one declared family.
        method: 'bonferroni' or 'holm'.
    """
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    finite = np.isfinite(p)
    if finite.any():
        out[finite] = multipletests(p[finite], method=method)[1]
    return out
