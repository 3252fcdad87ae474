"""Re-split designs, the smallest achievable p, the k guard and the Monte Carlo interval."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest

from analysis.dbpa.design import (
    distinct_splits,
    minimum_k,
    minimum_permutations,
    monte_carlo_interval,
    resplits,
    smallest_p,
)
from analysis.dbpa.statistics import permutation_test, permutation_test_loop


def test_paired_resplits_swap_within_pairs_only():
    rows = resplits(6, 6, 200, seed=1, design="paired")
    assert rows.shape == (200, 12)
    for row in rows:
        first, second = row[:6], row[6:]
        # Pair i is (i, 6 + i): one member in each group, in pair order.
        assert sorted(np.concatenate([first, second])) == list(range(12))
        assert all({f, s} == {i, 6 + i} for i, (f, s) in enumerate(zip(first, second)))
    # Both orientations of a pair occur (not a fixed split).
    assert 0 < (rows[:, 0] == 6).mean() < 1


def test_paired_design_needs_equal_groups():
    with pytest.raises(ValueError, match="paired"):
        resplits(3, 4, 10, seed=0, design="paired")
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="paired"):
        permutation_test(rng.normal(size=(3, 4)), rng.normal(size=(4, 4)), design="paired")


def test_distinct_splits_and_the_floor_by_hand():
    assert distinct_splits(3, 3) == 20 and distinct_splits(10, 10) == 184756
    assert distinct_splits(5, 5, "paired") == 32
    # k = 3 unpaired, B = 1000: (1 + 1000/20)/1001 = 51/1001 = 0.050949.
    assert smallest_p(3, 3, 1000, "jsd") == pytest.approx(51 / 1001)
    # k = 2: N = C(4, 2) = 6 → (1 + 1000/6)/1001 = 0.167499.
    assert smallest_p(2, 2, 1000, "energy") == pytest.approx((1 + 1000 / 6) / 1001)
    # energy_emb is symmetric in the groups: t = 2 → (1 + 2000/20)/1001 = 101/1001.
    assert smallest_p(3, 3, 1000, "energy_emb") == pytest.approx(101 / 1001)
    assert smallest_p(3, 4, 1000, "energy_emb") == pytest.approx((1 + 1000 / 35) / 1001)
    # Paired k = 5: N = 32 → (1 + 1000/32)/1001 = 32.25/1001 = 0.032218.
    assert smallest_p(5, 5, 1000, "jsd", "paired") == pytest.approx(32.25 / 1001)
    # Large N: the floor is B's, 1/(1 + B).
    assert smallest_p(20, 20, 999, "jsd") == pytest.approx(1 / 1000, rel=1e-6)


@pytest.mark.parametrize("distance, ties", [("energy_emb", 2), ("energy", 1)])
def test_the_floor_is_what_a_maximal_split_gets(distance, ties):
    # Two orthogonal clusters, k = 3, the baseline's the tighter: the observed split is
    # the most extreme (with its group swap for the symmetric energy_emb). Over 30 seeds
    # the mean p is the floor (1 + B·t/20)/(1 + B) within 3 standard errors (SE of one
    # p ≈ √(B·q(1−q))/(1+B), q = t/20).
    rng = np.random.default_rng(4)
    a, b = np.zeros(8), np.zeros(8)
    a[0], b[1] = 1.0, 1.0
    x = a + 0.01 * rng.normal(size=(3, 8))
    y = b + 0.05 * rng.normal(size=(3, 8))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y /= np.linalg.norm(y, axis=1, keepdims=True)
    ps = [permutation_test(x, y, distance=distance, permutations_count=1000, seed=s).p_value
          for s in range(30)]
    floor = smallest_p(3, 3, 1000, distance)
    q = ties / 20
    se = math.sqrt(1000 * q * (1 - q)) / 1001 / math.sqrt(30)
    assert abs(np.mean(ps) - floor) < 3 * se
    # The floor is what such a test gets on average; one Monte Carlo p scatters around
    # it (here as low as 0.036 for energy), so a k = 3 test rejects at 0.05 by luck only.


def test_jsd_floor_is_a_lower_bound():
    # jsd saturates: both A|B and B|A have disjoint histograms (D = ln 2), so the
    # clusters' p is about 2/20, above the floor 1/20 that the guard uses.
    rng = np.random.default_rng(4)
    a, b = np.zeros(8), np.zeros(8)
    a[0], b[1] = 1.0, 1.0
    x, y = a + 0.02 * rng.normal(size=(3, 8)), b + 0.02 * rng.normal(size=(3, 8))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y /= np.linalg.norm(y, axis=1, keepdims=True)
    p = permutation_test(x, y, distance="jsd", permutations_count=1000, seed=0).p_value
    assert p >= smallest_p(3, 3, 1000, "jsd")


def test_minimum_k_by_hand():
    # m = 1, α = 0.05, B = 1000, jsd unpaired: k = 3 gives 0.0509 > 0.05; k = 4: N = 70,
    # (1 + 1000/70)/1001 = 0.01527 ≤ 0.05.
    assert minimum_k(1000, "jsd", "unpaired", 1, 0.05) == 4
    # m = 4: k = 4 gives 4 × 0.01527 = 0.0611 > 0.05; k = 5: N = 252, 4 × 0.00496 = 0.0198.
    assert minimum_k(1000, "jsd", "unpaired", 4, 0.05) == 5
    # Paired, m = 1: k = 4 → N = 16, (1 + 62.5)/1001 = 0.0634 > 0.05; k = 5 → 0.0322.
    assert minimum_k(1000, "jsd", "paired", 1, 0.05) == 5
    # energy_emb paired, m = 1: k = 5 → (1 + 62.5)/1001 = 0.0634; k = 6 → (1 + 31.25)/1001.
    assert minimum_k(1000, "energy_emb", "paired", 1, 0.05) == 6
    # B too small for the family: m/(1 + B) = 100/1000 = 0.1 > 0.05, whatever k.
    assert minimum_k(999, "jsd", "unpaired", 100, 0.05) is None
    assert minimum_permutations(100, 0.05) == 1999


def test_monte_carlo_interval_by_hand_and_against_scipy():
    # count 0 of B = 999: p̂ = 1/1000, SE = √(0.001·0.999/999) = 0.001; the exact upper
    # limit solves (1 − u)^999 = 0.025: u = 1 − 0.025^(1/999) = 0.0036858.
    se, low, high = monte_carlo_interval(0, 999)
    assert se == pytest.approx(0.001, rel=1e-9)
    assert low == 0.0 and high == pytest.approx(1 - 0.025 ** (1 / 999), rel=1e-9)
    assert high == pytest.approx(0.0036858, abs=1e-7)
    # The test: count 13 of B = 1000 (p = 14/1001 = 0.0140).
    se, low, high = monte_carlo_interval(13, 1000)
    ci = binomtest(13, 1000).proportion_ci(confidence_level=0.95, method="exact")
    assert (low, high) == (pytest.approx(ci.low, rel=1e-9), pytest.approx(ci.high, rel=1e-9))
    assert se == pytest.approx(math.sqrt(14 / 1001 * 987 / 1001 / 1000))
    assert low < 14 / 1001 < high


@pytest.mark.parametrize("distance", ["jsd", "energy", "energy_emb"])
def test_paired_vectorised_equals_loop(distance):
    rng = np.random.default_rng(9)
    x = rng.normal(size=(8, 12))
    y = 0.7 * x + 0.7 * rng.normal(size=(8, 12))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y /= np.linalg.norm(y, axis=1, keepdims=True)
    fast = permutation_test(x, y, distance=distance, permutations_count=300, seed=3,
                            design="paired")
    slow = permutation_test_loop(x, y, distance=distance, permutations_count=300, seed=3,
                                 design="paired")
    assert fast.n_at_least == slow.n_at_least
    assert fast.effect_size == pytest.approx(slow.effect_size, abs=1e-12)
    assert fast.null_mean == pytest.approx(slow.null_mean, abs=1e-12)
    assert fast.design == "paired" and fast.distinct_splits == 256
