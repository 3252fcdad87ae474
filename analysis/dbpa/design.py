"""How DBPA re-splits the pooled outputs, and what that lets a test reach (seed 001).

Two designs, chosen by how the samples were drawn (`workbench.dbpa.analyse` reads it from
the stored sample seeds):

- **unpaired** (independent seeds, the paper's design): under H0 the pooled n0 + n1
  outputs are exchangeable, so a re-split is a random ordering of the pool whose first n0
  form the baseline group; there are C(n0 + n1, n0) distinct splits.
- **paired** (shared seeds: sample i of both conditions drawn with the same seed, so y_i
  and y'_i are coupled): only the two members of a pair are exchangeable under H0, so a
  re-split swaps each pair or not (2^n distinct splits). Pooling coupled samples as if
  they were independent breaks the test both ways (over-rejects under partial coupling,
  loses all power under strong coupling: `bench/dbpa_null_power.py`, docs/dbpa.md).

The smallest p a test can reach follows from the number of distinct splits N: a test
whose observed split is the most extreme of all still counts every re-split that lands on
it (or on a split forced to tie with it), so p cannot be much below t/N, t the forced
ties, nor below 1/(1 + B). `smallest_p` gives that floor, `minimum_k` the k that brings a
family's corrected floor under α, and `monte_carlo_interval` the uncertainty of a p-value
estimated from B random re-splits.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

DESIGNS: tuple[str, ...] = ("unpaired", "paired")
"""Re-split designs: permute the pool, or swap within shared-seed pairs."""

SYMMETRIC_DISTANCES: frozenset[str] = frozenset({"energy_emb"})
"""Discrepancies unchanged when the two groups trade places (energy between the groups'
embeddings: ‖x̄ − ȳ‖²); `jsd` and `energy` are not (P0 is within the baseline group)."""

MAX_K = 10_000
"""`minimum_k` searches k up to this (a larger k is no longer a sampling plan)."""


def resplits(n0: int, n1: int, count: int, seed: int, design: str = "unpaired") -> np.ndarray:
    """`count` random re-splits as rows of pooled indices; the first n0 are the baseline group.

    The pool is ordered baseline 0..n0−1 then perturbed n0..n0+n1−1; in the paired design
    pair i is (i, n0 + i), and a row keeps or swaps each pair at random.

    Args:
        n0, n1: group sizes (equal in the paired design).
        count: B.
        seed: seed of the re-splits.
        design: 'unpaired' or 'paired'.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    if design == "unpaired":
        return rng.permuted(np.tile(np.arange(n0 + n1), (count, 1)), axis=1)
    if design != "paired":
        raise ValueError(f"design must be one of {DESIGNS}, got {design!r}")
    if n0 != n1:
        raise ValueError(f"a paired design needs as many baseline as perturbed outputs, got "
                         f"{n0} and {n1}")
    swap = rng.integers(0, 2, size=(count, n0))
    index = np.arange(n0)
    return np.concatenate([index + n0 * swap, index + n0 * (1 - swap)], axis=1)


def distinct_splits(n0: int, n1: int, design: str = "unpaired") -> int:
    """N, the number of distinct re-splits: C(n0 + n1, n0) unpaired, 2^n0 paired."""
    if design == "paired":
        return 2 ** n0
    return math.comb(n0 + n1, n0)


def forced_ties(n0: int, n1: int, distance: str) -> int:
    """Re-splits that tie with the observed one whatever the data: itself, and for a
    symmetric ω with equal groups the split with the groups traded (2)."""
    return 2 if distance in SYMMETRIC_DISTANCES and n0 == n1 else 1


def smallest_p(n0: int, n1: int, permutations: int, distance: str,
               design: str = "unpaired") -> float:
    """The smallest p a test of this shape can expect: (1 + B·t/N)/(1 + B).

    It is the p-value of a test whose observed split is the most extreme of all N: each of
    the B random re-splits lands on one of the t splits tied with it with probability t/N,
    and the count of those is B·t/N on average. It is ≥ 1/(1 + B) (B alone) and ≈ t/N when
    N is small (k alone): e.g. k = 3 unpaired, N = C(6, 3) = 20, B = 1000 → 0.051.

    Args:
        n0, n1: outputs per group (pairs, in the paired design).
        permutations: B.
        distance: the discrepancy (symmetric ones have two forced ties).
        design: 'unpaired' or 'paired'.
    """
    n = distinct_splits(n0, n1, design)
    t = forced_ties(n0, n1, distance)
    return (1 + permutations * t / n) / (1 + permutations)


def minimum_k(permutations: int, distance: str, design: str, family_size: int,
              alpha: float) -> int | None:
    """The smallest k (per condition) whose corrected floor m·smallest_p is at most α.

    Holm's and Bonferroni's smallest adjusted p are both m × the smallest raw p, so a
    family of m tests can reject only if m·smallest_p(k) ≤ α.

    Returns:
        That k, or None when no k suffices (B too small: m/(1 + B) > α).
    """
    if family_size / (1 + permutations) > alpha:
        return None
    k = 2
    while family_size * smallest_p(k, k, permutations, distance, design) > alpha:
        k += 1
        if k > MAX_K:  # pragma: no cover - unreachable once m/(1 + B) ≤ α
            return None
    return k


def minimum_permutations(family_size: int, alpha: float) -> int:
    """The smallest B with m/(1 + B) ≤ α (what B alone allows)."""
    return max(1, math.ceil(family_size / alpha) - 1)


def monte_carlo_interval(count: int, permutations: int, level: float = 0.95
                         ) -> tuple[float, float, float]:
    """The Monte Carlo uncertainty of a permutation p-value estimated from B re-splits.

    count ~ Binomial(B, p_exact), p_exact the p-value over all N splits. Returns the
    binomial standard error √(p̂(1 − p̂)/B) of p̂ = (1 + count)/(1 + B), and the exact
    (Clopper–Pearson) interval of p_exact from (count, B), statsmodels' `proportion_confint`
    with method 'beta'.

    Returns:
        (standard error, interval low, interval high).
    """
    from statsmodels.stats.proportion import proportion_confint

    p = (1 + count) / (1 + permutations)
    low, high = proportion_confint(count, permutations, alpha=1 - level, method="beta")
    return math.sqrt(p * (1 - p) / permutations), float(low), float(high)
