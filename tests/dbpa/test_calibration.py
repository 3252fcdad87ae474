"""Calibration: same-distribution conditions reject at α = 0.05 at a rate in [0.03, 0.07];
a clearly different pair rejects.

Synthetic embeddings (the issue allows them for the rate): each repetition draws 2k unit
vectors from one distribution (a common mean direction plus isotropic noise, so the
outputs resemble one another as real answers do), splits them k/k and runs the test.
Under H0 the pooled outputs are exchangeable, so with B = 199 the p-value is a multiple of
1/200 and P(p ≤ 0.05) = P(count ≤ 9) = 10/200 = 0.05 exactly; over 1,000 repetitions the
rate's standard error is sqrt(0.05·0.95/1000) = 0.0069, so [0.03, 0.07] is ±2.9 SE.
"""

from __future__ import annotations

import numpy as np
import pytest

from analysis.dbpa.statistics import DISTANCES, permutation_test

REPS = 1000
K = 10
B = 199


def draw(rng, n, centre, spread=0.15):
    x = centre + spread * rng.normal(size=(n, len(centre)))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize("distance", DISTANCES)
def test_same_distribution_rejects_at_the_nominal_rate(distance):
    rng = np.random.default_rng(2024)
    centre = np.zeros(32)
    centre[0] = 1.0
    rejected = 0
    for rep in range(REPS):
        a, b = draw(rng, K, centre), draw(rng, K, centre)
        rejected += permutation_test(a, b, distance=distance, permutations_count=B,
                                     seed=rep).p_value <= 0.05
    rate = rejected / REPS
    assert 0.03 <= rate <= 0.07, rate


@pytest.mark.parametrize("distance", DISTANCES)
def test_a_clearly_different_pair_rejects(distance):
    rng = np.random.default_rng(7)
    here, there = np.zeros(32), np.zeros(32)
    here[0], there[1] = 1.0, 1.0
    result = permutation_test(draw(rng, K, here), draw(rng, K, there), distance=distance,
                              permutations_count=B, seed=1)
    assert result.p_value <= 0.01
