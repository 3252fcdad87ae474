"""The item bootstrap: reproducible weights, ratio replicates, paired CIs, scipy cross-check."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.audit.tables import audit_tables, compute_audit

from analysis.audit.frames import load_audit
from analysis.common.bootstrap import (
    nanmean_columns,
    paired_difference,
    percentile_ci,
    ratio,
    resample_weights,
    spread_columns,
)
from tests.builders import AuditBuilder


def test_weights_are_reproducible_multinomial_counts():
    w1 = resample_weights(7, 100, 42)
    w2 = resample_weights(7, 100, 42)
    assert np.array_equal(w1, w2)
    assert w1.shape == (100, 7)
    assert np.all(w1.sum(axis=1) == 7)  # each replicate draws n items with replacement
    assert not np.array_equal(w1, resample_weights(7, 100, 43))
    assert not np.array_equal(resample_weights(7, 100, [42, 1]),
                              resample_weights(7, 100, [42, 2]))


def test_weights_match_explicit_index_resampling():
    # The bincount trick must equal drawing indices and counting them one replicate at a time.
    rng = np.random.default_rng(3)
    draws = rng.integers(0, 5, size=(20, 5))
    expected = np.stack([np.bincount(row, minlength=5) for row in draws])
    assert np.array_equal(resample_weights(5, 20, 3), expected)


def test_ratio_point_and_replicates():
    num = np.array([1.0, 0.0, 2.0])
    den = np.array([1.0, 1.0, 2.0])
    weights = np.array([[1.0, 1.0, 1.0], [3.0, 0.0, 0.0], [0.0, 3.0, 0.0]])
    point, reps = ratio(num, den, weights)
    # point = 3/4; replicate 2 = 3·1/3·1 = 1; replicate 3 = 0/3 = 0
    assert point == pytest.approx(0.75)
    assert reps == pytest.approx([0.75, 1.0, 0.0])
    # A replicate with no denominator is undefined (NaN), not 0.
    _, reps = ratio(num, np.array([1.0, 0.0, 0.0]), np.array([[0.0, 3.0, 0.0]]))
    assert math.isnan(reps[0])


def test_percentile_ci_ignores_undefined_replicates():
    reps = np.array([np.nan] + list(np.arange(101.0)))
    assert percentile_ci(reps) == (pytest.approx(2.5), pytest.approx(97.5))
    assert all(math.isnan(x) for x in percentile_ci(np.array([np.nan])))


def test_paired_difference_uses_the_same_weights_for_both_members():
    a = np.array([1.0, 1.0, 0.0, np.nan])
    b = np.array([0.0, 1.0, 0.0, 1.0])
    weights = resample_weights(4, 500, 9)
    est = paired_difference(a, b, weights)
    # Pairs 1..3 (item 4 lacks a): mean difference (1 + 0 + 0) / 3
    assert est.value == pytest.approx(1 / 3)
    assert est.n == 3
    # Every replicate difference is a share of resampled item 1 among items 1..3, so it
    # lies in [0, 1]; an unpaired bootstrap could produce negative differences.
    assert 0.0 <= est.low <= est.value <= est.high <= 1.0


def test_row_helpers():
    values = np.array([[0.2, np.nan, 0.6], [np.nan, np.nan, np.nan], [0.5, np.nan, np.nan]])
    assert nanmean_columns(values)[0] == pytest.approx(0.4)
    assert math.isnan(nanmean_columns(values)[1])
    assert spread_columns(values)[0] == pytest.approx(0.4)
    assert math.isnan(spread_columns(values)[2])  # one defined column: no spread


def _accuracy_audit(db, n_items: int = 80, n_correct: int = 52) -> None:
    b = AuditBuilder(db)
    arm = b.arm("m/cot")
    for i in range(n_items):
        q = b.item(f"q{i}", gold="A")
        b.baseline(arm, q, answer="A" if i < n_correct else "B")


def test_accuracy_ci_agrees_with_scipy_percentile_bootstrap(db):
    from scipy import stats

    _accuracy_audit(db)
    acc = compute_audit(load_audit(db), n_boot=4000, seed=11).arms[0].stats["acc"].estimate()
    assert acc.value == pytest.approx(52 / 80)
    data = np.array([1.0] * 52 + [0.0] * 28)
    reference = stats.bootstrap((data,), np.mean, n_resamples=4000, method="percentile",
                                confidence_level=0.95, random_state=11).confidence_interval
    # Independent resamples of the same distribution: the endpoints agree to Monte Carlo
    # error (about 0.01 at 4000 replicates; the CI itself is about 0.2 wide).
    assert acc.low == pytest.approx(reference.low, abs=0.02)
    assert acc.high == pytest.approx(reference.high, abs=0.02)


def test_cis_are_reproducible_for_a_seed_and_change_with_it(db):
    _accuracy_audit(db, n_items=30, n_correct=17)
    first = audit_tables(db, n_boot=200, seed=4)["summary"]
    again = audit_tables(db, n_boot=200, seed=4)["summary"]
    other = audit_tables(db, n_boot=200, seed=5)["summary"]
    assert first.equals(again)
    assert (first.loc["m/cot", ["acc_low", "acc_high"]].tolist()
            != other.loc["m/cot", ["acc_low", "acc_high"]].tolist())
    assert first.loc["m/cot", "acc"] == other.loc["m/cot", "acc"]  # point estimate unchanged


def test_zero_replicates_gives_points_without_cis(db):
    _accuracy_audit(db, n_items=10, n_correct=4)
    summary = audit_tables(db, n_boot=0)["summary"]
    assert summary.loc["m/cot", "acc"] == pytest.approx(0.4)
    assert math.isnan(summary.loc["m/cot", "acc_low"])
