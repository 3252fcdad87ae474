"""Seed-000 baselines and controls; seed-003 demographic prefixes (prompt-level edits)."""

from __future__ import annotations

import re

from workbench.perturb.base import Context, Edit, EditFn
from workbench.perturb.segments import canonical_key, match_case, split_sentences
from workbench.perturb.tokenize import token_change_fraction

# Seed 000's fixed sentences, verbatim, by name (§4.1 MedPerturb; Bias-in-Bios; Q-Pain, App. H).
FIXED_SENTENCES: dict[str, str] = {
    "family_member": "A family member came with me to the appointment.",
    "profile_viewed": "This profile has been viewed",
    "record_reviewed": "This patient record has been reviewed.",
}
DEFAULT_FIXED_SENTENCE = "record_reviewed"

# Seed 003: a fixed 45-year-old prefix, male/female x White/Black/Hispanic. The paper does
# not print the template; this wording is ours (docs/operators.md).
DEMOGRAPHIC_TEMPLATE = "The patient is a 45-year-old {race} {sex}."
DEMOGRAPHIC_PREFIXES: dict[str, str] = {
    f"{sex}_{race.lower()}": DEMOGRAPHIC_TEMPLATE.format(race=race, sex=sex)
    for sex in ("male", "female")
    for race in ("White", "Black", "Hispanic")
}

# Seed 000 §4.2: "gender-swap terms ... but then ask: 'Is this patient male?'". Asked for a
# plain Yes/No answer, as the authors' released code asks it ("Answer the following question
# with only 'yes' or 'no'"), and read from the Yes/No token distribution.
CONTROL_QUESTION = "Is this patient male?"
CONTROL_OPTIONS: dict[str, str] = {"Yes": "Yes", "No": "No"}
CONTROL_FORMAT = "yes_no@1"
"""The controls' answer format (before it, options A. Yes / B. No). Stored control variants
are keyed by it (`workbench.counterfactual.plan.target_variant`), so a database that holds
lettered controls of an earlier PAW gets new variants rather than reusing those."""
# All gendered terms swapped by the recall control (both directions). "her" is resolved
# to "his" or "him" by the next word (below); "hers" -> "his".
GENDER_PAIRS: tuple[tuple[str, str], ...] = (
    ("he", "she"), ("himself", "herself"), ("man", "woman"), ("men", "women"),
    ("male", "female"), ("males", "females"), ("boy", "girl"), ("boys", "girls"),
    ("gentleman", "lady"), ("gentlemen", "ladies"), ("mr", "ms"), ("husband", "wife"),
    ("father", "mother"), ("son", "daughter"), ("brother", "sister"), ("uncle", "aunt"),
    ("nephew", "niece"), ("grandfather", "grandmother"), ("grandson", "granddaughter"),
    ("boyfriend", "girlfriend"),
)
_TO_FEMALE = {m: f for m, f in GENDER_PAIRS} | {"him": "her", "his": "her"}
_TO_MALE = {f: m for m, f in GENDER_PAIRS} | {"hers": "his"}
_GENDER_KEYS = sorted(set(_TO_FEMALE) | set(_TO_MALE) | {"her"}, key=lambda k: (-len(k), k))
_GENDER_WORD = re.compile(r"(?<!\w)(" + "|".join(_GENDER_KEYS) + r")(?!\w)", re.IGNORECASE)
# Words after which "her" is an object pronoun ("gave her a", "told her that") -> "him".
_HER_OBJECT_FOLLOWERS = frozenset(
    "a an the to and or but with for of in on at by from that this is was about as if "
    "when while into over after before again".split()
)
# Precision control: age + 1 year on the first "N-year-old" / "N years old".
_CONTROL_AGE = re.compile(r"(\d{1,3})([- ]*years?[- ]*old)")


def _with_period(sentence: str) -> str:
    return sentence if sentence.rstrip().endswith((".", "!", "?")) else sentence.rstrip() + "."


def prepend(sentence: str) -> EditFn:
    """An operator that prepends `sentence` (a full stop is added if it has none)."""

    def edit(text: str, ctx: Context) -> Edit:
        prefix = _with_period(sentence)
        return Edit(text=f"{prefix} {text}" if text else prefix, new=prefix)

    return edit


def fixed_sentence(text: str, ctx: Context) -> Edit:
    """Fixed-sentence baseline; `params["sentence"]` is a FIXED_SENTENCES name or any sentence."""
    chosen = str(ctx.params.get("sentence", DEFAULT_FIXED_SENTENCE))
    sentence = FIXED_SENTENCES.get(chosen, chosen)
    if not sentence.strip():
        return Edit.not_fired("empty fixed sentence")
    edit = prepend(sentence)(text, ctx)
    return Edit(text=edit.text, new=edit.new, details={"sentence": chosen})


def _swap_gender_word(match: re.Match[str], text: str) -> str:
    word = match.group(0)
    lower = canonical_key(_GENDER_KEYS, word)
    if lower == "her":
        following = re.match(r"\s+([A-Za-z]+)", text[match.end() :])
        is_object = following is None or following.group(1).lower() in _HER_OBJECT_FOLLOWERS
        return match_case(word, "him" if is_object else "his")
    target = _TO_FEMALE.get(lower) or _TO_MALE[lower]
    return match_case(word, target)


def gender_swap(text: str) -> tuple[str, list[list[str]]]:
    """Swap every gendered term in `text` (he<->she, man<->woman, ...), keeping casing.

    Returns:
        The swapped text and the list of [old, new] pairs, in order.
    """
    edits: list[list[str]] = []

    def replace(match: re.Match[str]) -> str:
        new = _swap_gender_word(match, text)
        edits.append([match.group(0), new])
        return new

    return _GENDER_WORD.sub(replace, text), edits


def swap_gender(text: str, ctx: Context) -> Edit:
    """Targeted gender swap (seed 000 App. B: "swap all gender-related terms").

    `details["direction"]` is seed 000 §4.3's signed indicator: +1 when the patient becomes
    female (the text was male), -1 when male; absent when the text does not say which.
    """
    male = patient_is_male(text)
    swapped, edits = gender_swap(text)
    if not edits:
        return Edit.not_fired("no gendered term to swap")
    details: dict[str, object] = {"edits": edits}
    if male is not None:
        details["direction"] = 1 if male else -1
    return Edit(text=swapped, old=edits[0][0], new=edits[0][1], details=details)


def patient_is_male(text: str) -> bool | None:
    """True/False by the majority of male vs female terms in `text`; None if tied or absent."""
    male = female = 0
    for match in _GENDER_WORD.finditer(text):
        lower = canonical_key(_GENDER_KEYS, match.group(0))
        if lower in _TO_FEMALE:
            male += 1
        elif lower in _TO_MALE or lower == "her":
            female += 1
    return None if male == female else male > female


def _vignette(text: str) -> str:
    """The stem without its final question sentence (the control asks its own question)."""
    sentences, seps = split_sentences(text.rstrip())
    if len(sentences) > 1 and sentences[-1].rstrip().endswith("?"):
        sentences, seps = sentences[:-1], seps[:-1]
    return sentences[0] + "".join(sep + s for sep, s in zip(seps, sentences[1:], strict=True))


def _ask(vignette: str) -> str:
    return f"{vignette} {CONTROL_QUESTION}" if vignette.strip() else CONTROL_QUESTION


def _gold(text: str) -> str | None:
    male = patient_is_male(text)
    return None if male is None else ("Yes" if male else "No")


def _control(
    ctx: Context, original_vignette: str, perturbed_vignette: str, **details: object
) -> Edit:
    reference = _ask(original_vignette)
    perturbed = _ask(perturbed_vignette)
    return Edit(
        text=perturbed,
        # Measured against the control's own reference (same question), not the raw stem.
        fraction=token_change_fraction(reference, perturbed, ctx.tokenizer),
        options=dict(CONTROL_OPTIONS),
        gold=_gold(perturbed_vignette),
        details={
            "control_baseline_text": reference,
            "control_baseline_gold": _gold(original_vignette),
            **details,
        },
    )


def control_recall(text: str, ctx: Context) -> Edit:
    """Recall (positive) control: gender-swap the vignette, then ask "Is this patient male?"."""
    vignette = _vignette(text)
    swapped, edits = gender_swap(vignette)
    if not edits:
        return Edit.not_fired("no gendered term to swap")
    edit = _control(ctx, vignette, swapped, edits=edits)
    return Edit(
        text=edit.text, old=edits[0][0], new=edits[0][1],
        options=edit.options, gold=edit.gold, details=edit.details, fraction=edit.fraction,
    )


def control_precision(text: str, ctx: Context) -> Edit:
    """Precision (negative) control: age + 1 year, then ask "Is this patient male?"."""
    vignette = _vignette(text)
    match = _CONTROL_AGE.search(vignette)
    if match is None:
        return Edit.not_fired("no N-year-old age")
    new_age = str(int(match.group(1)) + 1)
    older = vignette[: match.start(1)] + new_age + vignette[match.end(1) :]
    edit = _control(ctx, vignette, older)
    return Edit(
        text=edit.text, old=match.group(1), new=new_age,
        options=edit.options, gold=edit.gold, details=edit.details, fraction=edit.fraction,
    )
