"""Kappa, its CI, Gwet's AC1 and the undefined state against tables worked out by hand."""

from __future__ import annotations

import pytest

from annotate.agreement.kappa import from_pairs, gwet_ac1, landis_koch


def pairs_from_table(table: list[list[int]], categories: tuple[str, ...]):
    """Expand a confusion table (rows rater A, columns rater B) into (a, b) pairs."""
    return [(categories[i], categories[j]) for i, row in enumerate(table)
            for j, count in enumerate(row) for _ in range(count)]


YN = ("yes", "no")
# 2×2, n = 50:          B yes  B no
#              A yes      20     5    (A yes = 25 -> 0.5)
#              A no       10    15    (B yes = 30 -> 0.6)
# p_o = 35/50 = 0.7; p_e = 0.5·0.6 + 0.5·0.4 = 0.5; kappa = (0.7 − 0.5)/0.5 = 0.4
# Fleiss–Cohen–Everitt variance, with p = [[.4,.1],[.2,.3]], 1 − kappa = .6:
#   diagonal  .4·(1 − 1.1·.6)² + .3·(1 − .9·.6)² = .04624 + .06348 = .10972
#   off-diag  .36·(.1·(.6+.5)² + .2·(.4+.5)²)    = .36·(.121 + .162) = .10188
#   minus (kappa − p_e(1 − kappa))² = (.4 − .3)² = .01
#   var = (.10972 + .10188 − .01) / (50·(1 − .5)²) = .2016 / 12.5 = .016128; se = .126996
#   95% CI = .4 ± 1.959964·.126996 = [.15109, .64891]
# AC1: pi_yes = (25 + 30)/100 = .55, pi_no = .45; p_e = (.55·.45 + .45·.55)/1 = .495
#   AC1 = (.7 − .495)/(1 − .495) = .205/.505 = 41/101 = .405941
TABLE_2X2 = [[20, 5], [10, 15]]

GS = ("no_shift", "ambiguous", "shifted")
# 3×3, n = 30:   B: no_shift ambiguous shifted | A total
#   A no_shift        10        4        1    |   15
#   A ambiguous        2        6        2    |   10
#   A shifted          0        1        4    |    5
#   B total           12       11        7
# p_o = 20/30 = 2/3; p_e = (15·12 + 10·11 + 5·7)/900 = 325/900 = 13/36
# kappa = (24/36 − 13/36)/(23/36) = 11/23 = .478261
# AC1: pi = (27, 21, 12)/60 = (.45, .35, .20); sum pi(1 − pi) = .2475 + .2275 + .16 = .635
#   p_e = .635/(3 − 1) = .3175; AC1 = (2/3 − .3175)/(1 − .3175) = (419/1200)/(819/1200)
#   = 419/819 = .511600
TABLE_3X3 = [[10, 4, 1], [2, 6, 2], [0, 1, 4]]


def test_kappa_ci_and_ac1_of_the_2x2_table():
    result = from_pairs(pairs_from_table(TABLE_2X2, YN), YN)
    assert result.n == 50
    assert result.confusion == ((20, 5), (10, 15))
    assert result.raw_agreement == pytest.approx(0.7)
    assert result.kappa == pytest.approx(0.4)
    assert result.kappa_se == pytest.approx(0.126996, abs=1e-6)
    assert result.kappa_ci == pytest.approx((0.15109, 0.64891), abs=1e-5)
    assert result.ac1 == pytest.approx(41 / 101)
    assert result.state == "ok" and result.interpretation == "fair"


def test_kappa_and_ac1_of_the_3x3_table():
    result = from_pairs(pairs_from_table(TABLE_3X3, GS), GS)
    assert result.raw_agreement == pytest.approx(2 / 3)
    assert result.kappa == pytest.approx(11 / 23)
    assert result.ac1 == pytest.approx(419 / 819)
    assert gwet_ac1(TABLE_3X3) == pytest.approx(419 / 819)
    assert result.interpretation == "moderate"


@pytest.mark.parametrize("table,categories", [(TABLE_2X2, YN), (TABLE_3X3, GS)])
def test_kappa_matches_scikit_learn(table, categories):
    from sklearn.metrics import cohen_kappa_score

    pairs = pairs_from_table(table, categories)
    expected = cohen_kappa_score([a for a, _ in pairs], [b for _, b in pairs])
    assert from_pairs(pairs, categories).kappa == pytest.approx(expected)


def test_no_pairs_is_undefined_not_zero():
    result = from_pairs([], GS)
    assert result.state == "undefined"
    assert result.kappa is None and result.ac1 is None and result.raw_agreement is None
    assert "no case" in result.reason
    assert result.interpretation == "undefined"


def test_one_category_used_by_both_is_undefined_but_ac1_is_not():
    # Both raters said no_shift 7 times: p_o = 1, p_e = 1 -> kappa = 0/0.
    # AC1: pi = (1, 0, 0); p_e = (1·0 + 0 + 0)/2 = 0 -> AC1 = (1 − 0)/(1 − 0) = 1.
    result = from_pairs([("no_shift", "no_shift")] * 7, GS)
    assert result.state == "undefined"
    assert result.kappa is None and result.kappa_ci is None
    assert "one category" in result.reason and "no_shift" in result.reason
    assert result.raw_agreement == 1.0
    assert result.ac1 == pytest.approx(1.0)


def test_one_rater_constant_other_not_gives_kappa_zero():
    # A always no_shift; B no_shift ×2, ambiguous ×2: p_o = 2/4 = .5;
    # p_e = 1·(2/4) = .5 -> kappa = 0 (defined: slight).
    pairs = [("no_shift", "no_shift")] * 2 + [("no_shift", "ambiguous")] * 2
    result = from_pairs(pairs, GS)
    assert result.state == "ok"
    assert result.kappa == pytest.approx(0.0)
    assert result.interpretation == "slight"
    # statsmodels' SE is 0 here; a [0, 0] CI would be false certainty, so none is given
    assert result.kappa_ci is None and "interval undefined" in result.reason


@pytest.mark.parametrize("kappa,words", [
    (-0.1, "poor"), (0.0, "slight"), (-1e-17, "slight"), (0.18, "slight"), (0.25, "fair"),
    (0.39, "fair"),
    (0.41, "moderate"), (0.75, "substantial"), (0.95, "almost perfect"), (None, "undefined"),
])
def test_landis_koch_wording(kappa, words):
    # Seed 002 Table 12: 0.18 slight, 0.25 and 0.39 fair.
    assert landis_koch(kappa) == words


def test_value_outside_the_categories_is_refused():
    from store.errors import UserError

    with pytest.raises(UserError):
        from_pairs([("no_shift", "maybe")], GS)
