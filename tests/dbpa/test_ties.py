"""Ties counted exactly for every distance: the test's count against exact arithmetic.

References computed independently of `analysis.dbpa.batch`: `energy` and `energy_emb` in
fractions (`fractions.Fraction`) from their definitions on the integer similarity grid,
`jsd` in 60-digit decimals (`decimal`, its `ln`). Pools with many duplicated outputs are
where float rounding used to break ties: the same multiset of similarities summed in
another order.
"""

from __future__ import annotations

import itertools
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest

from analysis.dbpa.definitions import DISTANCES, SCALE
from analysis.dbpa.design import resplits
from analysis.dbpa.statistics import permutation_test, score_splits, similarity_grid


def _p0_p1(grid, first, second):
    upper = np.triu_indices(len(first), 1)
    return ([int(v) for v in grid[np.ix_(first, first)][upper]],
            [int(v) for v in grid[np.ix_(first, second)].ravel()])


def energy_exact(grid, first, second) -> Fraction:
    """∫ (F0 − F1)² over the pooled values (energy² / 2), in fractions."""
    p0, p1 = _p0_p1(grid, first, second)
    values = sorted(set(p0) | set(p1))
    total = Fraction(0)
    for here, after in itertools.pairwise(values):
        f0 = Fraction(sum(v <= here for v in p0), len(p0))
        f1 = Fraction(sum(v <= here for v in p1), len(p1))
        total += (after - here) * (f0 - f1) ** 2
    return total


def energy_emb_exact(grid, first, second) -> Fraction:
    """2/(nm) Σ d_XY − Σ d_XX/n² − Σ d_YY/m², d = 1 − g/SCALE, in fractions (a block of
    a·b distances sums to a·b − Σ g/SCALE, the Σ g in Python integers)."""
    def block(rows, cols):
        return len(rows) * len(cols) - Fraction(sum(int(grid[i, j]) for i in rows
                                                    for j in cols), SCALE)

    n, m = len(first), len(second)
    return (Fraction(2, n * m) * block(first, second) - Fraction(1, n * n) * block(first, first)
            - Fraction(1, m * m) * block(second, second))


def jsd_exact(grid, first, second, bins: int = 30) -> Decimal:
    """The divergence of the two 30-bin histograms in 60-digit decimals."""
    getcontext().prec = 60
    p0, p1 = _p0_p1(grid, first, second)
    lo, hi = min(p0 + p1), max(p0 + p1)
    if hi == lo:
        return Decimal(0)
    c0, c1 = [0] * bins, [0] * bins
    for values, counts in ((p0, c0), (p1, c1)):
        for v in values:
            counts[min((v - lo) * bins // (hi - lo), bins - 1)] += 1
    total = Decimal(0)
    for x, y in zip(c0, c1):
        p, q = Decimal(x) / len(p0), Decimal(y) / len(p1)
        m = (p + q) / 2
        total += (p * (p / m).ln() if x else 0) + (q * (q / m).ln() if y else 0)
    return total / 2


EXACT = {"energy": energy_exact, "energy_emb": energy_emb_exact, "jsd": jsd_exact}


def exact_count(grid, perms, n0, distance) -> int:
    reference = EXACT[distance]
    index = np.arange(grid.shape[0])
    observed = reference(grid, index[:n0], index[n0:])
    if distance == "energy_emb":
        observed = max(observed, 0)  # ‖x̄ − ȳ‖² ≥ 0 (the grid's rounding aside)
    # Decimal ties: equal to 60 digits, i.e. within 1e-50 (the values differ by > 1e-6).
    slack = Decimal("1e-50") if distance == "jsd" else 0
    return sum(max(reference(grid, p[:n0], p[n0:]), 0) >= observed - slack for p in perms)


def duplicated_pool(rng, k: int, distinct: int, dim: int = 16) -> np.ndarray:
    base = rng.normal(size=(distinct, dim))
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    return base[rng.integers(0, distinct, size=2 * k)]


def every_split(k: int) -> np.ndarray:
    return np.array([list(first) + [i for i in range(2 * k) if i not in first]
                     for first in itertools.combinations(range(2 * k), k)])


@pytest.mark.parametrize("distance", DISTANCES)
def test_every_split_of_a_duplicate_heavy_pool_matches_exact_arithmetic(distance):
    # k = 5 from 3 distinct outputs: C(10, 5) = 252 splits, few distinct values, many ties.
    rng = np.random.default_rng(3)
    perms = every_split(5)
    identity = np.arange(10)[None, :]
    for _ in range(3):
        grid = similarity_grid(duplicated_pool(rng, 5, 3))
        scores = score_splits(grid, perms, 5, distance)
        fast = int(scores.at_least(score_splits(grid, identity, 5, distance)).sum())
        assert fast == exact_count(grid, perms, 5, distance)


@pytest.mark.parametrize("distance", DISTANCES)
def test_many_duplicate_outputs_give_the_tie_exact_count(distance):
    # The setting: k = 10 with 4 distinct outputs, B = 999. The test's count must
    # equal the count of the same 999 re-splits in exact arithmetic.
    rng = np.random.default_rng(11)
    for trial in range(2 if distance == "jsd" else 3):
        pool = duplicated_pool(rng, 10, 4, dim=32)
        result = permutation_test(pool[:10], pool[10:], distance=distance,
                                  permutations_count=999, seed=trial)
        grid = similarity_grid(pool)
        assert result.n_at_least == exact_count(grid, resplits(10, 10, 999, trial), 10,
                                                distance)
        assert result.p_value == (1 + result.n_at_least) / 1000


def test_energy_emb_of_identical_multisets_is_zero_and_p_is_one():
    # Both conditions the same multiset: x̄ = ȳ, ω = ‖x̄ − ȳ‖² = 0 exactly, the smallest
    # value any split can have, so every re-split counts and p = 1 (was T_obs = −2.8e-16,
    # p = 0.981 with float sums).
    rng = np.random.default_rng(5)
    for _ in range(5):
        outputs = duplicated_pool(rng, 5, 4)[:10]
        result = permutation_test(outputs, outputs[::-1].copy(), distance="energy_emb",
                                  permutations_count=999, seed=1)
        assert result.effect_size == 0.0
        assert result.n_at_least == 999 and result.p_value == 1.0


@pytest.mark.parametrize("distance", DISTANCES)
def test_paired_exact_copies_give_p_one_for_every_distance(distance):
    # Shared seeds where each pair is an exact copy: every within-pair swap re-creates the
    # same two multisets, so every re-split ties with the observed one.
    rng = np.random.default_rng(6)
    outputs = duplicated_pool(rng, 8, 8)[:8]
    result = permutation_test(outputs, outputs.copy(), distance=distance,
                              permutations_count=499, seed=2, design="paired")
    assert result.n_at_least == 499 and result.p_value == 1.0


@pytest.mark.parametrize("distance", ["jsd", "energy"])
def test_identical_multisets_unpaired_follow_the_papers_p1(distance):
    # For ω(P0, P1) the observed split of two identical multisets is not the smallest:
    # P1 holds the k cross pairs (y_i, y'_i) of equal outputs (s = 1) that P0 (i < j,
    # within the baseline) lacks, and a split that moves duplicates into one group can
    # balance them. So p < 1 here by the paper's definition of P0 and P1, not by rounding;
    # the count over all 252 splits is the exact one.
    rng = np.random.default_rng(0)
    outputs = rng.normal(size=(5, 16))
    outputs /= np.linalg.norm(outputs, axis=1, keepdims=True)
    grid = similarity_grid(np.vstack([outputs, outputs]))
    perms = every_split(5)
    scores = score_splits(grid, perms, 5, distance)
    observed = score_splits(grid, np.arange(10)[None, :], 5, distance)
    count = int(scores.at_least(observed).sum())
    assert count == exact_count(grid, perms, 5, distance)
    # Measured: energy 72 of 252 (p = 0.286), jsd 228 of 252 (p = 0.905).
    assert count == {"energy": 72, "jsd": 228}[distance]


def test_disjoint_histograms_tie_at_ln2():
    # Two orthogonal clusters: every split whose P0 and P1 histograms share no bin has
    # D = ln 2 exactly, whichever bins they fill; the count includes all of them.
    rng = np.random.default_rng(8)
    a, b = np.zeros(16), np.zeros(16)
    a[0], b[1] = 1.0, 1.0
    pool = np.vstack([a + 0.05 * rng.normal(size=(4, 16)), b + 0.05 * rng.normal(size=(4, 16))])
    pool /= np.linalg.norm(pool, axis=1, keepdims=True)
    grid = similarity_grid(pool)
    perms = every_split(4)
    scores = score_splits(grid, perms, 4, "jsd")
    observed = score_splits(grid, np.arange(8)[None, :], 4, "jsd")
    assert observed.key[0] == pytest.approx(np.log(2), abs=1e-12)
    disjoint = 0
    for p in perms:
        # Bins as the test computes them: the split's own [min, max] in 30 bins.
        upper = np.triu_indices(4, 1)
        p0 = grid[np.ix_(p[:4], p[:4])][upper].astype(np.int64)
        p1 = grid[np.ix_(p[:4], p[4:])].ravel().astype(np.int64)
        lo, hi = min(p0.min(), p1.min()), max(p0.max(), p1.max())
        bins0 = set(np.minimum((p0 - lo) * 30 // (hi - lo), 29))
        bins1 = set(np.minimum((p1 - lo) * 30 // (hi - lo), 29))
        disjoint += not bins0 & bins1
    assert disjoint >= 2  # A|B and B|A at least
    assert int(scores.at_least(observed).sum()) == disjoint
