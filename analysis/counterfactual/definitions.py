"""Seed 000 definitions: the paper's constants and measures — KL/JSD per sample, answers by
majority vote, and flip rate/MI/φ of contingency tables.

The definitions of "Compared to What? Baselines and Metrics for Counterfactual Prompting"
§3.3–§3.4 and Appendix A live in this package and nowhere else (docs/counterfactual.md
explains each reading): the measures here, the tests in `statistics`, what is compared and
how families are corrected in `comparison`. Everything works on numpy arrays, vectorised
over items and bootstrap replicates: answers are integer label codes (−1 = no answer),
option distributions are (n, k) rows.

Degenerate inputs never crash and never give a silent number: a statistic that is not
defined is NaN and its `reason` says why; φ of a table with a constant margin is 0 by the
paper's own convention (see `phi_from_tables`), flagged in `degenerate`.
"""
from __future__ import annotations

import math
from enum import StrEnum

import numpy as np

LOG_BASE = 2.0
"""Logarithm base of KL, JSD and MI. §3.3 says "JSD is symmetric and bounded in [0, 1]",
which holds for Eq. 2 only in base 2; Eqs. 1–3 share one `log`, so KL and MI are in bits too
(Table 4's Gender-remove RES cell, MI .081 beside φ 1.00, is H(0.01) = 0.081 in bits)."""

PROB_FLOOR = 1e-12
"""KL(P‖Q) is infinite where Q(k) = 0 < P(k): Q is floored at this value and renormalised
first, which caps one term near log2(1e12) ≈ 40 bits. JSD needs no floor (M ≥ P/2)."""

class KlFloor(StrEnum):
    """`--kl-floor` readings of KL (Eq. 1)."""

    Q = "q"
    """Only Q, at 1e-12 (default): the paper defines KL without a floor, so PAW floors only
    where Eq. 1 is infinite."""
    BOTH = "both"
    """P and Q at 1e-10: the authors' released code (as reviewed in issue 23)."""


KL_FLOORS: dict[KlFloor, tuple[float, bool]] = {KlFloor.Q: (PROB_FLOOR, False),
                                                KlFloor.BOTH: (1e-10, True)}
"""Per reading: (floor, whether P is floored too). Both renormalise after flooring."""


class Sides(StrEnum):
    """Sidedness of every test of a study (the t-tests, the bootstrap, the regressions and
    the power simulation alike: one setting, read once)."""

    ONE = "one"
    """§3.4 (default): "one-sided paired t-test", "one-sided p-value is the proportion of
    bootstrap replicates inconsistent with the directional alternative", one-sided
    regression test."""
    TWO = "two"
    """`--two-sided`: the authors' released code, which is two-sided in the t-test, the
    bootstrap and the power simulation — so its power curves sit below PAW's default ones
    at the same α."""


class Alternative(StrEnum):
    """Direction of a one-sided H1 (targeted vs baseline)."""

    LESS = "less"
    GREATER = "greater"


class Correction(StrEnum):
    """`--correction`: which p marks significance, within each declared family."""

    BONFERRONI = "bonferroni"
    """The paper's (§4.1)."""
    HOLM = "holm"
    NONE = "none"
    """The raw p."""


ANALYSIS_SETTINGS: dict[str, type[StrEnum]] = {
    "correction": Correction, "sides": Sides, "kl_floor": KlFloor, "alternative": Alternative}
"""A study's stored analysis settings (`audits.config_json`, written by `paw study`) and
their types: read as members where a study is loaded (`data.resolve_study`)."""

MIN_ITEMS = 15
"""Fewer paired items than this and the report warns: in the bench's own null design, the
smallest N measured at which every test's null false-positive rate lies in [0.03, 0.07]
(`bench/counterfactual_fpr.py --items 3,5,10,15,20,30`, docs/counterfactual.md). That holds
in that design only: across three null designs (`--designs all`) no test rejects more than
0.068 from 15 items on, but MI stays conservative in the other two (0.001–0.011 up to 100
items) and φ is at 0.016 at 15 in one. Below 15 the bootstrap (MI, φ, FR) and the t-tests
(JSD, KL) are conservative in every design measured — at 5 items they reject 0–2.6% instead
of 5% — so a non-significant result there says little."""

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

H1: dict[str, Alternative] = {"fr": Alternative.GREATER, "jsd": Alternative.GREATER,
                              "kl": Alternative.GREATER, "mi": Alternative.LESS,
                              "phi": Alternative.LESS}
"""Direction of H1 (targeted vs baseline) per metric, §3.4: flip rate, JSD, KL larger under
the targeted edit; MI and φ smaller ("higher MI/φ indicates more agreement")."""

LABELS: dict[str, str] = {"mi": "MI", "phi": "φ", "fr": "FR", "jsd": "JSD", "kl": "KL",
                          "beta_diff": "β̂ (difference)", "beta_level": "β̂ (level)"}
"""Display names of the measures."""

CORRECTIONS: tuple[Correction, ...] = (Correction.BONFERRONI, Correction.HOLM)
"""Multiple-testing corrections applied within each declared family (statsmodels names)."""


# ---------------------------------------------------------------- per-sample divergences


def _rows(p: np.ndarray) -> np.ndarray:
    p = np.asarray(p, dtype=float)
    return p / p.sum(axis=-1, keepdims=True)


def kl_divergence(p: np.ndarray, q: np.ndarray, floor: KlFloor | str = KlFloor.Q
                  ) -> np.ndarray:
    """KL(P‖Q) of each row, in bits (Eq. 1), floored as `KL_FLOORS[floor]` says and renormalised.

    Args:
        p: (..., k) distributions of the original prompts.
        q: (..., k) distributions of the modified prompts.
        floor: 'q' (Q at 1e-12, the default) or 'both' (P and Q at 1e-10, the authors' code).

    Returns:
        (...) divergences ≥ 0; NaN where a row has no distribution (NaN entries).
    """
    from scipy.special import rel_entr

    value, floor_p = KL_FLOORS[KlFloor(floor)]  # ValueError for a string that is none
    p = np.asarray(p, dtype=float)
    p = _rows(np.maximum(p, value) if floor_p else p)
    q = _rows(np.maximum(np.asarray(q, dtype=float), value))
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


# ---------------------------------------------------------------- job roles


class StudyRole(StrEnum):
    """Job roles of a seed-000 study (`jobs.role`), each asked k times; members compare equal
    to the stored strings (docs/counterfactual.md)."""

    ORIGINAL = "original"
    """The original prompt pᵢ."""
    TARGET = "target"
    """The targeted edit p′ᵢ."""
    FIXED = "fixed"
    """The fixed-sentence baseline p″ᵢ."""
    PARAPHRASE = "paraphrase"
    """The token-adjusted paraphrase baseline p″ᵢ (stage 2, sized with the arm's tokenizer)."""
