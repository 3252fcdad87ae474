"""A yes/no decision against a reference on its positive class: TP, FP, FN, TN.

Both validations of an automated decision against the clinicians read their precision,
recall and accuracy from here: the chain-registration rules of seed 002 (`annotate.stats`)
and the robustness judge of seed 003 (`annotate.robustness.validation`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Tally:
    """Counts of (decision, reference) on the positive class.

    Attributes:
        tp: both positive.
        fp: the decision positive, the reference not.
        fn: the reference positive, the decision not.
        tn: both negative.
    """

    tp: int
    fp: int
    fn: int
    tn: int

    @staticmethod
    def count(pairs: Iterable[tuple[bool, bool]]) -> tuple[int, int, int, int]:
        """(TP, FP, FN, TN) of (decision positive, reference positive) pairs."""
        tp = fp = fn = tn = 0
        for decided, reference in pairs:
            if decided and reference:
                tp += 1
            elif decided:
                fp += 1
            elif reference:
                fn += 1
            else:
                tn += 1
        return tp, fp, fn, tn

    @property
    def n(self) -> int:
        """Pairs counted."""
        return self.tp + self.fp + self.fn + self.tn

    @property
    def precision(self) -> float | None:
        """TP / (TP + FP): of the decision's positives, the share the reference confirms
        (None when the decision never said positive)."""
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        """TP / (TP + FN): of the reference's positives, the share the decision found (None
        when the reference never said positive)."""
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def accuracy(self) -> float | None:
        """(TP + TN) / N (None when N = 0)."""
        return (self.tp + self.tn) / self.n if self.n else None
