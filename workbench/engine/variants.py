"""Variants in the store: one row per (item, operator, seed[, source generation]), idempotent.

A variant is the result of applying one operator to one item's stem, options, or (F-block)
one arm's baseline chain. The operator's tags (family, intent, locus, target) are copied
onto the row so `analysis` never imports the operator catalogue (docs/design.md).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from store.db import dumps, loads, utcnow
from store.records import Item
from workbench.perturb.base import Context, Edit, Operator, PerturbResult
from workbench.perturb.battery import SHUFFLE_OPERATOR


@dataclass(frozen=True)
class Variant:
    """A stored variant (a `variants` row)."""

    id: int
    key: str
    item_id: int
    operator_id: str
    family: str
    intent: str | None
    locus: str | None
    target: str
    seed: int
    source_generation_id: int | None
    fired: bool
    reason: str | None
    text: str | None
    options: dict[str, str] | None
    gold: str | None
    old: str | None
    new: str | None
    token_change_fraction: float | None
    details: dict[str, Any]


def never_applied(text: str, ctx: Context) -> Edit:
    """The edit function of an operator built only to carry its tags onto a stored variant
    whose text was made elsewhere (an imported text, a dose level, a subgroup's vignette):
    `store_variant` copies the tags and never applies it."""
    raise TypeError("an operator that only tags a stored variant is never applied")


def variant_key(item_id: int, operator_id: str, seed: int,
                source_generation_id: int | None = None, extra: Any = None) -> str:
    """The UNIQUE key of a variant: sha256 of (item, operator, seed, source generation).

    M-block and shuffle variants have no source generation, so every arm of every audit
    with the same seed shares one variant per item and operator; F-block variants are
    keyed by the baseline generation they edit. `extra` (any JSON value) keys a variant
    that depends on more than these, e.g. a paraphrase sized with one model's tokenizer
    to match one targeted edit; None leaves the key exactly as without it.
    """
    parts: list[Any] = [item_id, operator_id, seed, source_generation_id]
    if extra is not None:
        parts.append(extra)
    return hashlib.sha256(dumps(parts).encode()).hexdigest()


_COLUMNS = (
    "id, key, item_id, operator_id, family, intent, locus, target, seed, source_generation_id, "
    "fired, reason, text, options_json, gold, old, new, token_change_fraction, details_json"
)


def _variant(row: tuple) -> Variant:
    return Variant(
        id=row[0], key=row[1], item_id=row[2], operator_id=row[3], family=row[4],
        intent=row[5], locus=row[6], target=row[7], seed=row[8], source_generation_id=row[9],
        fired=bool(row[10]), reason=row[11], text=row[12], options=loads(row[13]), gold=row[14],
        old=row[15], new=row[16], token_change_fraction=row[17], details=loads(row[18]) or {},
    )


def get_variant(db: sqlite_utils.Database, variant_id: int) -> Variant | None:
    """The variant with row id `variant_id`, or None."""
    row = db.execute(f"SELECT {_COLUMNS} FROM variants WHERE id = ?", [variant_id]).fetchone()
    return None if row is None else _variant(row)


def find_variant(db: sqlite_utils.Database, key: str) -> Variant | None:
    """The variant stored under `key`, or None."""
    row = db.execute(f"SELECT {_COLUMNS} FROM variants WHERE key = ?", [key]).fetchone()
    return None if row is None else _variant(row)


def store_variant(
    db: sqlite_utils.Database,
    op: Operator,
    result: PerturbResult,
    *,
    item_id: int,
    seed: int,
    source_generation_id: int | None = None,
    extra_details: dict[str, Any] | None = None,
    key_extra: Any = None,
) -> Variant:
    """Store one operator result as a variant (or return the one already stored).

    Operators are deterministic for (seed, item, operator), so an existing row with the
    same key holds the same edit; it is returned unchanged.

    Args:
        db: the store.
        op: the catalogue entry (its tags are copied onto the row).
        result: what `op.apply` returned.
        item_id: the item edited.
        seed: the audit seed the edit was drawn with.
        source_generation_id: the baseline generation an F-block edit starts from.
        extra_details: planner facts to keep beside the operator's own details.
        key_extra: more of what the variant depends on (see `variant_key`).

    Returns:
        The stored variant.
    """
    key = variant_key(item_id, op.id, seed, source_generation_id, key_extra)
    existing = find_variant(db, key)
    if existing is not None:
        return existing
    details = dict(result.details)
    details.update(extra_details or {})
    db.execute(
        "INSERT OR IGNORE INTO variants (key, item_id, operator_id, family, intent, locus, "
        "target, seed, source_generation_id, fired, reason, text, options_json, gold, old, new, "
        "token_change_fraction, details_json, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [key, item_id, op.id, op.family, op.intent, op.locus, op.target, seed,
         source_generation_id, int(result.fired), result.reason, result.text,
         None if result.options is None else dumps(result.options), result.gold, result.old,
         result.new, result.token_change_fraction, dumps(details), utcnow()],
    )
    stored = find_variant(db, key)
    assert stored is not None  # inserted just now, or by a concurrent planner
    return stored


def question_variant(db: sqlite_utils.Database, op: Operator, item: Item, seed: int) -> Variant:
    """The stored variant of a question operator (stem) or the option shuffle (options) on an
    item: every kind that edits the question asks for it here, so they share the rows."""
    existing = find_variant(db, variant_key(item.id or 0, op.id, seed))
    if existing is not None:
        return existing
    if op.id == SHUFFLE_OPERATOR and item.kind == "binary":
        # Appendix D leaves out yes/no items: their labels are the option texts.
        result = PerturbResult(op.id, False, None, None, None,
                               "binary item: yes/no labels cannot be permuted (App. D)")
    else:
        result = op.apply(item.question, seed=seed, item_key=item.source_id,
                          options=item.options, gold=item.gold)
    return store_variant(db, op, result, item_id=item.id or 0, seed=seed)
