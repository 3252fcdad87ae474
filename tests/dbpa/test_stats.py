"""The DBPA test statistic and permutation test: by hand, against SciPy, loop vs vectorised."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon
from scipy.stats import energy_distance

from analysis.dbpa.statistics import (
    DISTANCES,
    discrepancy_batch,
    discrepancy_one,
    jsd_histogram,
    jsd_one,
    permutation_test,
    permutation_test_loop,
    permutations,
    similarity_grid,
    split_similarities,
)


def unit(rows) -> np.ndarray:
    rows = np.asarray(rows, dtype=float)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def random_unit(rng, n, d=16, shift=0.0):
    x = rng.normal(size=(n, d))
    x[:, 0] += shift
    return unit(x)


def test_p0_and_p1_are_the_papers_multisets():
    # Baseline e1, e1, e2 and perturbed e2, e3 (unit vectors): P0 = pairs i < j of the
    # baseline = {s(e1,e1)=1, s(e1,e2)=0, s(e1,e2)=0}; P1 = all 3 x 2 cross pairs =
    # {0,0, 0,0, 1,0}.
    e1, e2, e3 = np.eye(3)
    grid = similarity_grid(np.vstack([e1, e1, e2, e2, e3]))
    p0, p1 = split_similarities(grid, np.arange(3), np.arange(3, 5))
    assert sorted(p0) == [0.0, 0.0, 1.0]
    assert sorted(p1) == [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]


def test_jsd_by_hand():
    # P0 = {0, 1}, P1 = {0, 0, 0, 1}: range [0, 1], 30 bins; 0 falls in bin 0, 1 in bin 29.
    # p = (1/2, 1/2), q = (3/4, 1/4), m = (5/8, 3/8).
    # KL(p||m) = 1/2 ln(4/5) + 1/2 ln(4/3) = 0.5(-0.223144) + 0.5(0.287682) = 0.032269
    # KL(q||m) = 3/4 ln(6/5) + 1/4 ln(2/3) = 0.75(0.182322) + 0.25(-0.405465) = 0.035375
    # JSD = (0.032269 + 0.035375)/2 = 0.033822; scipy's jensenshannon = sqrt = 0.183908.
    p0, p1 = np.array([0.0, 1.0]), np.array([0.0, 0.0, 0.0, 1.0])
    assert jsd_one(p0, p1) == pytest.approx(0.183908, abs=1e-6)
    assert jsd_histogram(p0, p1) == pytest.approx(0.183908, abs=1e-6)
    assert jensenshannon([0.5, 0.5], [0.75, 0.25]) == pytest.approx(0.183908, abs=1e-6)


def test_jsd_matches_numpy_histogram_and_scipy_on_random_splits():
    rng = np.random.default_rng(0)
    grid = similarity_grid(random_unit(rng, 20))
    agree = 0
    for perm in permutations(10, 10, 200, seed=1):
        p0, p1 = split_similarities(grid, perm[:10], perm[10:])
        agree += jsd_one(p0, p1) == pytest.approx(jsd_histogram(p0, p1), abs=1e-12)
    # The two bin rules differ only for a value lying exactly on an inner edge.
    assert agree >= 195


def test_energy_matches_scipy():
    rng = np.random.default_rng(1)
    grid = similarity_grid(random_unit(rng, 16))
    first, second = np.arange(8), np.arange(8, 16)
    p0, p1 = split_similarities(grid, first, second)
    assert discrepancy_one(grid, first, second, "energy") == pytest.approx(
        energy_distance(p0, p1), abs=1e-12)


def test_energy_on_embeddings_by_hand():
    # X = {e1, e1}, Y = {e2, e2}, cosine distance 1 − s: d(X,Y) = 1 everywhere, within 0.
    # E = 2/(2·2)·4·1 − 0 − 0 = 2.
    e1, e2 = np.eye(2)
    grid = similarity_grid(np.vstack([e1, e1, e2, e2]))
    assert discrepancy_one(grid, np.arange(2), np.arange(2, 4), "energy_emb") == pytest.approx(2)


@pytest.mark.parametrize("distance", DISTANCES)
def test_vectorised_equals_the_per_permutation_loop(distance):
    rng = np.random.default_rng(2)
    grid = similarity_grid(random_unit(rng, 24))
    perms = permutations(12, 12, 700, seed=3)  # > CHUNK, so several blocks and threads
    vectorised = discrepancy_batch(grid, perms, 12, distance)
    looped = np.array([discrepancy_one(grid, p[:12], p[12:], distance) for p in perms])
    np.testing.assert_allclose(vectorised, looped, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(vectorised, discrepancy_batch(grid, perms, 12, distance,
                                                                workers=1))


@pytest.mark.parametrize("distance", DISTANCES)
def test_test_and_loop_agree_and_p_is_one_plus_count(distance):
    rng = np.random.default_rng(4)
    a, b = random_unit(rng, 8), random_unit(rng, 8, shift=1.5)
    fast = permutation_test(a, b, distance=distance, permutations_count=300, seed=5)
    slow = permutation_test_loop(a, b, distance=distance, permutations_count=300, seed=5)
    assert fast.n_at_least == slow.n_at_least
    assert fast.effect_size == pytest.approx(slow.effect_size, abs=1e-12)
    assert fast.p_value == (1 + fast.n_at_least) / 301


def test_identical_outputs_give_zero_effect_and_p_one():
    same = unit(np.ones((5, 4)))
    for distance in DISTANCES:
        result = permutation_test(same, same, distance=distance, permutations_count=99)
        assert result.identical and result.effect_size == 0.0
        assert result.n_at_least == 99 and result.p_value == 1.0


def test_unequal_condition_sizes():
    rng = np.random.default_rng(6)
    result = permutation_test(random_unit(rng, 5), random_unit(rng, 7), permutations_count=50)
    assert 0 < result.p_value <= 1


def test_fewer_than_two_outputs_is_refused():
    with pytest.raises(ValueError, match="at least 2"):
        permutation_test(unit([[1, 0]]), unit([[1, 0], [0, 1]]))


def test_seeded_and_reproducible():
    rng = np.random.default_rng(7)
    a, b = random_unit(rng, 6), random_unit(rng, 6)
    assert permutation_test(a, b, seed=11) == permutation_test(a, b, seed=11)


@pytest.mark.parametrize("distance", DISTANCES)
def test_tie_keys_order_the_splits_as_omega_does(distance):
    # The key is a monotone function of ω: wherever two splits' ω differ beyond float
    # noise, their keys differ in the same direction (and the null mean is ω's mean).
    from analysis.dbpa.statistics import score_splits

    rng = np.random.default_rng(12)
    grid = similarity_grid(random_unit(rng, 20))
    scores = score_splits(grid, permutations(10, 10, 400, seed=2), 10, distance)
    i, j = np.triu_indices(400, k=1)
    apart = np.abs(scores.omega[i] - scores.omega[j]) > 1e-9
    assert apart.sum() > 1000
    key = scores.key.astype(float)
    assert np.array_equal(np.sign(key[i] - key[j])[apart],
                          np.sign(scores.omega[i] - scores.omega[j])[apart])
    assert scores.exact == (distance != "jsd")


def test_null_mean_and_sd_are_the_resplits_omega():
    rng = np.random.default_rng(13)
    a, b = random_unit(rng, 6), random_unit(rng, 6)
    result = permutation_test(a, b, distance="jsd", permutations_count=200, seed=4)
    grid = similarity_grid(np.vstack([a, b]))
    null = discrepancy_batch(grid, permutations(6, 6, 200, seed=4), 6, "jsd")
    assert result.null_mean == pytest.approx(null.mean())
    assert result.null_sd == pytest.approx(null.std())
    assert result.design == "unpaired" and result.distinct_splits == 924
