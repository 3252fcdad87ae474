"""EDD (§3.5) against hand computations on fixed vectors, and through the store."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.fragility_definitions import edd


def test_three_vectors_by_hand() -> None:
    # Normalised: e1 = (1, 0), e2 = (0, 1), e3 = (1, 1)/√2.
    # cos12 = 0, cos13 = 1/√2, cos23 = 1/√2; mean = (2/√2)/3 = √2/3 = 0.47140.
    # EDD = 1 − √2/3 = 0.52860.
    value = edd(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    assert value == pytest.approx(1 - math.sqrt(2) / 3, abs=1e-12)
    assert value == pytest.approx(0.528595, abs=1e-6)


def test_seven_explanations_one_orthogonal_by_hand() -> None:
    # Baseline and five prefixes identical (e), one prefix orthogonal (f): of the 21 pairs,
    # C(6,2) = 15 have cosine 1 and 6 have cosine 0; mean = 15/21 = 5/7; EDD = 2/7.
    e, f = [3.0, 4.0, 0.0], [0.0, 0.0, 2.0]
    value = edd(np.array([e] * 6 + [f]))
    assert value == pytest.approx(2 / 7, abs=1e-12)


def test_edd_normalises_lengths_and_ignores_order() -> None:
    x = np.array([[1.0, 2.0, 0.5], [0.2, 1.0, 3.0], [2.0, 0.1, 0.1], [1.0, 1.0, 1.0]])
    scaled = x * np.array([[1.0], [10.0], [0.01], [7.0]])
    assert edd(scaled) == pytest.approx(edd(x), abs=1e-12)
    assert edd(x[::-1]) == pytest.approx(edd(x), abs=1e-12)
    assert edd(np.array([[2.0, 1.0]] * 7)) == pytest.approx(0.0, abs=1e-12)


def test_edd_matches_sklearn_cosine_similarity() -> None:
    from sklearn.metrics.pairwise import cosine_similarity

    rng = np.random.default_rng(3)
    x = rng.normal(size=(7, 384))
    sims = cosine_similarity(x)
    expected = 1 - sims[np.triu_indices(7, k=1)].mean()
    assert edd(x) == pytest.approx(expected, abs=1e-12)


def test_edd_edge_cases() -> None:
    assert math.isnan(edd(np.array([[0.0, 0.0], [1.0, 0.0]])))  # an empty vector
    with pytest.raises(ValueError):
        edd(np.array([[1.0, 0.0]]))  # one explanation has no pair
    assert edd(np.array([[1.0, 0.0], [-1.0, 0.0]])) == pytest.approx(2.0)  # opposite
