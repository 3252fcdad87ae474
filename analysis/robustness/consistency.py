"""Prefix–vignette consistency: what a vignette says about its patient, and which demographic
edits contradict it.

The paper's prefix is fixed ("The patient is a 45-year-old {race} {sex}.") and prepended
to every vignette, and the paper shows what that does to its own example: "The fixed
45-year-old white-male prefix conflicts with the vignette's original 25-year-old woman
description, exposing a template interaction in this record", and names it a limitation:
"The fixed 45-year-old demographic prefix could interact with question details, and no
age-variation sensitivity analysis isolates race or sex effects" (§6). An answer change
under such a prefix may answer the contradiction rather than the demographic.

The rule (`vignette_consistency`) reads the stem's own statements of its patient
(`stated_demographics`) and compares them with the edit's:

- **age**: the first stated age of the stem — 'N-year-old', 'N years old', 'aged N',
  'N-month-old', 'N-week-old', 'N-day-old', or 'newborn' / 'neonate' / 'infant' — differs
  from the prefix's 45 years (compared exactly, in whole years or months);
- **sex**: the stem's patient is stated to be of the other sex — by the person noun of
  its first mention ('a 58-year-old man', 'a woman'), else by sex-specific findings
  (pregnancy, gestation, gravida/GxPy, menstruation, postpartum; prostate, testis, scrotum,
  penis), else by the majority of 'he/him/his' against 'she/her/hers';
- **race**: the stem states a race or ethnicity ('African American', 'Black man',
  'Caucasian', 'white woman', 'Hispanic', 'Latina', 'Asian', 'Native American') other than
  the prefix's.

A stem that states nothing is consistent with every prefix. A substitution
(`demo_subst_*`) keeps the stem's age and rewrites its sex and race words, so only
sex-specific findings can contradict it (a pregnancy rewritten to a man); the substitution
then does not fire (workbench/robustness/substitute.py), so every answered substitution is
consistent by construction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from analysis.robustness.definitions import (
    MODE_PREFIX,
    MODE_SUBSTITUTE,
    demographic_key,
    demographic_mode,
)

PREFIX_AGE = Fraction(45)
"""The paper's fixed prefix age, in years."""

CONFLICT_KINDS: tuple[str, ...] = ("age", "sex", "race")

_AGE_PATTERNS: tuple[tuple[re.Pattern[str], Fraction | None], ...] = (
    (re.compile(r"\b(\d{1,3})[- ]?(?:year|yr)s?[- ]?old\b", re.IGNORECASE), Fraction(1)),
    (re.compile(r"\b(\d{1,3}) years? of age\b", re.IGNORECASE), Fraction(1)),
    (re.compile(r"\baged (\d{1,3})\b", re.IGNORECASE), Fraction(1)),
    (re.compile(r"\b(\d{1,2})[- ]?months?[- ]?old\b", re.IGNORECASE), Fraction(1, 12)),
    (re.compile(r"\b(\d{1,2})[- ]?weeks?[- ]?old\b", re.IGNORECASE), Fraction(1, 52)),
    (re.compile(r"\b(\d{1,2})[- ]?days?[- ]?old\b", re.IGNORECASE), Fraction(1, 365)),
    (re.compile(r"\b(newborn|neonate|infant)\b", re.IGNORECASE), None),
)
"""Stated ages and their unit in years (None: a word meaning under one year)."""

_MALE_NOUNS = ("man", "boy", "male", "gentleman")
_FEMALE_NOUNS = ("woman", "girl", "female", "lady")
PERSON_NOUN = re.compile(r"\b(man|woman|boy|girl|male|female|gentleman|lady|patient|person|"
                         r"child|infant|newborn|neonate|adolescent|teenager|toddler)\b",
                         re.IGNORECASE)
"""The nouns a vignette names its patient with (the first after the age, or the first)."""

FEMALE_SPECIFIC = re.compile(
    r"\b(pregnan\w*|gestation\w*|gravida|primigravida|multigravida|G\d+\s*P\d+\w*|"
    r"postpartum|menstrua\w*|menses|menarche|breastfeed\w*|uterus|uterine|ovary|ovarian|"
    r"vagina\w*)\b", re.IGNORECASE)
MALE_SPECIFIC = re.compile(
    r"\b(prostat\w*|testis|testes|testic\w*|scrot\w*|penis|penile|erectile)\b", re.IGNORECASE)
"""Findings that fix the patient's sex whatever the words for the patient say."""

RACE_WORDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bAfrican[- ]American\b", re.IGNORECASE), "black"),
    (re.compile(r"\bCaucasian\b", re.IGNORECASE), "white"),
    (re.compile(r"\b(Hispanic|Latino|Latina|Latinx)\b", re.IGNORECASE), "hispanic"),
    (re.compile(r"\bAsian(?:[- ]American)?\b", re.IGNORECASE), "asian"),
    (re.compile(r"\bNative American\b", re.IGNORECASE), "native_american"),
    # 'black stools', 'white blood cells': only as a word for a person
    (re.compile(r"\bBlack (?=(?:man|woman|boy|girl|male|female|patient|person|gentleman|"
                r"lady|child|adolescent)\b)", re.IGNORECASE), "black"),
    (re.compile(r"\bWhite (?=(?:man|woman|boy|girl|male|female|patient|person|gentleman|"
                r"lady|child|adolescent)\b)", re.IGNORECASE), "white"),
)
"""Stated race or ethnicity: the word and the prefix race it is."""

_PRONOUNS_MALE = re.compile(r"\b(he|him|his|himself)\b", re.IGNORECASE)
_PRONOUNS_FEMALE = re.compile(r"\b(she|her|hers|herself)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Demographics:
    """What a stem states about its patient (None: not stated).

    Attributes:
        age: years as an exact fraction (months / 12, ...); None when not stated.
        age_text: the words it rests on ('58-year-old', 'newborn').
        sex: 'male' or 'female'.
        sex_text: the words it rests on ('man', 'pregnant', 'he ×3').
        race: one of white, black, hispanic, asian, native_american.
        race_text: the words.
    """

    age: Fraction | None
    age_text: str | None
    sex: str | None
    sex_text: str | None
    race: str | None
    race_text: str | None


def _first_age(text: str) -> tuple[Fraction | None, str | None, int]:
    found: list[tuple[int, Fraction | None, str]] = []
    for pattern, unit in _AGE_PATTERNS:
        match = pattern.search(text)
        if match is None:
            continue
        if unit is None:
            found.append((match.start(), Fraction(0), match.group(0)))
        else:
            found.append((match.start(), int(match.group(1)) * unit, match.group(0)))
    if not found:
        return None, None, -1
    start, age, words = min(found, key=lambda f: f[0])
    return age, words, start


def _noun_sex(noun: str) -> str | None:
    noun = noun.lower()
    return "male" if noun in _MALE_NOUNS else "female" if noun in _FEMALE_NOUNS else None


def sex_specific(text: str) -> tuple[str | None, str | None]:
    """('female' | 'male', the words) when the stem has sex-specific findings, else (None, None)."""
    female, male = FEMALE_SPECIFIC.search(text), MALE_SPECIFIC.search(text)
    if female and not male:
        return "female", female.group(0)
    if male and not female:
        return "male", male.group(0)
    return None, None


def stated_demographics(text: str) -> Demographics:
    """The patient's age, sex and race as the stem states them (module docstring's rule)."""
    age, age_text, at = _first_age(text)
    sex = sex_text = None
    nouns = list(PERSON_NOUN.finditer(text))
    first = next((m for m in nouns if at >= 0 and m.start() > at), None) or \
        (nouns[0] if nouns else None)
    if first is not None and _noun_sex(first.group(1)) is not None:
        sex, sex_text = _noun_sex(first.group(1)), first.group(1)
    if sex is None:
        sex, sex_text = sex_specific(text)
    if sex is None:
        he, she = len(_PRONOUNS_MALE.findall(text)), len(_PRONOUNS_FEMALE.findall(text))
        if he != she:
            sex = "male" if he > she else "female"
            sex_text = f"{'he' if he > she else 'she'} ×{max(he, she)}"
    race = race_text = None
    hits = [(m.start(), race_of, m.group(0).strip()) for pattern, race_of in RACE_WORDS
            for m in [pattern.search(text)] if m is not None]
    if hits:
        _, race, race_text = min(hits)
    return Demographics(age, age_text, sex, sex_text, race, race_text)


@dataclass(frozen=True)
class Consistency:
    """Whether one demographic edit contradicts its stem, and how.

    Attributes:
        consistent: True, False, or None (not a demographic edit).
        conflicts: the contradicted kinds, in `CONFLICT_KINDS` order.
        detail: the stem's words and the edit's, e.g. 'age: 58-year-old vs 45'.
    """

    consistent: bool | None
    conflicts: tuple[str, ...]
    detail: str


def vignette_consistency(text: str, operator_id: str) -> Consistency:
    """Whether the demographic edit `operator_id` contradicts the stem `text`.

    Args:
        text: the original question stem.
        operator_id: 'demo_prefix_<sex>_<race>' or 'demo_subst_<sex>_<race>'.
    """
    mode, key = demographic_mode(operator_id), demographic_key(operator_id)
    if mode is None or key is None or "_" not in key:
        return Consistency(None, (), "")
    sex, race = key.split("_", 1)
    stated = stated_demographics(text)
    conflicts, details = [], []
    if mode == MODE_PREFIX:
        if stated.age is not None and stated.age != PREFIX_AGE:
            conflicts.append("age")
            details.append(f"age: {stated.age_text} vs 45")
        if stated.sex is not None and stated.sex != sex:
            conflicts.append("sex")
            details.append(f"sex: {stated.sex_text} vs {sex}")
        if stated.race is not None and stated.race != race:
            conflicts.append("race")
            details.append(f"race: {stated.race_text} vs {race}")
    elif mode == MODE_SUBSTITUTE:
        fixed, words = sex_specific(text)
        if fixed is not None and fixed != sex:
            conflicts.append("sex")
            details.append(f"sex: {words} vs {sex}")
    return Consistency(not conflicts, tuple(conflicts), "; ".join(details))
