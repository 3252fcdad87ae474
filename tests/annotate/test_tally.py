"""The TP/FP/FN/TN tally both validations of an automated decision read (seed 002 and 003)."""

from __future__ import annotations

from annotate.agreement.tally import Tally


def test_count_and_the_shares_worked_by_hand():
    # (decision, reference): 3 TP, 1 FP, 2 FN, 4 TN
    pairs = [(True, True)] * 3 + [(True, False)] + [(False, True)] * 2 + [(False, False)] * 4
    tally = Tally(*Tally.count(pairs))
    assert (tally.tp, tally.fp, tally.fn, tally.tn, tally.n) == (3, 1, 2, 4, 10)
    assert tally.precision == 3 / 4 and tally.recall == 3 / 5 and tally.accuracy == 7 / 10


def test_shares_without_a_positive_or_a_pair_are_none():
    never_positive = Tally(*Tally.count([(False, True), (False, False)]))
    assert never_positive.precision is None and never_positive.recall == 0.0
    no_reference_positive = Tally(*Tally.count([(True, False)]))
    assert no_reference_positive.recall is None and no_reference_positive.precision == 0.0
    empty = Tally(*Tally.count([]))
    assert (empty.n, empty.precision, empty.recall, empty.accuracy) == (0, None, None, None)
