"""The unparsed share of each arm's answers beside the paper's ≤ 3 %, for every report's header
and the Runs screen.

Seed 002, §5 ("Continuation protocol"): "Answers are regex-extracted on the response tail
(≤3% unparseable, dropped)." Every kind of run reads its answers with the same reader and
drops the unparsed ones, so a share far above the paper's means the model is not answering
the way the papers assume (a base model, a small model that states its answer in words), and
every rate of the report stands on the answers that remain.
"""

from __future__ import annotations

from fractions import Fraction

from analysis.common.rounding import rounded
from store.runs import ArmAnswers

PAPER_UNPARSED_MAX = Fraction(3, 100)
"""The paper's unparseable share (seed 002 §5: "≤3% unparseable, dropped")."""

WARN_ABOVE = Fraction(3, 100)
"""An arm whose unparsed share is above this (exactly, as a fraction of its answers) gets
a warning: the paper's own bound, so a warning means "not the paper's conditions"."""

PAPER_QUOTE = "seed 002 §5: \"≤3% unparseable, dropped\""


def over_threshold(arm: ArmAnswers) -> bool:
    """Whether the arm's unparsed share is above `WARN_ABOVE` (exact arithmetic)."""
    return arm.answered > 0 and Fraction(arm.unparsed, arm.answered) > WARN_ABOVE


def share_text(arm: ArmAnswers) -> str:
    """'12/40 = 30.0 %' (or '0/0' when the arm has no stored answer yet)."""
    if arm.answered == 0:
        return "0/0"
    percent = rounded(Fraction(100 * arm.unparsed, arm.answered), 1)
    return f"{arm.unparsed}/{arm.answered} = {percent} %"


def unparsed_meta(arms: list[ArmAnswers]) -> dict[str, str]:
    """The header lines of a report: the share per arm beside the paper's, and a warning
    naming the arms above `WARN_ABOVE` (none when every arm is within it)."""
    if not arms:
        return {}
    shares = "; ".join(f"{a.label}: {share_text(a)}" + (" ⚠" if over_threshold(a) else "")
                       for a in arms)
    meta = {"unparsed answers": f"{shares} (paper ≤ 3 %, {PAPER_QUOTE}; as stored, i.e. "
                                "the paper's reading; unparsed answers are dropped from "
                                "every rate)"}
    high = [a.label for a in arms if over_threshold(a)]
    if high:
        meta["unparsed warning"] = (
            f"unparsed share above {rounded(WARN_ABOVE * 100, 0)} % in {', '.join(high)}: "
            "the model is not answering in the form the papers assume (a base model, or "
            "answers stated in words); every rate stands on the answers that parsed")
    return meta


__all__ = ["PAPER_UNPARSED_MAX", "WARN_ABOVE", "over_threshold", "share_text", "unparsed_meta"]
