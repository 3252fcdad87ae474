"""Word-level difference of an original and an edited text, as character spans to highlight."""

from __future__ import annotations

import difflib
import re

Span = tuple[int, int]
"""A half-open character range [start, end) into a text."""

_WORD = re.compile(r"\S+")


def edit_spans(original: str, edited: str) -> tuple[tuple[Span, ...], tuple[Span, ...]]:
    """Word-level diff of two texts (the same rule as the rater's view, `annotate.cases`).

    Words are runs of non-space characters, so a reflowed line is not an edit; every
    changed run is found, not only the first (a sex swap changes several words).

    Args:
        original: the text before the edit (question or chain).
        edited: the text after it.

    Returns:
        (spans of `original` removed or replaced, spans of `edited` inserted or replacing),
        each a tuple of half-open character ranges; adjacent changed words are merged.
    """
    a = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(original)]
    b = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(edited)]
    matcher = difflib.SequenceMatcher(a=[w for *_, w in a], b=[w for *_, w in b],
                                      autojunk=False)
    old: list[Span] = []
    new: list[Span] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            old.append((a[i1][0], a[i2 - 1][1]))
        if j2 > j1:
            new.append((b[j1][0], b[j2 - 1][1]))
    return tuple(old), tuple(new)
