"""Reading the answer: the parsed label with its status, and the option distribution from logits.

Parse statuses (stored in `generations.parse_status`):

- `ok`: a label was found (`Answer: X` on the tail; in direct mode also a bare leading label).
- `no_answer`: readable text, but no valid label in it; `answer` is NULL.
- `empty`: the model produced nothing (or only whitespace); `answer` is NULL.
- `garbage`: text that is not language (no letters, or mostly replacement/control
  characters); `answer` is NULL.
- `error`: the backend failed on this request; retried on the next run.

The option distribution is kept apart from the parsed answer: it exists for every
generation (also `no_answer`/`empty`), and its argmax is not substituted for a missing
parse.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class ParsedAnswer:
    """The label read from an output, its status, and where it sits (character offsets)."""

    answer: str | None
    status: str
    start: int | None = None
    end: int | None = None


def _is_letter_set(labels: Sequence[str]) -> bool:
    return all(len(label) == 1 and label.isalpha() for label in labels)


def _label_alternatives(labels: Sequence[str]) -> str:
    # Longest first so 'No' never shadows a longer label starting with it.
    return "|".join(re.escape(label) for label in sorted(labels, key=len, reverse=True))


def _cue_pattern(labels: Sequence[str]) -> re.Pattern[str]:
    alternatives = _label_alternatives(labels)
    if _is_letter_set(labels):
        # A letter must stand alone: 'Answer: B', 'answer is (B).', '**Answer: B**',
        # but not 'Answer: A patient…' (the article 'A').
        return re.compile(
            r"(?i:answer)\s*(?i:is)?\s*[:：]?\s*[\(\[\*]*\s*(?P<label>" + alternatives + r")"
            r"(?=$|\s*\n|[.):\],*]|\s+[^a-z\s])"
        )
    return re.compile(
        r"(?i:answer)\s*(?i:is)?\s*[:：]?\s*[\(\[\*]*\s*(?P<label>(?i:" + alternatives + r"))\b"
    )


def _leading_pattern(labels: Sequence[str]) -> re.Pattern[str]:
    alternatives = _label_alternatives(labels)
    if _is_letter_set(labels):
        return re.compile(r"^\s*[\(\[\*]*\s*(?P<label>" + alternatives + r")(?=$|\s*\n|[.):\],*])")
    return re.compile(r"^\s*[\(\[\*]*\s*(?P<label>(?i:" + alternatives + r"))\b")


def looks_like_garbage(text: str) -> bool:
    """True for output that is not language: no letters, or ≥25% replacement/control chars."""
    stripped = text.strip()
    if not stripped:
        return False
    if not any(ch.isalpha() for ch in stripped):
        return True
    bad = sum(1 for ch in stripped if ch == "\ufffd" or (ord(ch) < 32 and ch not in "\n\t\r"))
    return bad / len(stripped) >= 0.25


def parse_answer(output: str, labels: Sequence[str], *, leading: bool = False) -> ParsedAnswer:
    """The answer label in a model output.

    The last `Answer: X` (also 'answer is X', with optional brackets or bold) whose X is
    one of `labels` wins: that is the tail of the response. With `leading` (direct mode,
    where the prompt already ends with the cue) a label at the very start counts too.

    Args:
        output: the generated text.
        labels: valid labels (letters are matched case-sensitively, words not).
        leading: also accept a bare label at the start of the output.

    Returns:
        The canonical label (as spelled in `labels`) and status, or a NULL answer with
        status 'empty', 'garbage' or 'no_answer'.
    """
    if not output.strip():
        return ParsedAnswer(None, "empty")
    canonical = {label.lower(): label for label in labels}
    matches = list(_cue_pattern(labels).finditer(output))
    match = matches[-1] if matches else None
    if match is None and leading:
        match = _leading_pattern(labels).match(output)
    if match is not None:
        label = canonical[match.group("label").lower()]
        return ParsedAnswer(label, "ok", match.start("label"), match.end("label"))
    if looks_like_garbage(output):
        return ParsedAnswer(None, "garbage")
    return ParsedAnswer(None, "no_answer")


def label_token_candidates(
    labels: Sequence[str], tokenize: Callable[[str], list[int]]
) -> dict[str, tuple[int, ...]]:
    """For each label, the single tokens that begin it as the next token.

    " A" and "A" are different tokens and templates differ on which follows the cue, so
    both are candidates (for word labels also their lowercase forms, e.g. " yes"); the
    label's logit is the logsumexp over its candidates, i.e. the probability that the
    next token starts that label either way. A spelling that is more than one token
    contributes its first token, unless that token also starts another label.

    Raises:
        ValueError: some label has no token that tells it apart from the others.
    """
    spellings: dict[str, list[str]] = {}
    for label in labels:
        forms = [f" {label}", label]
        if not _is_letter_set(labels) and label.lower() != label:
            forms += [f" {label.lower()}", label.lower()]
        spellings[label] = forms
    first_tokens: dict[str, list[int]] = {}
    for label, forms in spellings.items():
        ids: list[int] = []
        for form in forms:
            tokens = tokenize(form)
            if tokens and tokens[0] not in ids:
                ids.append(tokens[0])
        first_tokens[label] = ids
    owners: dict[int, set[str]] = {}
    for label, ids in first_tokens.items():
        for token in ids:
            owners.setdefault(token, set()).add(label)
    candidates: dict[str, tuple[int, ...]] = {}
    for label, ids in first_tokens.items():
        unique = tuple(t for t in ids if len(owners[t]) == 1)
        if not unique:
            raise ValueError(f"label {label!r} shares its first token with another label")
        candidates[label] = unique
    return candidates


def logsumexp(values: Sequence[float]) -> float:
    """log(sum(exp(v))) computed stably; -inf for no values."""
    finite = [v for v in values if v != -math.inf]
    if not finite:
        return -math.inf
    top = max(finite)
    return top + math.log(sum(math.exp(v - top) for v in finite))


def option_distribution(
    candidates: dict[str, tuple[int, ...]], logits: dict[int, float]
) -> tuple[dict[str, float], dict[str, float]]:
    """Normalised probabilities over the labels and each label's combined logit.

    Args:
        candidates: label → candidate token ids (from `label_token_candidates`).
        logits: token id → raw next-token logit at the answer position.

    Returns:
        (probabilities summing to 1 over the labels, label → logsumexp of its candidates).
    """
    combined = {label: logsumexp([logits[t] for t in ids]) for label, ids in candidates.items()}
    norm = logsumexp(list(combined.values()))
    probs = {label: math.exp(value - norm) for label, value in combined.items()}
    return probs, combined
