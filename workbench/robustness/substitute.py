"""The substitution mode of the demographic test: rewrite the vignette's own demographic words.

The paper prepends a fixed "The patient is a 45-year-old {race} {sex}." and so contradicts
most vignettes (docs/robustness.md, "Prefix–vignette consistency"). A substitution keeps the
vignette's own age and states the demographic where the vignette names its patient:

1. sex: when the vignette's patient is of the other sex, the patient's own gendered words are
   swapped (he<->she, man<->woman, his -> her, …; `workbench.perturb.patient_sex`): a
   relative's or partner's words stay ("His mother" -> "Her mother", "her husband" -> "his
   husband"), unlike seed 000's every-term `gender_swap`; a vignette whose findings fix its
   sex (pregnancy, prostate, …:
   `analysis.robustness.consistency.sex_specific`) is not rewritten to the other sex (the
   variant does not fire);
2. race: every stated race or ethnicity of the patient ('African American', 'Caucasian',
   'Latina', …) is replaced by the demographic's (one after a relative or partner named earlier
   in its sentence is theirs and stays: "His mother is African American"), and when none is
   stated the race is written before the first noun that names the patient after its age
   ('A 58-year-old man' -> 'A 58-year-old Black man'; a sexless noun also gets the sex: 'a
   Black male patient');
3. a vignette with no noun for its patient is not rewritten (the variant does not fire:
   use the prefix mode), and nor is one that already states exactly this demographic.

Operators `demo_subst_<sex>_<race>` (family 'demographic'), not in the catalogue: like the
CFV change, they exist for `paw robustness --demographic-mode substitute|both`.
"""

from __future__ import annotations

import re

from analysis.robustness.consistency import (
    PERSON_NOUN,
    RACE_WORDS,
    sex_specific,
    stated_demographics,
)
from analysis.robustness.definitions import DEMOGRAPHIC_FAMILY, MODE_SUBSTITUTE, mode_operator
from workbench.perturb.base import Context, Edit, EditFn, Operator
from workbench.perturb.baselines import DEMOGRAPHIC_PREFIXES
from workbench.perturb.patient_sex import RELATIVES, swap_patient_sex

RACE_WORD: dict[str, str] = {"white": "White", "black": "Black", "hispanic": "Hispanic"}
"""The word a substitution writes for each race of the paper's prefixes."""

_SEXLESS = {"patient", "person", "child", "infant", "newborn", "neonate", "adolescent",
            "teenager", "toddler"}


def substitute(text: str, sex: str, race: str) -> Edit:
    """The vignette `text` rewritten to the demographic (sex 'male'/'female', race 'white'/
    'black'/'hispanic'); not fired when it cannot be (module docstring)."""
    fixed, words = sex_specific(text)
    if fixed is not None and fixed != sex:
        return Edit.not_fired(f"sex-specific findings ({words!r}) fix the patient as {fixed}")
    stated = stated_demographics(text)
    out = text
    swaps: list[list[str]] = []
    if stated.sex is not None and stated.sex != sex:
        out, swaps = swap_patient_sex(text, stated.sex)
    word = RACE_WORD[race]
    stated_race = replaced = 0

    def patients(m: re.Match[str]) -> str:
        nonlocal stated_race, replaced
        if _relative_before(m.string, m.start()):
            return m.group(0)  # a relative's or partner's race ("His mother is Hispanic")
        stated_race += 1
        new = word + m.group(0)[len(m.group(0).rstrip()):]  # keeps what followed it
        replaced += new != m.group(0)
        return new

    for pattern, _ in RACE_WORDS:
        out = pattern.sub(patients, out)
    age_at = -1
    age = re.search(r"\b\d{1,3}[- ]?(?:year|yr|month|week|day)s?[- ]?old\b", out, re.IGNORECASE)
    if age is not None:
        age_at = age.end()
    nouns = list(PERSON_NOUN.finditer(out))
    noun = next((m for m in nouns if age_at >= 0 and m.start() >= age_at), None) or \
        (nouns[0] if nouns else None)
    if noun is None:
        return Edit.not_fired("no noun names the patient (use the prefix mode)")
    if not stated_race:
        said = noun.group(1)
        head = f"{word} {sex} " if said.lower() in _SEXLESS else f"{word} "
        out = out[:noun.start()] + head + out[noun.start():]
    elif noun.group(1).lower() in _SEXLESS and stated.sex is None:
        out = out[:noun.start()] + f"{sex} " + out[noun.start():]
    if out == text:
        return Edit.not_fired("the vignette already states this demographic")
    described = f"The patient is described as {word} {sex} (the vignette's own words rewritten)."
    return Edit(text=out, old=stated.race_text or stated.sex_text, new=described,
                details={"mode": MODE_SUBSTITUTE, "sex_swapped": bool(swaps),
                         "race_replaced": replaced, "kept_age": stated.age_text})


_SENTENCE_START = re.compile(r"(?:^|(?<=[.!?;])\s+)")
_RELATIVE = re.compile(r"\b(" + "|".join(RELATIVES) + r")\b", re.IGNORECASE)


def _relative_before(text: str, at: int) -> bool:
    """Whether a relative or partner is named earlier in the sentence (or clause) of `at`."""
    start = max((m.end() for m in _SENTENCE_START.finditer(text, 0, at)), default=0)
    return _RELATIVE.search(text, start, at) is not None


def _edit(sex: str, race: str) -> EditFn:
    def edit(text: str, ctx: Context) -> Edit:
        return substitute(text, sex, race)

    return edit


SUBSTITUTE_OPERATORS: dict[str, Operator] = {
    mode_operator(MODE_SUBSTITUTE, key): Operator(
        mode_operator(MODE_SUBSTITUTE, key), DEMOGRAPHIC_FAMILY, key,
        f"demographic substitution {key}", None, None, "question", DEMOGRAPHIC_FAMILY,
        "Rewrite the vignette's own sex and race words to " + key.replace("_", " ")
        + ", keeping its age (seed 003, PAW's substitution mode).", "",
        _edit(*key.split("_", 1)), source="robustness")
    for key in DEMOGRAPHIC_PREFIXES
}
"""The six substitution operators, by id (demographic keys as the prefixes')."""
