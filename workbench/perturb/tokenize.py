"""Tokenizers and the token-change fraction used to size edits (seed 000 §3.2)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

_WORD_TOKEN = re.compile(r"\w+|[^\w\s]")


@runtime_checkable
class Tokenizer(Protocol):
    """Anything that splits text into tokens (strings or token ids).

    The audited model's tokenizer is the right choice for matching a baseline to a
    targeted edit (seed 000 measures token change with the model's tokenizer); a
    llama.cpp model fits via `CallableTokenizer(lambda t: llm.tokenize(t.encode(), add_bos=False))`.
    """

    def tokenize(self, text: str) -> list[Any]:
        """Return the tokens of `text`, in order."""
        ...


class WordTokenizer:
    """The fallback tokenizer: runs of word characters, and single punctuation marks."""

    name = "word"

    def tokenize(self, text: str) -> list[str]:
        """Split `text` into word and punctuation tokens (whitespace dropped)."""
        return _WORD_TOKEN.findall(text)


class CallableTokenizer:
    """Adapts a plain function `text -> tokens` (e.g. a llama.cpp model's) to `Tokenizer`."""

    def __init__(self, fn: Callable[[str], Sequence[Any]], name: str = "callable") -> None:
        self._fn = fn
        self.name = name

    def tokenize(self, text: str) -> list[Any]:
        """Return `fn(text)` as a list."""
        return list(self._fn(text))


def token_edit_distance(old: Sequence[Any], new: Sequence[Any]) -> int:
    """Levenshtein distance between two token sequences (insert, delete, substitute = 1).

    Args:
        old: tokens before the edit.
        new: tokens after the edit.

    Returns:
        The minimum number of single-token edits turning `old` into `new`.
    """
    # Operator edits are local, so trimming the shared prefix and suffix first makes the
    # quadratic part tiny on long chains.
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    a, b = old[start:end_old], new[start:end_new]
    if not a or not b:
        return max(len(a), len(b))
    previous = list(range(len(b) + 1))
    for i, token_a in enumerate(a, start=1):
        current = [i]
        for j, token_b in enumerate(b, start=1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (token_a != token_b))
            )
        previous = current
    return previous[-1]


def token_change_fraction(
    old_text: str, new_text: str, tokenizer: Tokenizer | None = None,
    denominator: str = "longer",
) -> float:
    """Fraction of tokens changed by an edit: token edit distance / longer token count.

    Normalising by the longer of the two sequences keeps the value in [0, 1] for
    insertions as well as deletions (a prepended sentence on a short stem cannot exceed 1).
    `denominator="original"` divides by the old text's token count instead (seed 000's
    authors' code; can exceed 1 for long insertions).

    Args:
        old_text: the text before the edit.
        new_text: the text after the edit.
        tokenizer: the audited model's tokenizer; `WordTokenizer()` when None.
        denominator: 'longer' (default) or 'original'.

    Returns:
        0.0 for identical token sequences (or two empty texts), else distance / max length
        (or / the old text's length).
    """
    if denominator not in ("longer", "original"):
        raise ValueError(f"denominator must be 'longer' or 'original', got {denominator!r}")
    tok = tokenizer or WordTokenizer()
    old_tokens, new_tokens = tok.tokenize(old_text), tok.tokenize(new_text)
    longest = max(len(old_tokens), len(new_tokens))
    if longest == 0:
        return 0.0
    distance = token_edit_distance(old_tokens, new_tokens)
    if denominator == "original":
        return distance / len(old_tokens) if old_tokens else float(distance > 0)
    return distance / longest
