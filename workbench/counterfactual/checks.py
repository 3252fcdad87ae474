"""Reading an LLM's rewrite of one sentence, and checking that it keeps the sentence's meaning."""

from __future__ import annotations

import re
from collections import Counter

_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_NEGATION = re.compile(r"\b(?:no|not|never|none|nor|without|denie[sd]|deny|negative)\b|n't",
                       re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_PREAMBLE = re.compile(r"^(?:sure|here|certainly|okay|ok|rewritten|rewrite|paraphrase|"
                       r"new sentence|sentence|answer)\b[^:\n]*:\s*", re.IGNORECASE)
_GENDERED = frozenset(
    "he she him her his hers himself herself man woman men women male female males females "
    "boy girl boys girls gentleman lady gentlemen ladies mr ms mrs husband wife father mother "
    "son daughter brother sister uncle aunt nephew niece grandfather grandmother grandson "
    "granddaughter boyfriend girlfriend".split())


def words(text: str) -> list[str]:
    """The words of `text` (letters, apostrophes, hyphens)."""
    return _WORD.findall(text)


def clean_output(output: str, original: str) -> str:
    """The rewritten sentence in a model output: the first line that is not a preamble,
    without quotes, bullets or a 'Rewritten sentence:' label; the original's final
    punctuation is added if the rewrite has none."""
    for line in output.replace("\r", "").split("\n"):
        text = _PREAMBLE.sub("", line.strip()).strip()
        text = text.strip("\"'“”‘’*`").lstrip("-•> ").strip()
        if not text or text.endswith(":"):
            continue
        end = original.rstrip()[-1:]
        if end in ".!?" and text[-1:] not in ".!?":
            text += end
        return text
    return ""


def _gendered(text: str) -> Counter:
    return Counter(w.lower() for w in words(text) if w.lower() in _GENDERED)


def check_rewrite(original: str, rewrite: str, context: str) -> str | None:
    """Why a rewrite cannot stand in for the sentence (None when it can).

    Meaning guards, not a semantic judge: the numbers, the negations and the gendered terms
    of the sentence must all be kept, no new capitalised word (a name) may appear that the
    case does not contain, and the length may at most halve or double.

    Args:
        original: the sentence.
        rewrite: the cleaned rewrite.
        context: the whole original prompt (names already in it are allowed).
    """
    if not rewrite.strip():
        return "empty output"
    if rewrite.strip() == original.strip():
        return "unchanged"
    if Counter(_NUMBER.findall(original)) != Counter(_NUMBER.findall(rewrite)):
        return "a number changed"
    if len(_NEGATION.findall(original)) != len(_NEGATION.findall(rewrite)):
        return "a negation changed"
    if _gendered(original) != _gendered(rewrite):
        return "a gendered term changed"
    known = {w for w in words(context)} | {w.lower() for w in words(context)}
    names = [w for w in words(rewrite)[1:] if w[:1].isupper() and w not in known
             and w.lower() not in known and len(w) > 1]
    if names:
        return f"a new name appeared ({names[0]})"
    n_old, n_new = len(words(original)), len(words(rewrite))
    if n_old and not 0.5 <= n_new / n_old <= 2.0:
        return "length changed more than twofold"
    return None
