"""Token-adjusted paraphrase baseline (seed 000 §3.2): the Paraphraser interface and a
deterministic table-driven paraphraser, the fallback when no LLM paraphraser is configured."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from workbench.perturb.base import Context, Edit, EditFn
from workbench.perturb.segments import canonical_key, match_case
from workbench.perturb.tokenize import Tokenizer, WordTokenizer, token_change_fraction

DEFAULT_TARGET_FRACTION = 0.10
DEFAULT_TOLERANCE = 0.03

# Meaning-preserving rewordings for clinical vignettes. Deliberately absent: numbers,
# units, negations (no/not/denies/never/without), drug names, laboratory values and
# their names, demographic terms (age, sex, race, pronouns), and severity/time words
# that M2/M5/M6 edit. Matched on whole words, case-insensitively; casing is kept.
PARAPHRASE_TABLE: tuple[tuple[str, str], ...] = (
    ("which of the following", "which one of the following"),
    ("most likely", "most probable"),
    ("most appropriate", "best"),
    ("is brought to", "is taken to"),
    ("presents to", "comes to"),
    ("presents with", "comes in with"),
    ("emergency department", "emergency room"),
    ("physician", "doctor"),
    ("examination", "exam"),
    ("demonstrates", "shows"),
    ("reveals", "shows"),
    ("shows", "reveals"),
    ("approximately", "about"),
    ("began", "started"),
    ("begins", "starts"),
    ("started", "began"),
    ("subsequently", "later"),
    ("additionally", "also"),
    ("in addition", "also"),
    ("currently", "at present"),
    ("otherwise healthy", "otherwise well"),
    ("evaluation", "assessment"),
    ("medication", "medicine"),
    ("medications", "medicines"),
    ("administered", "given"),
    ("states", "says"),
    ("significant for", "notable for"),
    ("remarkable for", "notable for"),
    ("prior to", "before"),
    ("due to", "because of"),
    ("upon", "on"),
    ("patient", "individual"),
    ("recently", "lately"),
    ("immediately", "right away"),
    ("difficulty", "trouble"),
    ("appears", "seems"),
    ("is concerned about", "is worried about"),
    ("regarding", "about"),
    ("numerous", "many"),
    ("consistent with", "compatible with"),
    ("assess", "evaluate"),
)
_TABLE = {source: target for source, target in PARAPHRASE_TABLE}
_ALTERNATIVES = "|".join(re.escape(s) for s in sorted(_TABLE, key=len, reverse=True))
_PATTERN = re.compile(r"(?<!\w)(" + _ALTERNATIVES + r")(?!\w)", re.IGNORECASE)


@dataclass(frozen=True)
class Paraphrase:
    """A paraphraser's answer: the text (None if it failed) and the fraction it achieved."""

    text: str | None
    fraction: float
    within_tolerance: bool
    edits: list[list[str]] = field(default_factory=list)
    attempts: int = 1
    reason: str | None = None


@runtime_checkable
class Paraphraser(Protocol):
    """Produces a meaning-preserving paraphrase changing about `target_fraction` of tokens.

    An LLM paraphraser (measure-and-retry, seed 000) implements this and is passed as
    `params={"paraphraser": ...}` or registered with `paraphrase_operator(...)`.
    """

    name: str

    def paraphrase(
        self,
        text: str,
        *,
        target_fraction: float,
        tolerance: float,
        tokenizer: Tokenizer,
        rng: random.Random,
    ) -> Paraphrase:
        """Paraphrase `text`; report the token-change fraction measured with `tokenizer`."""
        ...


class TableParaphraser:
    """Deterministic paraphraser: applies table rewordings in a seeded order.

    Greedy: walk the candidate rewordings (every match in the text, so across all its
    sentences) in a seeded random order, keep each one that does not push the fraction
    above target + tolerance, stop at the first non-empty set within tolerance (so a target
    at or below the tolerance still gets one rewording). When the table runs out first, the
    result says why (`reason`): no rewording occurs, each alone changes too much, or how
    far it got.

    Args:
        table: (source, replacement) rewordings; default `PARAPHRASE_TABLE`
            (`paraphrase_rules.EXTENDED_TABLE` for multi-sentence paraphrases).
    """

    name = "table"

    def __init__(self, table: tuple[tuple[str, str], ...] = PARAPHRASE_TABLE) -> None:
        self.table = {source: target for source, target in table}
        alternatives = "|".join(re.escape(s) for s in sorted(self.table, key=len, reverse=True))
        self.pattern = _PATTERN if table is PARAPHRASE_TABLE else re.compile(
            r"(?<!\w)(" + alternatives + r")(?!\w)", re.IGNORECASE)

    def paraphrase(
        self,
        text: str,
        *,
        target_fraction: float,
        tolerance: float,
        tokenizer: Tokenizer,
        rng: random.Random,
    ) -> Paraphrase:
        """See `Paraphraser.paraphrase`."""
        candidates = [m for m in self.pattern.finditer(text)]
        rng.shuffle(candidates)
        chosen: list[re.Match[str]] = []
        best_text, best_fraction = text, 0.0
        attempts = 0
        least_alone: float | None = None  # the smallest change of one rewording alone, if over
        for match in candidates:
            # the tolerance decides acceptance, not whether to try: until one rewording is
            # kept, even a target at or below the tolerance (a race swap's 0.02) is tried
            if chosen and best_fraction >= target_fraction - tolerance:
                break
            trial = chosen + [match]
            attempts += 1
            trial_text = _render(text, trial, self.table)
            fraction = token_change_fraction(text, trial_text, tokenizer)
            if fraction <= target_fraction + tolerance:
                chosen, best_text, best_fraction = trial, trial_text, fraction
            elif not chosen:
                least_alone = fraction if least_alone is None else min(least_alone, fraction)
        within = bool(chosen) and abs(best_fraction - target_fraction) <= tolerance
        edits = [[m.group(0), _replacement(m, self.table)]
                 for m in sorted(chosen, key=lambda m: m.start())]
        reason = None
        if not candidates:
            reason = "no rewording of the paraphrase table occurs in the text"
        elif not chosen:
            reason = (f"each of the {len(candidates)} applicable rewordings alone changes more "
                      f"than {target_fraction + tolerance:.3f} of the tokens (the least "
                      f"{least_alone:.3f})")
        elif not within:
            reason = (f"reached {best_fraction:.3f} of {target_fraction:.3f} ± {tolerance:.3f} "
                      f"with {len(chosen)} of the {len(candidates)} applicable rewordings")
        return Paraphrase(
            text=best_text if chosen else None,
            fraction=best_fraction,
            within_tolerance=within,
            edits=edits,
            attempts=attempts,
            reason=reason,
        )


def _replacement(match: re.Match[str], table: dict[str, str] = _TABLE) -> str:
    return match_case(match.group(0), table[canonical_key(table, match.group(0))])


def _render(text: str, matches: list[re.Match[str]], table: dict[str, str] = _TABLE) -> str:
    out, last = [], 0
    for match in sorted(matches, key=lambda m: m.start()):
        out.append(text[last : match.start()])
        out.append(_replacement(match, table))
        last = match.end()
    out.append(text[last:])
    return "".join(out)


def _number(params: dict, key: str, default: float) -> float | None:
    try:
        value = float(params.get(key, default))
    except (TypeError, ValueError):
        return None
    return value if 0.0 <= value <= 1.0 else None


def paraphrase_operator(default: Paraphraser | None = None) -> EditFn:
    """The token-adjusted paraphrase baseline as an operator function.

    Params: `target_fraction` (default 0.10), `tolerance` (absolute, default 0.03),
    `strict` (default True: a paraphrase outside the tolerance is *not fired*, since a
    size-mismatched baseline is not the baseline), `paraphraser` (a `Paraphraser`).
    """

    def edit(text: str, ctx: Context) -> Edit:
        params = dict(ctx.params)
        target = _number(params, "target_fraction", DEFAULT_TARGET_FRACTION)
        tolerance = _number(params, "tolerance", DEFAULT_TOLERANCE)
        if target is None or tolerance is None:
            return Edit.not_fired("target_fraction and tolerance must be numbers in [0, 1]")
        if target <= 0:
            return Edit.not_fired("target_fraction is 0: nothing to match")
        strict = str(params.get("strict", True)).lower() not in ("false", "0", "no")
        paraphraser = params.get("paraphraser") or default or TableParaphraser()
        result = paraphraser.paraphrase(
            text,
            target_fraction=target,
            tolerance=tolerance,
            tokenizer=ctx.tokenizer or WordTokenizer(),
            rng=ctx.rng,
        )
        details = {
            "paraphraser": getattr(paraphraser, "name", type(paraphraser).__name__),
            "target_fraction": target,
            "tolerance": tolerance,
            "achieved_fraction": round(result.fraction, 6),
            "within_tolerance": result.within_tolerance,
            "attempts": result.attempts,
            "edits": result.edits,
        }
        if result.text is None:
            return Edit.not_fired(result.reason or "paraphraser returned nothing", **details)
        if strict and not result.within_tolerance:
            reason = (
                f"could not reach {target:.3f} ± {tolerance:.3f} "
                f"(best {result.fraction:.3f})"
            )
            return Edit.not_fired(reason, **details)
        first = result.edits[0] if result.edits else [None, None]
        return Edit(
            text=result.text, old=first[0], new=first[1], details=details, fraction=result.fraction
        )

    return edit
