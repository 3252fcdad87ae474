"""Word-level difference of an original and an edited text: spans to highlight, and inline runs.

One rule for every view of an edit — the flip inspector and `paw flips show` (spans into
each text), the rater's labelling screen (`annotate.sets.cases`: spans and the inline diff of
the edited question with the removed words put back). Words are runs of non-space
characters, so a reflowed line is not an edit; every changed run is found, not only the
first (a sex swap changes several words).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

Span = tuple[int, int]
"""A half-open character range [start, end) into a text."""

Word = tuple[int, int, str]
"""(start, end, text) of one word."""

_WORD = re.compile(r"\S+")


Opcode = tuple[str, int, int, int, int]
"""difflib's (tag, i1, i2, j1, j2) over word indices."""


def word_opcodes(original: str, edited: str
                 ) -> tuple[list[Word], list[Word], Sequence[Opcode]]:
    """The words of both texts and difflib's opcodes over them (compute once, derive many)."""
    a = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(original)]
    b = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(edited)]
    matcher = difflib.SequenceMatcher(a=[w for *_, w in a], b=[w for *_, w in b],
                                      autojunk=False)
    return a, b, matcher.get_opcodes()


def spans_of(a: list[Word], b: list[Word], opcodes) -> tuple[tuple[Span, ...], tuple[Span, ...]]:
    """(removed-or-replaced spans of the original, inserted-or-replacing spans of the edited)
    from `word_opcodes`'s result; adjacent changed words are merged."""
    old: list[Span] = []
    new: list[Span] = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            continue
        if i2 > i1:
            old.append((a[i1][0], a[i2 - 1][1]))
        if j2 > j1:
            new.append((b[j1][0], b[j2 - 1][1]))
    return tuple(old), tuple(new)


def edit_spans(original: str, edited: str) -> tuple[tuple[Span, ...], tuple[Span, ...]]:
    """Word-level diff of two texts as character spans.

    Args:
        original: the text before the edit (question or chain).
        edited: the text after it.

    Returns:
        (spans of `original` removed or replaced, spans of `edited` inserted or replacing),
        each a tuple of half-open character ranges.
    """
    return spans_of(*word_opcodes(original, edited))


def segments_of(original: str, edited: str, a: list[Word], b: list[Word], opcodes
                ) -> tuple[tuple[str, str], ...]:
    """The inline runs of `edit_segments` from `word_opcodes`'s result."""
    runs: list[tuple[str, str]] = []

    def add(kind: str, text: str) -> None:
        if not text:
            return
        if runs and ((kind == "removed") != (runs[-1][0] == "removed")):
            last = runs[-1][1]
            if not last[-1].isspace() and not text[0].isspace():
                runs.append(("gap", " "))
        runs.append((kind, text))

    at = 0  # characters of `edited` emitted so far
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            end = b[j2 - 1][1]
            add("same", edited[at:end])
            at = end
            continue
        if j2 > j1:
            add("same", edited[at:b[j1][0]])  # the whitespace before the change
            at = b[j1][0]
        if i2 > i1:
            add("removed", original[a[i1][0]:a[i2 - 1][1]])
        if j2 > j1:
            add("inserted", edited[b[j1][0]:b[j2 - 1][1]])
            at = b[j2 - 1][1]
    add("same", edited[at:])
    return tuple(runs)


def edit_segments(original: str, edited: str) -> tuple[tuple[str, str], ...]:
    """The edited text with the original's removed words put back where they were.

    Returns:
        (kind, text) runs in reading order, kind 'same', 'removed', 'inserted' or 'gap'
        (a space that keeps a removed run apart from its neighbours and belongs to
        neither text): the 'same' and 'inserted' runs concatenate to `edited` exactly; the
        'same' and 'removed' runs give `original`'s words in order.
    """
    return segments_of(original, edited, *word_opcodes(original, edited))
