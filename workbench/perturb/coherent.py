"""Coherent variants of M2, M4 and M5: PAW's extensions beyond Appendix F (docs/operators.md).

The paper's literal rules stay the battery's operators; these are separate operator ids
(`M2_sex_coherent`, `M2_age_a_coherent`, `M4_negation_a_coherent`, `M5_severity_a_coherent`,
…, family as the literal one's), chosen with `--operators`, so the operator id recorded on
every variant says which rule made it:

- `M2_sex_coherent`: the sex marker flips and the patient's pronouns follow it (relatives'
  words stay; `workbench.perturb.patient_sex`);
- `M2_age_{a,b}_coherent`: the new age is drawn from the bracket's targets that fit the noun
  after the age ("boy" only under 18, "man" only from 18, obstetric notation 14–55); when
  none fits, a noun with an age counterpart follows the age (boy -> man, woman -> girl, …),
  and otherwise the edit does not fire;
- `M4_negation_{a,b}_coherent`: a hinge phrase already followed by a negation ("reports no
  …") is skipped, so no double negative is written;
- `M5_severity_{a,b}_coherent`: a severity word inside a named condition or stock phrase
  (`analysis.audit.coherence.NAMED_CONDITIONS`: "chronic obstructive pulmonary disease",
  "in no acute distress") is left alone; the first other qualifier is inverted.

F7 needs no variant: it never cuts a number in either reading (`chain.commute_and`).
"""

from __future__ import annotations

import re

from analysis.audit.coherence import NAMED_CONDITIONS
from workbench.perturb.base import Context, Edit, EditFn
from workbench.perturb.patient_sex import swap_patient_sex
from workbench.perturb.question import (
    AGE,
    M2_AGE_TARGETS,
    M2_SEX_SWAPS,
    M4_NEGATION_PATTERNS,
    M4_NEGATIONS,
    M5_TABLES,
    age_bracket,
)
from workbench.perturb.segments import match_case, word_pattern

_MARKER = re.compile(r"(?<!\w)(" + "|".join(M2_SEX_SWAPS) + r")(?!\w)", re.IGNORECASE)
_SEX_OF = {"man": "male", "male": "male", "boy": "male",
           "woman": "female", "female": "female", "girl": "female"}
_NOUN_AFTER_AGE = re.compile(r"\s+((?:[\w-]+\s+){0,3}?)(boy|girl|man|woman|gentleman|lady|"
                             r"G\d+P\d+\w*|primigravida|multigravida|gravida)\b",
                             re.IGNORECASE)
_CHILD_TO_ADULT = {"boy": "man", "girl": "woman"}
_ADULT_TO_CHILD = {"man": "boy", "woman": "girl", "gentleman": "boy", "lady": "girl"}
_NEGATED_AFTER = re.compile(r"\s+(?:no|not|never|without|denies|nothing|none)\b",
                            re.IGNORECASE)


def swap_sex(stem: str, ctx: Context) -> Edit:
    """M2 sex, coherent: the first marker's sex flips with the patient's own words."""
    marker = _MARKER.search(stem)
    if marker is None:
        return Edit.not_fired("no sex marker (man/woman, male/female, boy/girl)")
    # Matched case-insensitively, so 'GİRL' (dotted capital I) matches 'girl' while its
    # .lower() is 'gi̇rl': the sex is read by the same match, not by a lowered key.
    word = marker.group(1)
    sex = next(v for k, v in _SEX_OF.items() if re.fullmatch(k, word, re.IGNORECASE))
    text, edits = swap_patient_sex(stem, sex)
    if not edits:
        return Edit.not_fired("no word of the patient's sex to swap")
    return Edit(text=text, old=edits[0][0], new=edits[0][1],
                details={"edits": edits, "rule": "coherent"})


def _fits(age: int, noun: str) -> bool:
    lower = noun.lower()
    if lower in ("boy", "girl"):
        return age < 18
    if lower in ("man", "woman", "gentleman", "lady"):
        return age >= 18
    return 14 <= age <= 55  # obstetric notation


def swap_age(stem: str, ctx: Context) -> Edit:
    """M2 age, coherent: a target age that fits the age noun, or the noun follows the age."""
    match = AGE.search(stem)
    if match is None:
        return Edit.not_fired("no N-year-old age")
    age = int(match.group(1))
    bracket = age_bracket(age)
    targets = M2_AGE_TARGETS[bracket]
    noun = _NOUN_AFTER_AGE.match(stem, match.end())
    new_noun = None
    if noun is not None:
        fitting = tuple(t for t in targets if _fits(t, noun.group(2)))
        if fitting:
            targets = fitting
        else:
            lower = noun.group(2).lower()
            counterpart = _CHILD_TO_ADULT.get(lower) or _ADULT_TO_CHILD.get(lower)
            if counterpart is None:
                return Edit.not_fired(f"no target age of {bracket} fits "
                                      f"{noun.group(2)!r}")
            new_noun = match_case(noun.group(2), counterpart)
    new_age = ctx.rng.choice(targets)
    text = stem[: match.start(1)] + str(new_age) + stem[match.end(1):]
    details: dict[str, object] = {"bracket": bracket, "old_phrase": match.group(0),
                                  "rule": "coherent"}
    if noun is not None and new_noun is not None:
        shift = len(str(new_age)) - len(match.group(1))
        start, end = noun.start(2) + shift, noun.end(2) + shift
        text = text[:start] + new_noun + text[end:]
        details["noun"] = [noun.group(2), new_noun]
    return Edit(text=text, old=match.group(1), new=str(new_age), details=details)


def _named_spans(stem: str) -> list[tuple[int, int]]:
    lower = stem.lower()
    spans = []
    for name in NAMED_CONDITIONS:
        start = lower.find(name)
        while start >= 0:
            spans.append((start, start + len(name)))
            start = lower.find(name, start + 1)
    return spans


def _first_outside(stem: str, table: tuple[tuple[str, str], ...],
                   keep: list[tuple[int, int]], negated_ok: bool = True
                   ) -> tuple[re.Match[str], str, str] | None:
    for word, replacement in table:
        for match in re.finditer(word_pattern(word), stem):
            if any(a <= match.start() < b for a, b in keep):
                continue
            if not negated_ok and _NEGATED_AFTER.match(stem, match.end()):
                continue
            return match, word, replacement
    return None


def negate(variant: str) -> EditFn:
    """M4, coherent: the first hinge phrase (scan order) not already followed by a negation."""
    order = M4_NEGATIONS if variant == "a" else tuple(reversed(M4_NEGATIONS))

    def edit(stem: str, ctx: Context) -> Edit:
        found = _first_outside(stem, order, [], negated_ok=False)
        if found is None:
            return Edit.not_fired("no clinical hinge phrase that is not already negated")
        match, phrase, negated = found
        text = stem[: match.start()] + negated + stem[match.end():]
        return Edit(text=text, old=match.group(0), new=negated,
                    details={"matched": phrase, "rule": "coherent",
                             "chain_update_patterns": list(M4_NEGATION_PATTERNS)})

    return edit


def invert_severity(variant: str) -> EditFn:
    """M5, coherent: the first severity qualifier outside a named condition, inverted."""
    table = M5_TABLES[variant]

    def edit(stem: str, ctx: Context) -> Edit:
        found = _first_outside(stem, table, _named_spans(stem))
        if found is None:
            return Edit.not_fired("no severity qualifier outside a named condition")
        match, word, inverse = found
        new = match_case(match.group(0), inverse)
        text = stem[: match.start()] + new + stem[match.end():]
        return Edit(text=text, old=match.group(0), new=new,
                    details={"matched": word, "rule": "coherent"})

    return edit
