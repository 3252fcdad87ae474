"""The shared-prefix length that the backend, the batch decoder, the work split and the fake
backend all read (`workbench/models/decoded.common_prefix`)."""

from __future__ import annotations

from workbench.models.decoded import common_prefix


def test_the_shared_prefix_stops_at_the_first_difference_or_the_shorter_sequence():
    assert common_prefix([1, 2, 3, 4], [1, 2, 9, 4]) == 2  # position 2 differs
    assert common_prefix([1, 2], [1, 2, 3]) == 2  # the shorter bounds it
    assert common_prefix([1, 2, 3], [1, 2]) == 2
    assert common_prefix([], [1]) == 0
    assert common_prefix([5, 1], [1, 5]) == 0  # the same ids in another order share nothing
