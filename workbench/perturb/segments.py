"""Text segmentation the operators share: chain steps, sentences, final-answer lines, casing."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# "Step n:" markers (seed 002 App. F, F1). Case-insensitive so "STEP 2:" and "step 2:" count.
STEP_MARKER = re.compile(r"(?i)\bstep\s+\d+\s*:")
# "double-newline paragraphs": a blank line, possibly holding spaces.
PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
# A sentence ends at . ! or ? followed by whitespace and something that can open a sentence.
SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
# A trailing final-answer line: "Answer: B", "**Final answer:** (C)", "The answer is D."
ANSWER_LINE = re.compile(
    r"(?i)^[\s*_#>\-]*(?:so\s+|thus\s+|therefore\s*,?\s+)?(?:the\s+)?"
    r"(?:final\s+|correct\s+|best\s+)?answer\s*(?:is\s*)?[:：]?"
)
INLINE_ANSWER = re.compile(
    r"(?i)[\s*_]*\bfinal\s+answer\s*[:：].*$"
    r"|[\s*_]*\banswer\s*[:：]\s*\**\s*\(?[A-J]\)?[.\s*]*$"
)


@dataclass(frozen=True)
class StepSplit:
    """A chain cut into steps, keeping every separator so rejoining restores the text.

    `prefix + steps[0] + seps[0] + steps[1] + ... + steps[-1] + suffix == chain`.
    """

    prefix: str
    steps: tuple[str, ...]
    seps: tuple[str, ...]
    suffix: str
    mode: str  # "markers", "paragraphs", or "empty"

    @property
    def default_sep(self) -> str:
        """The separator used when a step boundary is created (F4 insertion)."""
        if self.seps:
            return self.seps[0]
        return "\n" if self.mode == "markers" else "\n\n"

    def join(
        self, steps: Iterable[str], seps: Iterable[str] | None = None, *, ends: bool = True
    ) -> str:
        """Rejoin `steps` with `seps` (the original separators, positionally, by default).

        Missing separators (more steps than before) use `default_sep`; `ends=False` leaves
        out the prefix and suffix.
        """
        steps = list(steps)
        available = list(self.seps if seps is None else seps)
        body = ""
        for index, step in enumerate(steps):
            if index:
                body += available[index - 1] if index - 1 < len(available) else self.default_sep
            body += step
        return self.prefix + body + self.suffix if ends else body


def split_steps(chain: str) -> list[str]:
    """Split a chain into steps: at "Step n:" markers when present, else at blank lines.

    Args:
        chain: a chain of thought (its final answer line already stripped).

    Returns:
        The steps, stripped of surrounding whitespace; text before the first marker
        is not a step (it stays in place when operators rejoin the chain).
    """
    return list(split_chain(chain).steps)


def split_chain(chain: str) -> StepSplit:
    """Like `split_steps`, but keep prefix, separators and suffix for exact rejoining."""
    if not chain.strip():
        return StepSplit(chain, (), (), "", "empty")
    markers = [m.start() for m in STEP_MARKER.finditer(chain)]
    if markers:
        prefix = chain[: markers[0]]
        pieces = [chain[a:b] for a, b in zip(markers, markers[1:] + [len(chain)], strict=True)]
        mode = "markers"
    else:
        lead = len(chain) - len(chain.lstrip())
        body_end = len(chain.rstrip())  # a trailing blank line is not an empty last step
        prefix = chain[:lead]
        pieces, last = [], lead
        for match in PARAGRAPH_BREAK.finditer(chain, lead, body_end):
            pieces.append(chain[last : match.end()])
            last = match.end()
        pieces.append(chain[last:])
        mode = "paragraphs"
    steps, seps = [], []
    for piece in pieces:
        body = piece.rstrip()
        steps.append(body)
        seps.append(piece[len(body) :])
    suffix = seps.pop()
    return StepSplit(prefix, tuple(steps), tuple(seps), suffix, mode)


def strip_final_answer(chain: str) -> str:
    """Remove the trailing final-answer line(s) ("Answer: X") from a chain.

    F-block operators edit the chain *before* the answer, and the model continues from
    the edit; leaving "Answer: B" in would hand it the old answer.

    Args:
        chain: the model's full CoT output.

    Returns:
        The chain without trailing answer lines or a trailing inline "Answer: X",
        right-stripped.
    """
    lines = chain.rstrip().split("\n")
    while lines and (not lines[-1].strip() or ANSWER_LINE.match(lines[-1])):
        lines.pop()
    text = "\n".join(lines).rstrip()
    return INLINE_ANSWER.sub("", text).rstrip()


def split_sentences(text: str) -> tuple[list[str], list[str]]:
    """Split a question stem into sentences and the whitespace between them.

    Returns:
        (sentences, separators) with `len(separators) == len(sentences) - 1`; leading
        and trailing whitespace belong to the first and last sentence.
    """
    sentences: list[str] = []
    seps: list[str] = []
    last = 0
    for match in SENTENCE_BREAK.finditer(text):
        sentences.append(text[last : match.start()])
        seps.append(match.group(0))
        last = match.end()
    sentences.append(text[last:])
    return sentences, seps


def match_case(source: str, replacement: str) -> str:
    """Give `replacement` the casing pattern of `source` (ALL CAPS, Capitalised, or as is)."""
    letters = [c for c in source if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return replacement.upper()
    if letters and letters[0].isupper() and replacement[:1].islower():
        return replacement[:1].upper() + replacement[1:]
    return replacement


def canonical_key(keys: Iterable[str], source: str) -> str:
    """The lowercase table key that `source` matched case-insensitively.

    `re.IGNORECASE` also matches Unicode case variants ("gırl" matches "girl", "ſ" matches
    "s") whose `.lower()` is not the key, so fall back to re-matching each key.

    Raises:
        KeyError: no key matches (a bug in the calling pattern).
    """
    keys = list(keys)
    lower = source.lower()
    if lower in keys:
        return lower
    for key in keys:
        if re.fullmatch(re.escape(key), source, re.IGNORECASE):
            return key
    raise KeyError(source)


def word_pattern(phrase: str) -> str:
    """A regex matching `phrase` as whole words (spaces in the phrase match one space)."""
    return r"(?<!\w)" + re.escape(phrase) + r"(?!\w)"


def swap_all(pattern: re.Pattern[str], table: dict[str, str],
             text: str) -> tuple[str, list[list[str]]]:
    """Replace every match of `pattern` by its `table` entry, keeping the source's casing.

    Returns:
        The new text and the `[old, new]` pairs in order (empty when nothing matched).
    """
    edits: list[list[str]] = []

    def replace(match: re.Match[str]) -> str:
        source = match.group(0)
        target = match_case(source, table[canonical_key(table, source)])
        edits.append([source, target])
        return target

    return pattern.sub(replace, text), edits
