"""Kappa over every small confusion table, against statsmodels' cohens_kappa where it is
defined: bounds, perfect tables, zero-variance tables, clipping and the small-N flag never
depend on float noise (issue 15, item 5)."""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotate.agreement.kappa import (
    LANDIS_KOCH,
    exact_kappa_variance,
    from_table,
    landis_koch,
    landis_koch_legend,
    min_reliable_n,
)


def tables(q: int, n: int):
    """Every q×q table of non-negative counts summing to n (stars and bars)."""
    cells = q * q
    for bars in itertools.combinations(range(n + cells - 1), cells - 1):
        counts, previous = [], -1
        for bar in (*bars, n + cells - 1):
            counts.append(bar - previous - 1)
            previous = bar
        yield [counts[i * q:(i + 1) * q] for i in range(q)]


# 2×2 up to N = 10, 3×3 up to N = 5, 4×4 up to N = 3 (N = 0 included): 1,001 + 2,002 + 969
# = 3,972 tables, every degenerate
# shape among them (perfect, one constant rater, complete disagreement, p_e = 1).
SMALL = [(q, n) for q, top in ((2, 10), (3, 5), (4, 3)) for n in range(top + 1)]


def _statsmodels(table):
    from statsmodels.stats.inter_rater import cohens_kappa

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return cohens_kappa(np.array(table))


def check(table: list[list[int]]) -> str:
    """Assert every invariant of `from_table` on one table; returns which case it was."""
    q = len(table)
    n = sum(map(sum, table))
    cats = tuple(f"c{k}" for k in range(q))
    result = from_table(table, cats)
    rows = [sum(r) for r in table]
    cols = [sum(r[k] for r in table) for k in range(q)]
    diagonal = sum(table[k][k] for k in range(q))
    assert result.small_n == (n < 2 * q * q)
    if n == 0 or sum(r * c for r, c in zip(rows, cols)) == n * n:
        assert result.state == "undefined" and result.kappa is None
        assert result.kappa_ci is None and result.interpretation == "undefined"
        return "undefined"
    reference = _statsmodels(table)
    assert result.state == "ok"
    assert result.kappa == pytest.approx(float(reference.kappa), abs=1e-9)
    assert -1.0 <= result.kappa <= 1.0
    if diagonal == n:
        # Perfect: exactly 1 (not 1 − 1e-16), no interval, flagged, whatever statsmodels'
        # variance came out as (0, or −7e-17 for (1, 4, 1)).
        assert result.perfect and result.kappa == 1.0
        assert result.kappa_ci is None and result.kappa_se is None
        assert "perfect agreement" in result.reason
        assert abs(float(reference.var_kappa)) < 1e-12
        return "perfect"
    assert not result.perfect
    if exact_kappa_variance(table) == 0:
        assert result.kappa_ci is None and result.kappa_se is None
        assert "interval undefined" in result.reason
        var = float(reference.var_kappa)
        assert math.isnan(var) or abs(var) < 1e-12  # what the exact check protects from
        return "zero variance"
    low, high = result.kappa_ci
    assert -1.0 <= low <= result.kappa <= high <= 1.0
    assert result.kappa_se == pytest.approx(float(reference.std_kappa), rel=1e-9)
    raw_low, raw_high = float(reference.kappa_low), float(reference.kappa_upp)
    assert result.ci_clipped == (raw_low < -1 or raw_high > 1)
    assert (low, high) == pytest.approx((max(-1.0, raw_low), min(1.0, raw_high)), abs=1e-9)
    return "clipped" if result.ci_clipped else "interval"


def test_every_small_table_against_statsmodels():
    seen: dict[str, int] = {}
    for q, n in SMALL:
        for table in tables(q, n):
            kind = check(table)
            seen[kind] = seen.get(kind, 0) + 1
    assert sum(seen.values()) == 3972
    # The enumeration reaches every case (a test that never saw one proves nothing).
    assert set(seen) == {"undefined", "perfect", "zero variance", "clipped", "interval"}


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 4).flatmap(
    lambda q: st.lists(st.lists(st.integers(0, 40), min_size=q, max_size=q),
                       min_size=q, max_size=q)))
def test_random_larger_tables_against_statsmodels(table):
    check(table)


def test_the_one_four_one_perfect_table():
    # Issue 15: perfect agreement over the three gold-shift categories, 1 + 4 + 1 cases.
    # statsmodels' variance is −7e-17 here; the old code read that as "a rater used one
    # category only". p_o = 1, p_e = (1 + 16 + 1)/36 = 1/2, kappa = 1 exactly.
    table = [[1, 0, 0], [0, 4, 0], [0, 0, 1]]
    assert float(_statsmodels(table).var_kappa) < 0
    result = from_table(table, ("no_shift", "ambiguous", "shifted"))
    assert result.kappa == 1.0 and result.perfect
    assert result.kappa_ci is None
    assert "perfect agreement on all 6 cases" in result.reason
    assert result.small_n  # 6 < 2·3² = 18
    assert result.flags == ("perfect", "small N")


def test_exact_variance_matches_the_hand_worked_2x2():
    # TABLE_2X2 of test_agreement_math: var = .2016 / 12.5 = .016128 = 252/15625.
    assert exact_kappa_variance([[20, 5], [10, 15]]) == Fraction(252, 15625)


def test_clipped_interval_of_a_small_near_perfect_table():
    # 2×2 [[4, 1], [0, 3]], n = 8: p_o = 7/8; rows (5, 3), cols (4, 4); p_e = 32/64 = 1/2;
    # kappa = (7/8 − 1/2)/(1/2) = 3/4. The Wald interval 0.75 ± 1.96·SE runs past 1
    # (statsmodels' upper end is 1.21), so it is cut at 1 and flagged; N = 8 = 2·2² is not
    # small.
    result = from_table([[4, 1], [0, 3]], ("yes", "no"))
    assert result.kappa == pytest.approx(0.75)
    assert float(_statsmodels([[4, 1], [0, 3]]).kappa_upp) > 1
    assert result.kappa_ci[1] == 1.0 and result.ci_clipped and not result.small_n
    assert result.flags == ("clipped",)


def test_small_n_threshold_is_two_q_squared():
    assert [min_reliable_n(q) for q in (2, 3, 4)] == [8, 18, 32]
    assert from_table([[4, 1], [2, 0]], ("yes", "no")).small_n      # N = 7 < 8
    assert not from_table([[4, 1], [2, 1]], ("yes", "no")).small_n  # N = 8


def test_landis_koch_legend_lists_every_band():
    legend = landis_koch_legend()
    assert legend == ("< 0 poor · 0.00–0.20 slight · 0.20–0.40 fair · 0.40–0.60 moderate · "
                      "0.60–0.80 substantial · 0.80–1.00 almost perfect")
    for _, words in LANDIS_KOCH:
        assert words in legend
    # Upper bounds are inclusive: 0.20 is slight, just above is fair.
    assert landis_koch(0.20) == "slight" and landis_koch(0.2001) == "fair"
