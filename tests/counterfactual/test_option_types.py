"""Seed 000's statistical options as types (`Sides`, `Correction`, `KlFloor`,
`Alternative`): every test reads them the same way, and a value that is none of them is
refused rather than read as 'two' by one test and 'one' by another."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.common.options import choices, parse_option
from analysis.counterfactual import statistics as cfs
from analysis.counterfactual.comparison import analyse
from analysis.counterfactual.definitions import (
    ANALYSIS_SETTINGS,
    Alternative,
    Correction,
    KlFloor,
    Sides,
    kl_divergence,
)
from store.errors import UserError

DELTA_T = np.array([0.30, 0.25, 0.40, 0.35, 0.20])
DELTA_B = np.array([0.10, 0.20, 0.15, 0.05, 0.25])


def test_the_options_values_are_the_stored_and_typed_ones():
    assert [choices(kind) for kind in (Sides, Correction, KlFloor, Alternative)] == [
        ["one", "two"], ["bonferroni", "holm", "none"], ["q", "both"], ["less", "greater"]]
    assert set(ANALYSIS_SETTINGS) == {"sides", "correction", "kl_floor", "alternative"}
    # A member is its string: stored settings keep their JSON form.
    assert Sides.TWO == "two" and f"{Correction.HOLM}" == "holm"


def test_a_misspelt_sides_is_refused_by_every_test_alike():
    # Before: "Two" != "one" made the t-test two-sided, "Two" != "two" kept the regressions
    # one-sided.
    with pytest.raises(ValueError, match="'Two' is not a valid Sides"):
        cfs.paired_t_test("jsd", DELTA_T, DELTA_B, sides="Two")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'Two' is not a valid Sides"):
        cfs.difference_model(DELTA_T - DELTA_B, np.ones(5), sides="Two")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'Two' is not a valid Sides"):
        analyse([], sides="Two")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'Holm' is not a valid Correction"):
        analyse([], correction="Holm")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'p' is not a valid KlFloor"):
        kl_divergence(np.array([[0.5, 0.5]]), np.array([[0.9, 0.1]]), "p")


def test_the_string_and_the_member_give_the_same_test():
    # The CLI and older callers pass "two"; the member and its string are one setting.
    by_string = cfs.paired_t_test("jsd", DELTA_T, DELTA_B, sides="two")  # type: ignore[arg-type]
    by_member = cfs.paired_t_test("jsd", DELTA_T, DELTA_B, sides=Sides.TWO)
    assert by_string == by_member and by_member.test == "paired t (two-sided)"
    one = cfs.paired_t_test("jsd", DELTA_T, DELTA_B)
    # Δ = (0.2, 0.05, 0.25, 0.3, −0.05): t > 0, so the two-sided p is twice the one-sided.
    assert by_member.p == pytest.approx(2 * one.p)


def test_a_value_read_from_outside_is_refused_in_one_line_naming_where():
    assert parse_option(Sides, "two", field="sides", where="x") is Sides.TWO
    assert parse_option(Sides, Sides.ONE, field="sides", where="x") is Sides.ONE
    with pytest.raises(UserError) as refused:
        parse_option(Sides, "Two", field="sides", where="study s1's stored settings")
    assert str(refused.value) == "study s1's stored settings: sides 'Two' is not one of one, two"
