"""Exact ties in the seed-000 bootstrap: δ* decided on integer counts, never on float noise.

Independent references: flip rates as `Fraction`s, φ and MI in 60-digit `decimal`
arithmetic (an exact tie there shows as a difference below 1e-50), and a full enumeration of
every resample of a tiny design.
"""

from __future__ import annotations

import itertools
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest

from analysis.counterfactual import comparison as cfc
from analysis.counterfactual import definitions as cfd
from analysis.counterfactual import exact
from analysis.counterfactual import statistics as cfs

getcontext().prec = 60
TINY = Decimal("1e-50")


def _fr(table: np.ndarray) -> Fraction:
    n = int(table.sum())
    return Fraction(n - int(np.trace(table)), n)


def _phi(table: np.ndarray) -> Decimal:
    t = [[int(x) for x in row] for row in table]
    k = len(t)
    n = sum(map(sum, t))
    rows = [sum(t[i]) for i in range(k)]
    cols = [sum(t[i][j] for i in range(k)) for j in range(k)]
    num = n * sum(t[i][i] for i in range(k)) - sum(r * c for r, c in zip(rows, cols))
    den = (n * n - sum(c * c for c in cols)) * (n * n - sum(r * r for r in rows))
    return Decimal(0) if den == 0 else Decimal(num) / Decimal(den).sqrt()


def _mi(table: np.ndarray) -> Decimal:
    t = [[int(x) for x in row] for row in table]
    k = len(t)
    n = sum(map(sum, t))
    rows = [sum(t[i]) for i in range(k)]
    cols = [sum(t[i][j] for i in range(k)) for j in range(k)]
    total = Decimal(0)
    for i in range(k):
        for j in range(k):
            if t[i][j]:
                total += t[i][j] * (Decimal(n * t[i][j]) / Decimal(rows[i] * cols[j])).ln()
    return total / n  # nats: the sign of a difference is the same in bits


def _reference_sign(metric: str, a: np.ndarray, b: np.ndarray) -> int:
    if metric == "fr":
        diff = _fr(a) - _fr(b)
        return (diff > 0) - (diff < 0)
    value = (_phi if metric == "phi" else _mi)
    diff = value(a) - value(b)
    return 0 if abs(diff) < TINY else (1 if diff > 0 else -1)


def test_equal_flip_counts_are_ties_although_their_float_rates_differ():
    # 20 items; targeted table [[0, 0], [12, 8]] flips 12, baseline [[1, 0], [12, 7]] flips
    # 12: FR 12/20 both. The float rule 1 − (p00 + p11) gives 1 − (0/20 + 8/20) and
    # 1 − (1/20 + 7/20), which differ by one ulp (−1.1e-16).
    t, b = np.array([[0.0, 0.0], [12.0, 8.0]]), np.array([[1.0, 0.0], [12.0, 7.0]])
    floats = cfd.flip_rate_from_tables(t) - cfd.flip_rate_from_tables(b)
    assert floats != 0.0  # the defect: a tie that rounding puts on one side
    assert exact.metric_sign("fr", t, b) == 0


def test_symmetric_tables_tie_exactly_in_phi_and_mi():
    t = np.array([[7, 2], [5, 6]])
    for b in (t.T, t[::-1, ::-1], t[::-1, ::-1].T):
        assert exact.metric_sign("phi", t, b) == 0
        assert exact.metric_sign("mi", t, b) == 0
    # Swapping the rows alone negates φ but keeps MI.
    assert exact.metric_sign("mi", t, t[::-1, :]) == 0
    assert exact.metric_sign("phi", t, t[::-1, :]) == 1  # φ(t) > 0 > φ(row-swapped)
    # Two constant-margin tables: φ = 0 = φ and MI = 0 = MI.
    flat_a, flat_b = np.array([[9, 0], [3, 0]]), np.array([[0, 0], [4, 8]])
    assert exact.metric_sign("phi", flat_a, flat_b) == 0
    assert exact.metric_sign("mi", flat_a, flat_b) == 0


def test_signs_agree_with_60_digit_arithmetic_on_random_and_near_tied_tables():
    rng = np.random.default_rng(0)
    pairs = []
    for _ in range(400):
        n = int(rng.integers(2, 30))
        k = int(rng.choice([2, 2, 3]))
        a = rng.multinomial(n, rng.dirichlet(np.ones(k * k))).reshape(k, k)
        choice = rng.integers(0, 4)
        b = (a.T if choice == 0 else a[::-1, ::-1] if choice == 1
             else rng.multinomial(n, rng.dirichlet(np.ones(k * k))).reshape(k, k))
        pairs.append((a, b))
    for metric in cfd.AGGREGATE:
        for a, b in pairs:
            assert exact.metric_sign(metric, a[None], b[None])[0] == _reference_sign(
                metric, a, b), (metric, a, b)


def test_a_design_with_many_ties_gives_the_integer_count_bootstrap_on_the_same_resamples():
    # 20 items; the targeted edit flips items 0-5, the baseline flips items 6-11: both
    # arms flip 6 of 20 and many replicates draw as many flips from each side.
    k = 2
    orig = np.array([0, 1] * 10)
    target = orig.copy()
    target[:6] = 1 - target[:6]
    base = orig.copy()
    base[6:12] = 1 - base[6:12]
    cells = cfs.answer_cells(orig, target, base, k)
    results = {r.measure: r for r in cfs.paired_bootstrap(orig, target, base, k, n_boot=2000,
                                                         rng=np.random.default_rng(3))}
    counts = cfs.bootstrap_counts(cells, k ** 3, 2000, np.random.default_rng(3))
    tables_t, tables_b = cfs.cell_tables(counts, k)
    tables_t, tables_b = exact.integer_tables(tables_t), exact.integer_tables(tables_b)
    ties = 0
    for metric in cfd.AGGREGATE:
        signs = [_reference_sign(metric, a, b) for a, b in zip(tables_t, tables_b)]
        if metric == "fr":
            ties = signs.count(0)
        against = sum(s <= 0 for s in signs) if cfd.H1[metric] == "greater" else sum(
            s >= 0 for s in signs)
        assert results[metric].p == float(Fraction(against, 2000)), metric
    assert ties > 200  # the design does what it says: many exact flip-count ties
    # The float rule of the old code mis-scored some of those ties.
    floats = cfd.flip_rate_from_tables(tables_t) - cfd.flip_rate_from_tables(tables_b)
    assert float(np.mean(floats <= 0)) != results["fr"].p


def test_exact_enumeration_of_every_resample_of_a_tiny_design():
    # 4 items ⇒ 4⁴ = 256 equally likely index resamples; the exact one-sided p of each
    # metric is (replicates against H1)/256, counted with exact references.
    orig, target, base, k = np.array([0, 1, 0, 1]), np.array([1, 1, 0, 0]), \
        np.array([0, 0, 1, 1]), 2
    cells = cfs.answer_cells(orig, target, base, k)
    resamples = np.array(list(itertools.product(range(4), repeat=4)))
    counts = np.stack([np.bincount(cells[r], minlength=k ** 3) for r in resamples])
    tables_t, tables_b = cfs.cell_tables(counts, k)
    metrics_t, metrics_b = cfd.table_metrics(tables_t), cfd.table_metrics(tables_b)
    signs = cfs.replicate_signs(metrics_t, metrics_b, tables_t, tables_b)
    it, ib = exact.integer_tables(tables_t), exact.integer_tables(tables_b)
    for metric in cfd.AGGREGATE:
        reference = [_reference_sign(metric, a, b) for a, b in zip(it, ib)]
        assert signs[metric].tolist() == reference
        against = sum(s <= 0 for s in reference) if cfd.H1[metric] == "greater" else sum(
            s >= 0 for s in reference)
        assert cfs.bootstrap_p(signs[metric], cfd.H1[metric]) == against / 256


@pytest.mark.parametrize("sides", ["one", "two"])
def test_identical_arms_give_p_one_exactly_in_every_test(sides):
    rng = np.random.default_rng(9)
    n = 25
    p = rng.dirichlet([2, 2], n)
    q = rng.dirichlet([2, 2], n)
    answers = q.argmax(1)
    c = cfc.Comparison("m", "gender_swap", "t", "b", "main", ("Yes", "No"), np.arange(n),
                       p.argmax(1), answers, answers.copy(), p, q, q.copy(),
                       rng.choice([-1.0, 1.0], n))
    results = cfc.compare(c, n_boot=500, sides=sides)
    assert {r.measure for r in results} == set(cfd.METRICS) | set(cfd.REGRESSION)
    for r in results:
        assert r.p == 1.0, r
        assert r.effect == 0.0, r
