"""Seed 000 statistics: per-sample KL/JSD, flip rate/MI/φ, paired t-test and bootstrap, regression.

The definitions of "Compared to What? Baselines and Metrics for Counterfactual Prompting"
§3.3–§3.4 and Appendix A live here and nowhere else (docs/counterfactual.md explains each
reading). Everything works on numpy arrays, vectorised over items and bootstrap replicates:

- answers are integer label codes (−1 = no answer), option distributions are (n, k) rows;
- the paired bootstrap resamples *items*, so all it needs per replicate is how often each
  joint (original, targeted, baseline) answer cell was drawn: a multinomial draw over the
  k³ cells with the observed cell frequencies, which is exactly the distribution of those
  counts under resampling N items with replacement. Every replicate's 2×2 (k×k) tables,
  and from them flip rate, MI and φ, follow from the counts without touching the items.

Degenerate inputs never crash and never give a silent number: a statistic that is not
defined is NaN and its `reason` says why; φ of a table with a constant margin is 0 by the
paper's own convention (see `phi_from_tables`), flagged in `degenerate`.
"""

from __future__ import annotations

import gc
import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

LOG_BASE = 2.0
"""Logarithm base of KL, JSD and MI. §3.3 says "JSD is symmetric and bounded in [0, 1]",
which holds for Eq. 2 only in base 2; Eqs. 1–3 share one `log`, so KL and MI are in bits too
(Table 4's Gender-remove RES cell, MI .081 beside φ 1.00, is H(0.01) = 0.081 in bits)."""

PROB_FLOOR = 1e-12
"""KL(P‖Q) is infinite where Q(k) = 0 < P(k): Q is floored at this value and renormalised
first, which caps one term near log2(1e12) ≈ 40 bits. JSD needs no floor (M ≥ P/2)."""

N_BOOT = 1000
"""Bootstrap replicates of the aggregate-metric test (§3.4: "B = 1,000 times")."""

ALPHA = 0.05
"""Significance level before correction."""

METRICS: tuple[str, ...] = ("mi", "phi", "fr", "jsd", "kl")
"""The five divergence measures, in the column order of the paper's Tables 4–7."""

AGGREGATE: tuple[str, ...] = ("mi", "phi", "fr")
"""Aggregate (per-population) metrics, tested with the paired bootstrap."""

PER_SAMPLE: tuple[str, ...] = ("jsd", "kl")
"""Per-sample metrics, tested with the one-sided paired t-test on Δᵢ."""

REGRESSION: tuple[str, ...] = ("beta_diff", "beta_level")
"""Eq. 5 (difference model) and Eq. 7 (level model, Appendix A) coefficients β_pert."""

H1: dict[str, str] = {"fr": "greater", "jsd": "greater", "kl": "greater",
                      "mi": "less", "phi": "less"}
"""Direction of H1 (targeted vs baseline) per metric, §3.4: flip rate, JSD, KL larger under
the targeted edit; MI and φ smaller ("higher MI/φ indicates more agreement")."""

LABELS: dict[str, str] = {"mi": "MI", "phi": "φ", "fr": "FR", "jsd": "JSD", "kl": "KL",
                          "beta_diff": "β̂ (difference)", "beta_level": "β̂ (level)"}
"""Display names of the measures."""

CORRECTIONS: tuple[str, ...] = ("bonferroni", "holm")
"""Multiple-testing corrections applied within each declared family (statsmodels names)."""


# ---------------------------------------------------------------- per-sample divergences


def _rows(p: np.ndarray) -> np.ndarray:
    p = np.asarray(p, dtype=float)
    return p / p.sum(axis=-1, keepdims=True)


def kl_divergence(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """KL(P‖Q) of each row, in bits (Eq. 1), Q floored at `PROB_FLOOR` and renormalised.

    Args:
        p: (..., k) distributions of the original prompts.
        q: (..., k) distributions of the modified prompts.

    Returns:
        (...) divergences ≥ 0; NaN where a row has no distribution (NaN entries).
    """
    from scipy.special import rel_entr

    p = _rows(p)
    q = _rows(np.maximum(np.asarray(q, dtype=float), PROB_FLOOR))
    return rel_entr(p, q).sum(axis=-1) / math.log(LOG_BASE)


def js_divergence(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """JSD(P‖Q) = ½KL(P‖M) + ½KL(Q‖M), M = ½(P + Q), of each row, in bits (Eq. 2; ∈ [0, 1]).

    Returns:
        (...) divergences in [0, 1]; NaN where a row has no distribution.
    """
    from scipy.special import rel_entr

    p, q = _rows(p), _rows(q)
    m = 0.5 * (p + q)
    value = 0.5 * (rel_entr(p, m).sum(axis=-1) + rel_entr(q, m).sum(axis=-1))
    return np.clip(value / math.log(LOG_BASE), 0.0, 1.0)


def logit_first(p: np.ndarray) -> np.ndarray:
    """log(P(first label) / (1 − P(first label))) per row: the regression outcome y and the
    power simulation's z (for Yes/No items exactly log(p_Yes / p_No), Appendix F)."""
    p = _rows(p)[..., 0]
    p = np.clip(p, PROB_FLOOR, 1.0 - PROB_FLOOR)
    return np.log(p) - np.log1p(-p)


# ---------------------------------------------------------------- answers


def majority_vote(codes: np.ndarray, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The categorical answer of each prompt from its k samples.

    Rule: the label parsed in most samples; a tie between labels is broken by the highest
    probability in `probs` (the prompt's option distribution) among the tied labels and
    recorded; a prompt with no parsed sample has no answer (−1).

    Args:
        codes: (n, k) label codes of the samples, −1 where a sample did not parse.
        probs: (n, L) option distribution of each prompt (L labels; NaN rows allowed).

    Returns:
        (answers (n,), tie flags (n,)); answers are codes, −1 = none.
    """
    codes = np.asarray(codes, dtype=int)
    n, labels = codes.shape[0], np.asarray(probs).shape[1]
    counts = np.zeros((n, labels), dtype=int)
    for column in codes.T:
        parsed = column >= 0
        np.add.at(counts, (np.nonzero(parsed)[0], column[parsed]), 1)
    top = counts.max(axis=1)
    tied = (counts == top[:, None]) & (top[:, None] > 0)
    tie = tied.sum(axis=1) > 1
    weights = np.where(tied, np.nan_to_num(np.asarray(probs, dtype=float), nan=0.0), -1.0)
    answers = np.where(top > 0, weights.argmax(axis=1), -1)
    return answers, tie & (top > 0)


# ---------------------------------------------------------------- aggregate metrics


def contingency(a: np.ndarray, b: np.ndarray, k: int) -> np.ndarray:
    """The k×k table of paired answers: cell [x, y] counts items answering x, then y."""
    return np.bincount(np.asarray(a) * k + np.asarray(b), minlength=k * k).reshape(k, k)


# Tables are handled flat, cell (a, b) at index a·k + b, and every sum over a table's cells or
# margins is a product with a small 0/1 matrix: numpy reduces tiny trailing axes slowly, and
# the bootstrap and the power simulation evaluate millions of 2×2 tables.


def _flat(tables: np.ndarray) -> tuple[np.ndarray, int]:
    tables = np.asarray(tables, dtype=float)
    k = tables.shape[-1]
    return tables.reshape(*tables.shape[:-2], k * k), k


def _margin_maps(k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows map (k², k), columns map (k², k), diagonal indicator (k²,))."""
    eye = np.eye(k)
    return np.repeat(eye, k, axis=0), np.tile(eye, (k, 1)), eye.ravel()


def _proportions(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    flat, k = _flat(tables)
    n = flat @ np.ones(k * k)
    with np.errstate(invalid="ignore", divide="ignore"):
        return flat / n[..., None], n, k


def flip_rate_from_tables(tables: np.ndarray) -> np.ndarray:
    """Share of off-diagonal pairs (answer changed) of each (..., k, k) table; NaN if empty."""
    p, n, k = _proportions(tables)
    return np.where(n > 0, 1.0 - p @ _margin_maps(k)[2], np.nan)


def mi_from_tables(tables: np.ndarray) -> np.ndarray:
    """Mutual information of each (..., k, k) table, in bits (Eq. 3, k×k; 0·log 0 = 0).

    Always defined for a non-empty table: a constant answer in either arm gives MI = 0.
    """
    from scipy.special import xlogy

    p, n, k = _proportions(tables)
    rows_map, cols_map, _ = _margin_maps(k)
    expected = ((p @ rows_map) @ rows_map.T) * ((p @ cols_map) @ cols_map.T)
    # xlogy(0, ·) = 0, and p > 0 implies expected > 0.
    value = (xlogy(p, p) - xlogy(p, expected)) @ np.ones(k * k) / math.log(LOG_BASE)
    return np.where(n > 0, np.maximum(value, 0.0), np.nan)


def phi_from_tables(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """φ of each (..., k, k) table (Eq. 4), and where it is degenerate.

    For k = 2 this is Eq. 4; for k > 2 labels it is the multiclass Matthews correlation
    (Gorodkin's R_K), which equals Eq. 4 on a 2×2 table and is what
    `sklearn.metrics.matthews_corrcoef` computes. When a margin is constant (every item
    gives the same answer in one arm) Eq. 4 is 0/0: φ is then **0**, the convention the
    paper's numbers imply (Table 4, Gender-remove RES, 8B: φ difference 1.00 next to MI
    difference .081 = H(0.01) bits, i.e. a perfectly agreeing perturbed table against a
    baseline table with φ = 0 and MI = 0) and sklearn's. Such cells are flagged.

    Returns:
        (φ, degenerate) arrays of the tables' batch shape; φ is NaN for an empty table.
    """
    p, n, k = _proportions(tables)
    rows_map, cols_map, diagonal = _margin_maps(k)
    rows, cols = p @ rows_map, p @ cols_map
    ones = np.ones(k)
    numerator = p @ diagonal - (rows * cols) @ ones
    with np.errstate(invalid="ignore"):
        denominator = np.sqrt((1.0 - (rows ** 2) @ ones) * (1.0 - (cols ** 2) @ ones))
    degenerate = (n > 0) & ~(denominator > 1e-15)
    phi = np.where(degenerate, 0.0, numerator / np.where(degenerate, 1.0, denominator))
    return np.where(n > 0, np.clip(phi, -1.0, 1.0), np.nan), degenerate


def table_metrics(tables: np.ndarray) -> dict[str, np.ndarray]:
    """Flip rate, MI and φ of each (..., k, k) table (and φ's degenerate flags)."""
    phi, degenerate = phi_from_tables(tables)
    return {"fr": flip_rate_from_tables(tables), "mi": mi_from_tables(tables), "phi": phi,
            "phi_degenerate": degenerate}


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
        p: one-sided p-value in the direction of H1 (NaN when undefined; see `reason`).
        n: pairs (items) the test rests on.
        test: 'paired t', 'bootstrap B=…', 'OLS', 'OLS cluster(item)'.
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


def paired_t_test(measure: str, d_target: np.ndarray, d_baseline: np.ndarray) -> TestResult:
    """One-sided paired t-test on Δᵢ = d(pᵢ, p′ᵢ) − d(pᵢ, p″ᵢ), H1: E[Δ] > 0 (Eq. 6).

    Args:
        measure: 'jsd' or 'kl'.
        d_target: per-item divergence under the targeted edit.
        d_baseline: per-item divergence under the baseline edit (same items, same order).

    Returns:
        The result; p is NaN with a reason for fewer than two pairs or constant Δ.
    """
    from scipy import stats

    x, y = np.asarray(d_target, dtype=float), np.asarray(d_baseline, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    n = int(x.size)
    mean_t = float(x.mean()) if n else math.nan
    mean_b = float(y.mean()) if n else math.nan
    delta = x - y
    effect = float(delta.mean()) if n else math.nan
    if n < 2:
        return TestResult(measure, effect, mean_t, mean_b, math.nan, math.nan, math.nan, n,
                          "paired t", "fewer than 2 pairs")
    if _flat_rows(delta, np.abs(np.concatenate([x, y])).max()):
        return TestResult(measure, effect, mean_t, mean_b, math.nan, math.nan, math.nan, n,
                          "paired t", "Δ is constant: t undefined")
    result = stats.ttest_1samp(delta, 0.0, alternative="greater")
    return TestResult(measure, effect, mean_t, mean_b, float(result.statistic), math.nan,
                      float(result.pvalue), n, "paired t")


FLAT_RELATIVE = 1e-9
"""Δ counts as constant when its SD is below this share of the data's scale: differences
of divergences that are equal up to rounding (0.3 − 0.2 vs 0.2 − 0.1) must not give t ≈ 10¹⁶."""


def _flat_rows(delta: np.ndarray, scale: float | np.ndarray = 0.0) -> np.ndarray:
    """Whether each row of Δ is constant up to rounding (SD ≤ `FLAT_RELATIVE` × scale)."""
    sd = delta.std(axis=-1, ddof=1) if delta.shape[-1] > 1 else np.zeros(delta.shape[:-1])
    size = np.maximum(np.abs(delta).max(axis=-1), scale)
    return sd <= FLAT_RELATIVE * size


def paired_t_rows(delta: np.ndarray) -> np.ndarray:
    """One-sided (H1: mean > 0) one-sample t-test p-value of each row of `delta` at once.

    The same test as `paired_t_test`, vectorised for the power simulation; a row with zero
    variance gives NaN (counted as "not rejected" there).
    """
    from scipy import stats

    delta = np.asarray(delta, dtype=float)
    n = delta.shape[-1]
    if n < 2:
        return np.full(delta.shape[:-1], np.nan)
    mean = delta.mean(axis=-1)
    sd = delta.std(axis=-1, ddof=1)
    flat = _flat_rows(delta)  # e.g. every Δ exactly 0 at σ_pert = σ = 0
    with np.errstate(invalid="ignore", divide="ignore"):
        t = mean / (sd / math.sqrt(n))
    return np.where(flat, np.nan, stats.t.sf(t, n - 1))


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


def bootstrap_p(deltas: np.ndarray, alternative: str) -> np.ndarray:
    """The paper's one-sided bootstrap p: the share of replicates inconsistent with H1.

    §3.4: Pr(δ* ≤ 0) when H1 says targeted > baseline (flip rate), Pr(δ* ≥ 0) when it says
    targeted < baseline (MI, φ). Replicates with an undefined δ* count as inconsistent.
    """
    deltas = np.asarray(deltas, dtype=float)
    bad = ~np.isfinite(deltas)
    if alternative == "greater":
        inconsistent = bad | (deltas <= 0)
    else:
        inconsistent = bad | (deltas >= 0)
    return inconsistent.mean(axis=0)


def paired_bootstrap(orig: np.ndarray, target: np.ndarray, base: np.ndarray, k: int, *,
                     n_boot: int = N_BOOT,
                     rng: np.random.Generator | None = None) -> list[TestResult]:
    """The paired nonparametric bootstrap test of flip rate, MI and φ (§3.4).

    Items are resampled with replacement `n_boot` times; in each replicate the metric is
    computed for the targeted and the baseline pairs of the same items and δ* = Ψ*_targeted
    − Ψ*_baseline; p is `bootstrap_p` in the metric's H1 direction.

    Args:
        orig, target, base: answer codes (0..k−1) of the same items; items where any is −1
            are left out.
        k: number of answer labels.
        n_boot: replicates B.
        rng: random generator (default: seeded with 0).

    Returns:
        One result per metric, in the order MI, φ, flip rate.
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    o, t, b = (np.asarray(x, dtype=int) for x in (orig, target, base))
    keep = (o >= 0) & (t >= 0) & (b >= 0)
    o, t, b = o[keep], t[keep], b[keep]
    n = int(o.size)
    test = f"bootstrap B={n_boot}"
    if n == 0:
        return [TestResult(m, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan, 0,
                           test, "no pairs with all three answers") for m in AGGREGATE]
    cells = answer_cells(o, t, b, k)
    observed = np.bincount(cells, minlength=k ** 3)
    obs_t, obs_b = (table_metrics(x) for x in cell_tables(observed, k))
    if n_boot > 0:
        rep_t, rep_b = (table_metrics(x) for x in
                        cell_tables(bootstrap_counts(cells, k ** 3, n_boot, rng), k))
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
            p = float(bootstrap_p(rep_t[metric] - rep_b[metric], H1[metric]))
        else:
            p = math.nan
            notes.append("no bootstrap replicates (B = 0)")
        results.append(TestResult(metric, value_t - value_b, value_t, value_b, math.nan,
                                  math.nan, p, n, test, "; ".join(notes)))
    return results


# ---------------------------------------------------------------- regression


def _one_sided(beta: float, p_two: float, alternative: str) -> float:
    if not (math.isfinite(beta) and math.isfinite(p_two)):
        return math.nan
    half = p_two / 2.0
    agrees = beta < 0 if alternative == "less" else beta > 0
    return half if agrees else 1.0 - half


def _regression_nan(measure: str, n: int, test: str, reason: str,
                    beta: float = math.nan) -> TestResult:
    return TestResult(measure, beta, math.nan, math.nan, math.nan, math.nan, math.nan, n, test,
                      reason)


def difference_model(delta: np.ndarray, d: np.ndarray, *, alternative: str = "less"
                     ) -> TestResult:
    """Eq. 5: Δᵢ = β_pert·dᵢ + εᵢ, Δᵢ = y_perturbed,i − y_baseline,i, OLS without intercept.

    Args:
        delta: per-item outcome differences (y = `logit_first` of each prompt).
        d: signed perturbation indicator, +1 or −1 per item.
        alternative: H1 of the one-sided t-test on β_pert: 'less' (β < 0) or 'greater'.

    Returns:
        β̂ as `effect`, its SE, t, one-sided p (and the two-sided p).
    """
    import statsmodels.api as sm

    delta, d = np.asarray(delta, dtype=float), np.asarray(d, dtype=float)
    keep = np.isfinite(delta) & np.isfinite(d) & (d != 0)
    delta, d = delta[keep], d[keep]
    n = int(delta.size)
    test = "OLS"
    if n < 2:
        return _regression_nan("beta_diff", n, test, "fewer than 2 pairs")
    fit = sm.OLS(delta, d[:, None]).fit()
    beta, se = float(fit.params[0]), float(fit.bse[0])
    if not se > 0:
        return _regression_nan("beta_diff", n, test, "no residual variance: t undefined", beta)
    p_two = float(fit.pvalues[0])
    return TestResult("beta_diff", beta, math.nan, math.nan, float(fit.tvalues[0]), se,
                      _one_sided(beta, p_two, alternative), n, test, "", p_two)


def level_model(y_target: np.ndarray, y_baseline: np.ndarray, z: np.ndarray, d: np.ndarray,
                groups: np.ndarray, *, alternative: str = "less") -> TestResult:
    """Eq. 7 (Appendix A): yᵢ = β0 + β1·zᵢ + β_pert·dᵢ + εᵢ on stacked baseline (d = 0) and
    perturbed (d = ±1) rows, z = the original prompt's output, SEs clustered by item.

    Returns:
        β̂_pert as `effect`, its clustered SE, z statistic, one-sided p (and two-sided).
    """
    import statsmodels.api as sm

    arrays = [np.asarray(a, dtype=float) for a in (y_target, y_baseline, z, d)]
    groups = np.asarray(groups)
    keep = np.logical_and.reduce([np.isfinite(a) for a in arrays]) & (arrays[3] != 0)
    y_t, y_b, z, d = (a[keep] for a in arrays)
    groups = groups[keep]
    n = int(y_t.size)
    test = "OLS cluster(item)"
    if n < 2:
        return _regression_nan("beta_level", n, test, "fewer than 2 pairs")
    y = np.concatenate([y_b, y_t])
    X = np.column_stack([np.ones(2 * n), np.concatenate([z, z]),
                         np.concatenate([np.zeros(n), d])])
    if np.linalg.matrix_rank(X) < X.shape[1]:
        return _regression_nan("beta_level", n, test,
                               "design is rank-deficient (z constant?): β not identified")
    fit = sm.OLS(y, X).fit(cov_type="cluster", cov_kwds={"groups": np.concatenate([groups,
                                                                                    groups])})
    beta, se = float(fit.params[2]), float(fit.bse[2])
    if not se > 0:
        return _regression_nan("beta_level", n, test, "zero clustered SE: test undefined",
                               beta)
    p_two = float(fit.pvalues[2])
    return TestResult("beta_level", beta, math.nan, math.nan, float(fit.tvalues[2]), se,
                      _one_sided(beta, p_two, alternative), n, test, "", p_two)


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


# ---------------------------------------------------------------- one comparison


@dataclass(frozen=True)
class Comparison:
    """One targeted perturbation against one baseline, for one model and task, paired by item.

    Answers are label codes into `labels` (−1 = none); distributions are (n, k) rows over
    `labels` (NaN rows = none). `direction` is the signed indicator dᵢ (+1/−1, NaN unknown).

    Attributes:
        model, target, task, baseline: what is compared (the report's row and column keys).
        kind: 'main' (Tables 4/5) or 'check' (recall/precision, Tables 6/7).
        labels: the answer labels, in code order.
        items: item ids (the regression's clusters).
    """

    model: str
    target: str
    task: str
    baseline: str
    kind: str
    labels: tuple[str, ...]
    items: np.ndarray
    orig: np.ndarray
    targeted: np.ndarray
    based: np.ndarray
    p_orig: np.ndarray
    p_target: np.ndarray
    p_base: np.ndarray
    direction: np.ndarray = field(default_factory=lambda: np.array([]))

    @property
    def key(self) -> str:
        """A stable name, also the bootstrap's seed material."""
        return f"{self.model}|{self.target}|{self.task}|{self.baseline}"


def compare(c: Comparison, *, n_boot: int = N_BOOT, seed: int = 0,
            alternative: str = "less", regression: bool = True) -> list[TestResult]:
    """Every test of one comparison: bootstrap (MI, φ, FR), paired t (JSD, KL), regressions.

    The bootstrap's generator is seeded by (seed, crc32 of the comparison's key), so a
    comparison gets the same replicates whatever else is analysed with it.
    """
    rng = np.random.default_rng([seed, zlib.crc32(c.key.encode())])
    k = len(c.labels)
    results = paired_bootstrap(c.orig, c.targeted, c.based, k, n_boot=n_boot, rng=rng)
    have = (np.isfinite(c.p_orig).all(axis=1) & np.isfinite(c.p_target).all(axis=1)
            & np.isfinite(c.p_base).all(axis=1)) if len(c.items) else np.zeros(0, bool)
    p, q_t, q_b = c.p_orig[have], c.p_target[have], c.p_base[have]
    results.append(paired_t_test("jsd", js_divergence(p, q_t), js_divergence(p, q_b)))
    results.append(paired_t_test("kl", kl_divergence(p, q_t), kl_divergence(p, q_b)))
    if regression:
        d = c.direction[have] if c.direction.size else np.ones(int(have.sum()))
        y_t, y_b, z = logit_first(q_t), logit_first(q_b), logit_first(p)
        results.append(difference_model(y_t - y_b, d, alternative=alternative))
        results.append(level_model(y_t, y_b, z, d, c.items[have], alternative=alternative))
    return results


# ---------------------------------------------------------------- many comparisons


def family_of(c: Comparison, measure: str) -> str:
    """The declared family a test belongs to (corrections apply within it).

    Main results (Tables 4/5): one family per (model, baseline, measure), holding every
    targeted perturbation × task — the paper's "Bonferroni correction within each group of
    12 tests" (4 perturbations × 3 tasks per metric, baseline and model). Recall/precision
    checks (Tables 6/7) are each their own hypothesis, tested at p < 0.05 as the paper
    marks them, so each check (on each task) is a family of one.
    """
    if c.kind == "check":
        return f"{c.model} · {c.baseline} · {LABELS[measure]} · {c.target} · {c.task}"
    return f"{c.model} · {c.baseline} · {LABELS[measure]}"


def analyse(comparisons: Sequence[Comparison], *, n_boot: int = N_BOOT, seed: int = 0,
            alternative: str = "less", alpha: float = ALPHA,
            correction: str = "bonferroni"):
    """Run every test of every comparison and correct within the declared families.

    Args:
        comparisons: what to test.
        n_boot: bootstrap replicates B.
        seed: bootstrap seed.
        alternative: H1 of the regression tests ('less': β_pert < 0).
        alpha: significance level after correction.
        correction: which corrected p decides `significant` ('bonferroni' or 'holm').

    Returns:
        A DataFrame, one row per test: model, baseline, target, task, kind, measure, effect,
        target_value, baseline_value, statistic, se, p, p_two_sided, n, test, reason,
        family, family_size, p_bonferroni, p_holm, significant.
    """
    import pandas as pd

    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {CORRECTIONS}, got {correction!r}")
    rows = []
    for c in comparisons:
        for r in compare(c, n_boot=n_boot, seed=seed, alternative=alternative,
                         regression=c.kind == "main"):
            rows.append({"model": c.model, "baseline": c.baseline, "target": c.target,
                         "task": c.task, "kind": c.kind, "measure": r.measure,
                         "effect": r.effect, "target_value": r.target,
                         "baseline_value": r.baseline, "statistic": r.statistic,
                         "se": r.se, "p": r.p, "p_two_sided": r.p_two_sided, "n": r.n,
                         "test": r.test, "reason": r.reason,
                         "family": family_of(c, r.measure)})
    columns = ["model", "baseline", "target", "task", "kind", "measure", "effect",
               "target_value", "baseline_value", "statistic", "se", "p", "p_two_sided", "n",
               "test", "reason", "family", "family_size", "p_bonferroni", "p_holm",
               "significant"]
    frame = pd.DataFrame(rows, columns=[c for c in columns if c not in
                                        ("family_size", "p_bonferroni", "p_holm",
                                         "significant")])
    frame["family_size"] = 0
    for method in CORRECTIONS:
        frame[f"p_{method}"] = np.nan
    # statsmodels' Holm branch calls gc.collect(), which walks every live object (0.3 s a
    # call with pandas and statsmodels loaded); freezing the heap first makes it instant.
    gc.freeze()
    try:
        for _, index in frame.groupby("family", sort=False).groups.items():
            p = frame.loc[index, "p"].to_numpy(dtype=float)
            frame.loc[index, "family_size"] = int(np.isfinite(p).sum())
            for method in CORRECTIONS:
                frame.loc[index, f"p_{method}"] = adjust(p, method)
    finally:
        gc.unfreeze()
    frame["significant"] = frame[f"p_{correction}"] < alpha
    return frame[columns]
