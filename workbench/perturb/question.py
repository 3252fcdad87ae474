"""M-block question operators M1–M6 (seed 002 Appendix F), with their verbatim word lists.

Matching is case-sensitive and on whole words, except where the paper says otherwise;
the reasons are in docs/operators.md.
"""

from __future__ import annotations

import re

from analysis.audit.definitions import NEGATION_PATTERNS
from workbench.perturb.base import Context, Edit, EditFn
from workbench.perturb.segments import split_sentences, swap_all, word_pattern

M1_PROTECTED_TAIL = 2  # "The final two sentences are protected"

# M2: "( 1,3)[- ]*year[- ]*old" in the extraction; reconstructed as (\d{1,3})[- ]*year[- ]*old.
AGE = re.compile(r"(\d{1,3})[- ]*year[- ]*old")
M2_AGE_TARGETS: dict[str, tuple[int, ...]] = {
    "under_18": (55, 65, 72),
    "over_60": (8, 14, 17),
    "18_to_60": (5, 12, 75, 85),
}
M2_SEX_SWAPS: dict[str, str] = {
    "man": "woman", "woman": "man",
    "male": "female", "female": "male",
    "boy": "girl", "girl": "boy",
}
_SEX_WORD = re.compile(r"(?<!\w)(woman|man|female|male|girl|boy)(?!\w)", re.IGNORECASE)

M3_DISTRACTORS: tuple[str, ...] = (
    "The patient’s cousin recently travelled abroad.",
    "The patient drinks three cups of coffee daily.",
    "The patient’s BMI is within the normal range.",
    "The patient reports exercising twice a week.",
    "The patient had a routine dental cleaning last month.",
)

# M4: variant (a) scans this order, variant (b) the exact reverse.
M4_NEGATIONS: tuple[tuple[str, str], ...] = (
    ("presents with", "does not present with"),
    ("reports", "does not report"),
    ("has a history of", "does not have a history of"),
    ("complains of", "does not complain of"),
)
# The chain-update rule scores M4 by any of these (seed 002 Appendix C); defined once, in
# analysis.audit.definitions, and echoed on every M4 result.
M4_NEGATION_PATTERNS: tuple[str, ...] = NEGATION_PATTERNS

# M5: the arrows' targets were lost in extraction; reconstructed from "inverts severity"
# (mild<->severe, acute<->chronic, low-grade<->high-grade). "moderate" has no inverse:
# (a) sends it to "severe", (b) to "mild" -- the paper says the variants differ there.
M5_TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "a": (
        ("mild", "severe"),
        ("severe", "mild"),
        ("moderate", "severe"),
        ("acute", "chronic"),
        ("chronic", "acute"),
        ("low-grade", "high-grade"),
        ("high-grade", "low-grade"),
    ),
    "b": (
        ("chronic", "acute"),
        ("acute", "chronic"),
        ("high-grade", "low-grade"),
        ("low-grade", "high-grade"),
        ("moderate", "mild"),
        ("severe", "mild"),
        ("mild", "severe"),
    ),
}

# M6: "for the past n days" -- n reconstructed as digits or a spelled-out number.
_N = r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
M6_TABLES: dict[str, tuple[tuple[str, str, str], ...]] = {
    # (label as printed in the paper, regex, replacement)
    "a": (
        ("for the past n days", rf"for the past {_N} days", "for the past three weeks"),
        ("over the last week", "over the last week", "over the last six months"),
        ("a few days ago", "a few days ago", "several years ago"),
        ("yesterday", "yesterday", "last year"),
        ("two weeks", "two weeks", "two years"),
    ),
    "b": (
        ("two weeks", "two weeks", "two years"),
        ("yesterday", "yesterday", "last month"),
        ("a few days ago", "a few days ago", "over a year ago"),
        ("over the last week", "over the last week", "over the last year"),
        ("for the past n days", rf"for the past {_N} days", "for the past several months"),
        ("last month", "last month", "several years ago"),
        ("this morning", "this morning", "last spring"),
    ),
}


def ablate_sentence(stem: str, ctx: Context) -> Edit:
    """M1: drop one randomly chosen sentence; the final two are protected (needs ≥ 3)."""
    sentences, seps = split_sentences(stem)
    n = len(sentences)
    if n < M1_PROTECTED_TAIL + 1:
        return Edit.not_fired(f"stem has {n} sentence(s); fewer than three")
    index = ctx.rng.randrange(n - M1_PROTECTED_TAIL)
    dropped = sentences[index]
    lead = dropped[: len(dropped) - len(dropped.lstrip())]
    kept = sentences[:index] + sentences[index + 1 :]
    kept_seps = seps[:index] + seps[index + 1 :] if index else seps[1:]
    if index == 0:
        kept[0] = lead + kept[0]  # leading whitespace of the stem stays put
    text = kept[0] + "".join(sep + s for sep, s in zip(kept_seps, kept[1:], strict=True))
    return Edit(
        text=text,
        old=dropped.strip(),
        details={"dropped_sentence": index + 1, "sentences": n},
    )


def age_bracket(age: int) -> str:
    """The M2 bracket of an age: under_18, over_60, or 18_to_60 (both ends inclusive)."""
    if age < 18:
        return "under_18"
    if age > 60:
        return "over_60"
    return "18_to_60"


def swap_age(stem: str, ctx: Context) -> Edit:
    """M2 age-a / age-b: move the first `N-year-old` age across the paediatric/geriatric line."""
    match = AGE.search(stem)
    if match is None:
        return Edit.not_fired("no N-year-old age")
    age = int(match.group(1))
    bracket = age_bracket(age)
    new_age = ctx.rng.choice(M2_AGE_TARGETS[bracket])
    text = stem[: match.start(1)] + str(new_age) + stem[match.end(1) :]
    return Edit(
        text=text,
        old=match.group(1),
        new=str(new_age),
        details={"bracket": bracket, "old_phrase": match.group(0)},
    )


def swap_sex(stem: str, ctx: Context) -> Edit:
    """M2 sex: flip every man/woman, male/female, boy/girl (whole words, casing kept)."""
    text, edits = swap_all(_SEX_WORD, M2_SEX_SWAPS, stem)
    if not edits:
        return Edit.not_fired("no sex marker (man/woman, male/female, boy/girl)")
    return Edit(text=text, old=edits[0][0], new=edits[0][1], details={"edits": edits})


def prepend_distractor(stem: str, ctx: Context) -> Edit:
    """M3: prepend one of the five distractor sentences (always fires)."""
    sentence = ctx.rng.choice(M3_DISTRACTORS)
    return Edit(text=f"{sentence} {stem}" if stem else sentence, new=sentence)


def _first_in_scan_order(
    stem: str, table: tuple[tuple[str, str, str], ...]
) -> tuple[re.Match[str], str, str] | None:
    for label, regex, replacement in table:
        match = re.search(regex, stem)
        if match is not None:
            return match, label, replacement
    return None


def _replace_first(stem: str, table: tuple[tuple[str, str, str], ...], what: str) -> Edit:
    found = _first_in_scan_order(stem, table)
    if found is None:
        return Edit.not_fired(f"no {what}")
    match, label, replacement = found
    text = stem[: match.start()] + replacement + stem[match.end() :]
    return Edit(text=text, old=match.group(0), new=replacement, details={"matched": label})


def negate(variant: str) -> EditFn:
    """M4: negate the first hinge phrase in scan order (a: table order, b: reversed)."""
    order = M4_NEGATIONS if variant == "a" else tuple(reversed(M4_NEGATIONS))
    table = tuple((phrase, word_pattern(phrase), negated) for phrase, negated in order)

    def edit(stem: str, ctx: Context) -> Edit:
        result = _replace_first(stem, table, "clinical hinge phrase")
        if result.text is None:
            return result
        details = dict(result.details, chain_update_patterns=list(M4_NEGATION_PATTERNS))
        return Edit(text=result.text, old=result.old, new=result.new, details=details)

    return edit


def invert_severity(variant: str) -> EditFn:
    """M5: replace the first severity qualifier in the variant's scan order with its inverse."""
    table = tuple((word, word_pattern(word), inverse) for word, inverse in M5_TABLES[variant])

    def edit(stem: str, ctx: Context) -> Edit:
        return _replace_first(stem, table, "severity qualifier")

    return edit


def shift_time(variant: str) -> EditFn:
    """M6: rewrite the first time phrase in the variant's scan order to a different scale."""
    table = tuple(
        (label, r"(?<!\w)" + regex + r"(?!\w)", replacement)
        for label, regex, replacement in M6_TABLES[variant]
    )

    def edit(stem: str, ctx: Context) -> Edit:
        return _replace_first(stem, table, "time phrase")

    return edit
