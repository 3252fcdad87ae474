"""How an answer is read from text at report time: the paper's reading (the default) and PAW's
lenient extension, and whether an F-block's kept chain still states the baseline answer.

Seed 002 §5: "Answers are regex-extracted on the response tail (≤3% unparseable, dropped)"
and "F-block prompts feed the operator-modified chain (baseline answer stripped) to the
model for continuation". The paper's reading is what the runner stored
(`generations.answer`, the last `Answer: X` of the output); the report never changes it
unless asked:

- `--answer-reading lenient` (an extension, not the paper's) also reads an answer the runner
  left unparsed ('no_answer') when the output *starts* with an option's label ("A. Disclose
  the error…", "(B)") or with an option's own text, or states an option's own text right
  after "answer is" / "answer:" ("The correct answer is Diltiazem."). It applies to every
  answer of the report at once and the report's header names it, so two readings never mix.
- A kept chain "states" the baseline answer when one of its lines, read leniently, gives the
  arm's baseline answer and none gives another option (a chain listing every option states
  none). The paper strips the baseline answer before continuation; PAW's
  F-block keeps the chain's lines as the operator left them, so such continuations are
  counted in the report (`stated_answer`), and `--strip-stated-answer` excludes them.
"""

from __future__ import annotations

import re
from typing import Any

READINGS: tuple[str, ...] = ("paper", "lenient")
"""`paper`: the runner's stored parse (the default); `lenient`: PAW's extension."""

READING_TEXT = {
    "paper": "paper (the runner's parse: the last 'Answer: X' of the response tail, seed 002 "
             "§5; unparsed answers dropped)",
    "lenient": "lenient (PAW extension, not the paper's: an unparsed answer is also read from "
               "a leading label or option text, or an option's text after 'answer is')",
}


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _labels_pattern(labels: list[str]) -> str:
    return "|".join(re.escape(label) for label in sorted(labels, key=len, reverse=True))


def leading_label(text: str, options: dict[str, str]) -> str | None:
    """The option label the text starts with ('A.', 'A)', '(A)', '**A**', 'A:' or the
    label alone), or None."""
    labels = [str(k) for k in options]
    if not labels:
        return None
    match = re.match(r"\s*[\(\[\*]*\s*(?P<label>" + _labels_pattern(labels) + r")"
                     r"(?=$|\s*\n|\s*[.):\],*]|\s+-)", text)
    return match.group("label") if match else None


def option_text_label(text: str, options: dict[str, str]) -> str | None:
    """The option whose own text the text starts with (followed by its end or a punctuation
    mark: "Diltiazem." but not "Diltiazem and adenosine…"), or states right after 'answer
    is' / 'answer:' (longest option text first; case and spacing ignored), or None."""
    norm = _norm(text)
    ranked = sorted(((str(k), _norm(str(v))) for k, v in options.items() if str(v).strip()),
                    key=lambda kv: len(kv[1]), reverse=True)
    for label, option in ranked:  # the text is the option, up to a punctuation mark
        if norm.startswith(option) and re.match(r"$|[.,;:!)\]*]", norm[len(option):]):
            return label
    for match in re.finditer(r"answer\s*(?:is|:)\s*[:\-]?\s*(?:the\s+)?", norm):
        rest = norm[match.end():]
        for label, option in ranked:
            if rest.startswith(option) and re.match(r"$|[\s.,;:!)\]*]", rest[len(option):]):
                return label
    return None


def lenient_answer(text: str | None, options: Any) -> str | None:
    """PAW's lenient reading of an output the paper's reading left unparsed."""
    if not isinstance(text, str) or not isinstance(options, dict) or not text.strip():
        return None
    return leading_label(text, options) or option_text_label(text, options)


def _cue_label(line: str, labels: list[str]) -> str | None:
    match = re.search(r"(?i:answer)\s*(?i:is)?\s*[:：]?\s*[\(\[\*]*\s*(?P<label>"
                      + _labels_pattern(labels) + r")(?=$|\s|[.):\],*])", line)
    return match.group("label") if match else None


def states_answer(chain: str | None, answer: Any, options: Any) -> bool:
    """Whether a kept chain still states `answer`: a line gives it as 'Answer: X' or, read
    leniently, as a leading label or the option's own text — and no line states another
    option that way (a chain that lists every option states none of them)."""
    if not isinstance(chain, str) or not isinstance(answer, str) or \
            not isinstance(options, dict):
        return False
    labels = [str(k) for k in options]
    stated = set()
    for line in chain.splitlines():
        if line.strip():
            stated |= {_cue_label(line, labels), lenient_answer(line, options)} - {None}
    return stated == {answer}


__all__ = ["READINGS", "READING_TEXT", "leading_label", "lenient_answer", "option_text_label",
           "states_answer"]
