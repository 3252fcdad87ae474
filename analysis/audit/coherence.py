"""Is an edited question still coherent? Five checks per edit, and their share per operator.

Seed 002's operators, applied literally as Appendix F states them, can leave a text that
contradicts itself (docs/operators.md, "Coherence"): M2's sex swap flips the marker but not
the pronouns ("A 45-year-old woman … He"), M2's age swap ignores the noun ("55-year-old
boy"), M5 inverts an adjective inside a named condition ("acute obstructive pulmonary
disease", "in no chronic distress"), M4 can negate a negative ("does not report no"), and a
meaning-preserving chain edit could cut a number ("38.pulse 120 and 5"). A model that ignores
such a swap may be reading the part the edit left alone, so DFG and CDR on that operator
measure something else. Each check compares the edited text with its original and flags only
an incoherence the edit brought in:

- `pronouns`: a pronoun of the other sex than the patient's sex marker, outside what a
  relative named in the same sentence accounts for;
- `age_noun`: an "N-year-old" whose noun does not fit N (a child's noun at 18 or more, an
  adult's under 13, obstetric notation under 14 or over 55);
- `named_condition`: a named condition or stock phrase of `NAMED_CONDITIONS` lost from the
  text (its severity word inverted);
- `double_negative`: a negation of M4's phrases followed by another negation;
- `cut_number`: a number in the edited text that is neither in the original nor the edit's
  own new value (a decimal, range or ratio split in two; digits after a letter, as in
  `B12` or `G4P3`, are part of a name and not counted).

The checks are PAW's, beyond Appendix F; they never change a result, they are reported beside
it (`coherence_table`), and the coherent operator variants (`*_coherent`,
`workbench/perturb/coherent.py`) avoid them.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import TYPE_CHECKING

from store.db import loads

if TYPE_CHECKING:
    import pandas as pd
    import sqlite_utils

CHECKS: tuple[str, ...] = ("pronouns", "age_noun", "named_condition", "double_negative",
                           "cut_number")
"""The checks, in report order."""

SHORT: dict[str, str] = {"pronouns": "pron", "age_noun": "age", "named_condition": "cond",
                         "double_negative": "neg", "cut_number": "num"}
"""Each check's short name, for a narrow table column (the flip inspector's `coh.`)."""

NAMED_CONDITIONS: tuple[str, ...] = (
    "chronic obstructive pulmonary disease", "acute respiratory distress syndrome",
    "acute lymphoblastic leukemia", "acute myeloid leukemia", "chronic lymphocytic leukemia",
    "chronic myeloid leukemia", "chronic kidney disease", "acute kidney injury",
    "acute coronary syndrome", "acute tubular necrosis", "acute interstitial nephritis",
    "chronic fatigue syndrome", "acute intermittent porphyria",
    "chronic granulomatous disease", "acute angle-closure glaucoma",
    "severe combined immunodeficiency", "mild cognitive impairment",
    "acute disseminated encephalomyelitis", "chronic inflammatory demyelinating",
    "high-grade squamous intraepithelial lesion", "low-grade squamous intraepithelial lesion",
    "acute chest syndrome", "acute stress disorder", "chronic traumatic encephalopathy",
    "acute promyelocytic leukemia", "chronic venous insufficiency",
    "in no acute distress", "in mild distress", "in severe distress",
)
"""Named conditions and stock phrases whose severity word is part of the name (the stated
list of the `named_condition` check, and what the coherent M5 leaves alone)."""

_MALE = {"he", "him", "his", "himself"}
_FEMALE = {"she", "her", "hers", "herself"}
_MARKERS = {"man": "male", "male": "male", "boy": "male", "gentleman": "male",
            "woman": "female", "female": "female", "girl": "female", "lady": "female"}
_RELATIVES = {
    "husband": "male", "wife": "female", "father": "male", "mother": "female", "son": "male",
    "daughter": "female", "brother": "male", "sister": "female", "uncle": "male",
    "aunt": "female", "nephew": "male", "niece": "female", "grandfather": "male",
    "grandmother": "female", "grandson": "male", "granddaughter": "female",
    "boyfriend": "male", "girlfriend": "female", "stepfather": "male", "stepmother": "female",
}
_WORD = re.compile(r"[A-Za-z]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
AGE_NOUN = re.compile(r"(\d{1,3})[- ]*(?:year|yr)s?[- ]*old\s+((?:[\w-]+\s+){0,3}?)"
                      r"(boy|girl|infant|toddler|child|newborn|neonate|man|woman|gentleman|"
                      r"lady|G\d+P\d+\w*|primigravida|multigravida|gravida)\b", re.IGNORECASE)
_CHILD = {"boy", "girl", "infant", "toddler", "child", "newborn", "neonate"}
_ADULT = {"man", "woman", "gentleman", "lady"}
_OBSTETRIC = re.compile(r"G\d+P\d+\w*|primigravida|multigravida|gravida", re.IGNORECASE)
DOUBLE_NEGATIVE = re.compile(
    r"\b(?:does not|do not|did not)\s+(?:present with|report|have a history of|complain of)"
    r"\s+(?:no|not|never|without|denies|nothing|none)\b", re.IGNORECASE)
NUMBER = re.compile(r"(?<![^\W_])\d+(?:[.,:/\-–٫٬]\d+)*")
"""A number: digits of any script with their decimal (`.`, `,`, Arabic `٫`), range or ratio
parts; digits glued to a letter before them (`B12`, `G4P3`, `HbA1c`, an operator id's `M5`)
are part of a name, not a number an edit could cut."""


@lru_cache(maxsize=4096)
def _pronoun_conflicts(text: str) -> int:
    """Pronouns of the other sex than the first sex marker's, not after a relative of their
    sex in the same sentence (0 when the text has no marker). Cached: an item's question is
    the original of every edit of it (the flip list, the annotation export)."""
    words = [w.lower() for w in _WORD.findall(text)]
    sex = next((_MARKERS[w] for w in words if w in _MARKERS), None)
    if sex is None:
        return 0
    other = _FEMALE if sex == "male" else _MALE
    if other.isdisjoint(words):
        return 0
    other_sex = "female" if sex == "male" else "male"
    conflicts = 0
    for sentence in _SENTENCE.split(text):
        seen: set[str] = set()
        tokens = [w.lower() for w in _WORD.findall(sentence)]
        for index, word in enumerate(tokens):
            if word in _RELATIVES:
                seen.add(_RELATIVES[word])
            elif word in other:
                following = tokens[index + 1] if index + 1 < len(tokens) else ""
                if other_sex in seen and following not in _RELATIVES:
                    continue  # refers to the relative of that sex named before it
                conflicts += 1  # the patient's ("her husband" of a man is one too)
    return conflicts


@lru_cache(maxsize=4096)
def _age_conflicts(text: str) -> int:
    bad = 0
    for match in AGE_NOUN.finditer(text):
        age, noun = int(match.group(1)), match.group(3).lower()
        if noun in _CHILD and age >= 18 or noun in _ADULT and age < 13 or \
                _OBSTETRIC.fullmatch(noun) and not 14 <= age <= 55:
            bad += 1
    return bad


@lru_cache(maxsize=4096)
def _double_negatives(text: str) -> int:
    return len(DOUBLE_NEGATIVE.findall(text))


@lru_cache(maxsize=4096)
def _numbers(text: str) -> Counter:
    return Counter(NUMBER.findall(text))


def _named(text: str) -> Counter:
    lower = text.lower()
    return Counter({name: lower.count(name) for name in NAMED_CONDITIONS if name in lower})


def flags(original: str, edited: str, new: str | None = None) -> list[str]:
    """The checks (`CHECKS`) an edit of `original` into `edited` fails, each only when the
    edit brought the incoherence in (the original did not have as much of it)."""
    out = []
    if _pronoun_conflicts(edited) > _pronoun_conflicts(original):
        out.append("pronouns")
    if _age_conflicts(edited) > _age_conflicts(original):
        out.append("age_noun")
    if _named(original) - _named(edited):
        out.append("named_condition")
    if _double_negatives(edited) > _double_negatives(original):
        out.append("double_negative")
    added = _numbers(edited) - _numbers(original) - Counter(NUMBER.findall(new or ""))
    if added:
        out.append("cut_number")
    return out


def edited_chain_source(source_text: str | None, details_json: str | None) -> str:
    """The baseline chain an F-block operator edited, the original of its checks: the source
    generation's output cut to the variant's recorded `chain_chars` (its final answer
    stripped, `workbench/audit/plan.py`)."""
    source_text = source_text or ""
    chars = (loads(details_json) or {}).get("chain_chars")
    return source_text[:chars] if isinstance(chars, int) else source_text


_EDITS_SQL = """
SELECT DISTINCT v.id, v.operator_id, v.family, v.target, v.text, v.new, i.question,
       g.output AS chain, v.details_json
FROM jobs j
JOIN variants v ON v.id = j.variant_id
JOIN items i ON i.id = v.item_id
LEFT JOIN generations g ON g.id = v.source_generation_id
WHERE j.audit_id = ? AND v.fired = 1 AND v.target IN ('question', 'chain')
ORDER BY v.operator_id, v.id
"""


def edit_flags(db: sqlite_utils.Database, audit_id: int) -> dict[int, list[str]]:
    """Variant id → the checks it fails, for every fired question or chain edit of an audit."""
    out = {}
    for vid, _, _, target, text, new, question, chain, details in db.execute(
            _EDITS_SQL, [audit_id]):
        original = question if target == "question" else edited_chain_source(chain, details)
        out[int(vid)] = flags(original, text or "", new)
    return out


def coherence_table(db: sqlite_utils.Database, audit_id: int) -> pd.DataFrame:
    """Per operator that fired: fired edits, the share flagged by any check, and each check's
    count (an edit is one variant, shared by every arm that answered it)."""
    import pandas as pd

    rows: dict[str, dict] = {}
    for _, operator, family, target, text, new, question, chain, details in db.execute(
            _EDITS_SQL, [audit_id]):
        original = question if target == "question" else edited_chain_source(chain, details)
        failed = flags(original, text or "", new)
        row = rows.setdefault(operator, {"operator": operator, "family": family, "fired": 0,
                                         "flagged": 0, **dict.fromkeys(CHECKS, 0)})
        row["fired"] += 1
        row["flagged"] += bool(failed)
        for check in failed:
            row[check] += 1
    frame = pd.DataFrame(list(rows.values()),
                         columns=["operator", "family", "fired", "flagged", *CHECKS])
    frame.insert(4, "flagged_pct", [100.0 * f / n if n else float("nan")
                                    for f, n in zip(frame["flagged"], frame["fired"],
                                                    strict=True)])
    frame = frame.set_index("operator")
    frame.attrs["decimals"] = {"flagged_pct": 1}
    return frame
