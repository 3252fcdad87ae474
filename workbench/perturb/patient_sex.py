"""Rewriting the patient's own sex words to the other sex, leaving other people's alone.

Seed 000's `gender_swap` flips every gendered term, which in a clinical vignette also flips
the patient's relatives ("His mother" -> "Her father", "her husband" -> "his wife"). This
rule rewrites only the words that name or refer to the patient:

1. only words of the patient's *old* sex change (to the new sex); a word already of the new
   sex names someone else ("she" for a male patient's mother) and stays;
2. relatives and partners (`RELATIVES`: mother, husband, son, …) are never the patient and
   stay; a possessive right before one is the patient's ("His mother" -> "Her mother");
3. a pronoun after a relative of its own sex in the same sentence refers to that relative and
   stays ("His father died when he was 50" keeps "he"); plural nouns (men, women, girls, …)
   name other people and stay.

Used by seed 003's substitution mode (`workbench.robustness.substitute`) and by the coherent
M2 sex operator (`M2_sex_coherent`, docs/operators.md).
"""

from __future__ import annotations

import re

from workbench.perturb.segments import SENTENCE_BREAK, match_case

RELATIVES: dict[str, str] = {
    "husband": "male", "wife": "female", "father": "male", "mother": "female",
    "son": "male", "daughter": "female", "brother": "male", "sister": "female",
    "uncle": "male", "aunt": "female", "nephew": "male", "niece": "female",
    "grandfather": "male", "grandmother": "female", "grandson": "male",
    "granddaughter": "female", "boyfriend": "male", "girlfriend": "female",
    "stepfather": "male", "stepmother": "female", "fiancé": "male", "fiancée": "female",
}
"""Words naming someone other than the patient, with their sex: never rewritten."""

PATIENT_WORDS: dict[str, dict[str, str]] = {
    "male": {"he": "she", "him": "her", "his": "her", "himself": "herself", "man": "woman",
             "male": "female", "boy": "girl", "gentleman": "lady", "mr": "ms"},
    "female": {"she": "he", "herself": "himself", "hers": "his", "woman": "man",
               "female": "male", "girl": "boy", "lady": "gentleman", "ms": "mr", "mrs": "mr",
               "her": "her"},  # "her" -> his/him by the next word (below)
}
"""Per old sex, the singular words that may name or refer to the patient, and their swap."""

PRONOUNS: frozenset[str] = frozenset(
    "he him his himself she her hers herself".split())

_WORDS = sorted({w for table in PATIENT_WORDS.values() for w in table} | set(RELATIVES),
                key=lambda w: (-len(w), w))
_WORD = re.compile(r"(?<!\w)(" + "|".join(_WORDS) + r")(?!\w)", re.IGNORECASE)
# Words after which "her" is an object pronoun ("gave her a", "told her that") -> "him".
_HER_OBJECT_FOLLOWERS = frozenset(
    "a an the to and or but with for of in on at by from that this is was about as if "
    "when while into over after before again unresponsive unconscious confused lethargic "
    "agitated drowsy home up down out".split()
)


def _sex_of(word: str) -> str | None:
    if word in RELATIVES:
        return RELATIVES[word]
    return next((sex for sex, table in PATIENT_WORDS.items() if word in table), None)


def _her(text: str, end: int) -> str:
    following = re.match(r"\s+([A-Za-z]+)", text[end:])
    if following is None or following.group(1).lower() in _HER_OBJECT_FOLLOWERS:
        return "him"
    return "his"


def swap_patient_sex(text: str, old: str) -> tuple[str, list[list[str]]]:
    """`text` with the patient's own words of sex `old` ('male'/'female') rewritten to the
    other sex (module docstring), keeping casing.

    Returns:
        The new text and the [old, new] pairs in order (empty when nothing changed).
    """
    table = PATIENT_WORDS[old]
    breaks = [m.start() for m in SENTENCE_BREAK.finditer(text)]
    relative_in: dict[int, set[str]] = {}  # sentence index -> sexes of relatives named so far
    out: list[str] = []
    edits: list[list[str]] = []
    at = 0
    for match in _WORD.finditer(text):
        word = match.group(0).lower()
        sentence = sum(b < match.start() for b in breaks)
        seen = relative_in.setdefault(sentence, set())
        if word in RELATIVES:
            seen.add(RELATIVES[word])
            continue
        if word not in table:
            continue
        next_word = re.match(r"\s+(\w+)", text[match.end():])
        before_relative = next_word is not None and next_word.group(1).lower() in RELATIVES
        if word in PRONOUNS and old in seen and not before_relative:
            continue  # refers to the relative of that sex named before it in this sentence
        new = _her(text, match.end()) if word == "her" else table[word]
        new = match_case(match.group(0), new)
        out.append(text[at:match.start()] + new)
        at = match.end()
        edits.append([match.group(0), new])
    out.append(text[at:])
    return "".join(out), edits


def patient_sex(text: str) -> str | None:
    """The sex of the first singular word naming the patient (man, girl, she, …), or None."""
    for match in _WORD.finditer(text):
        word = match.group(0).lower()
        if word not in RELATIVES and word not in PRONOUNS:
            return _sex_of(word)
    return None
