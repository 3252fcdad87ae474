"""The dose-response design of seed 000 §4.1 (Figures 2 and 3): paraphrases at fixed levels.

§4.1, "Do we need to account for the number of tokens changed?": "we generate paraphrases
at five token change levels (5%, 10%, 20%, 40%, 60%) … measuring flip rate and MI". In PAW
(`paw study --dose-levels 0.05,0.1,0.2,0.4,0.6`) each (item, level) is a comparison unit
whose anchor is a *dose variant* — the item's own question, tagged with the level, target
id `dose:<level>` — so the unit runs through the ordinary study machinery:

- the 'original' and the 'target' prompt are the same text, hence the same generation key
  (asked once, stored once);
- the token-adjusted paraphrase (stage 2) is sized to the level itself instead of to a
  targeted edit's fraction, with the audited model's tokenizer and the usual
  measure-and-retry and fallback (`paraphrase.plan_paraphrases` reads `dose_level`);
- the report (`analysis.counterfactual.dose`) plots flip rate and MI of original vs
  paraphrase against the achieved token-change fraction per level.

There is no fixed-sentence baseline and no test: the paper's figures carry no p-values.
"""

from __future__ import annotations

import sqlite_utils

from store.errors import UserError
from store.records import Item
from workbench.engine.variants import (
    Variant,
    find_variant,
    never_applied,
    store_variant,
    variant_key,
)

PREFIX = "dose:"
"""Target ids of dose-response units: `dose:<level>` (e.g. `dose:0.05`)."""

FAMILY = "dose"
"""The family stored on dose variants."""

PAPER_LEVELS: tuple[float, ...] = (0.05, 0.10, 0.20, 0.40, 0.60)
"""§4.1's five token-change levels."""


def level_id(level: float) -> str:
    """The target id of a level: `dose:0.05`."""
    return f"{PREFIX}{level:g}"


def resolve_levels(text: str | None) -> tuple[float, ...]:
    """Levels from a comma-separated `--dose-levels` value ('paper' = §4.1's five).

    Raises:
        UserError: a value that is not a fraction in (0, 1], or a repeated one.
    """
    if text is None or not text.strip():
        return ()
    if text.strip() == "paper":
        return PAPER_LEVELS
    levels: list[float] = []
    for word in (w.strip() for w in text.split(",") if w.strip()):
        try:
            value = float(word.rstrip("%")) / (100 if word.endswith("%") else 1)
        except ValueError:
            raise UserError(f"--dose-levels: expected fractions in (0, 1] such as "
                            f"0.05,0.1,0.2 (or 5%,10%), got {word!r}") from None
        if not 0 < value <= 1:
            raise UserError(f"--dose-levels: expected fractions in (0, 1], got {word!r}")
        if value in levels:
            raise UserError(f"--dose-levels: expected distinct levels, got {word!r} twice")
        levels.append(value)
    return tuple(levels)


def dose_variant(db: sqlite_utils.Database, target_id: str, item: Item, seed: int) -> Variant:
    """The stored anchor of one (item, level) unit: the item's question, tagged with its level."""
    from workbench.perturb.base import Operator, PerturbResult

    try:
        level = float(target_id[len(PREFIX):])
    except ValueError:
        raise UserError(f"target {target_id!r}: expected dose:<level>") from None
    key = variant_key(item.id or 0, target_id, seed)
    existing = find_variant(db, key)
    if existing is not None:
        return existing
    op = Operator(target_id, FAMILY, f"{level:g}", f"dose-response level {level:g}", None,
                  None, "question", FAMILY, "seed 000 §4.1: a paraphrase at this token-change "
                  "level against the unchanged question", "", never_applied)
    result = PerturbResult(target_id, True, item.question, None, None, None,
                           token_change_fraction=0.0, details={"dose_level": level})
    return store_variant(db, op, result, item_id=item.id or 0, seed=seed)
