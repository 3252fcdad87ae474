"""What every kind's planner shares: the stored plan, its items, its arms' labels and templates.

An arm is one model with one prompt template; every kind labels it `<model>/<template>`, picks
its items the same way (`--items` ids in that order, else the dataset's first `--limit`) and
reads `--templates` by the same rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import sqlite_utils

from store.jobs import Arm, Audit
from store.records import Item, ModelRecord


@dataclass(frozen=True)
class Plan:
    """A stored piece of work with its arms, the models behind them, and its items."""

    audit: Audit
    arms: tuple[Arm, ...]
    models: dict[int, ModelRecord]
    items: tuple[Item, ...]


class ItemSelection(Protocol):
    """The settings that choose a plan's items (every kind's spec has them)."""

    @property
    def dataset(self) -> str: ...

    @property
    def limit(self) -> int | None: ...

    @property
    def item_ids(self) -> tuple[str, ...] | None: ...


def select_items(db: sqlite_utils.Database, spec: ItemSelection) -> list[Item]:
    """The plan's items: `item_ids` in that order, else the first `limit` of the dataset.

    Raises:
        NotFound: the dataset does not exist.
        UserError: an item id is not in the dataset, or the dataset is empty.
    """
    from store.datasets import get_items
    from store.errors import UserError

    items = get_items(db, spec.dataset, None if spec.item_ids else spec.limit)
    if spec.item_ids:
        by_source = {item.source_id: item for item in items}
        missing = [s for s in spec.item_ids if s not in by_source]
        if missing:
            some = ", ".join(item.source_id for item in items[:3])
            raise UserError(f"items: expected ids of dataset {spec.dataset!r} (such as "
                            f"{some}), got {', '.join(missing[:5])}")
        items = [by_source[s] for s in spec.item_ids]
    if not items:
        raise UserError(f"dataset {spec.dataset!r} has no items")
    return items


def arm_label(model: str, template: str) -> str:
    """The arm label shown in reports: `<model>/<template id>`."""
    return f"{model}/{template}"


def resolve_templates(text: str | None) -> tuple[str, ...]:
    """CoT template ids (`name@version`) from a comma-separated `--templates` value.

    Raises:
        UserError: an unknown template, or one that is not a chain-of-thought template.
    """
    from store.errors import UserError
    from workbench.models.templates import get_template

    ids: list[str] = []
    for word in (w.strip() for w in (text or "neutral_cot").split(",")):
        if not word:
            continue
        template = get_template(word)
        if template.mode != "cot":
            raise UserError(f"--templates: expected a chain-of-thought template, got "
                            f"{template.id!r} (a {template.mode} template)")
        if template.id not in ids:
            ids.append(template.id)
    if not ids:
        raise UserError("--templates: expected at least one template, got none")
    return tuple(ids)


ITEM_KINDS: dict[str, str] = {"any": "every question", "yes_no": "yes/no questions",
                              "mcq": "multiple-choice questions"}
"""What the launch form's item filter offers (yes/no as `templates.is_yes_no` decides)."""


def items_of_kind(db: sqlite_utils.Database, dataset: str, kind: str,
                  limit: int | None = None) -> tuple[str, ...]:
    """The ids of a dataset's items of one kind (a key of `ITEM_KINDS`), in import order,
    the first `limit` of them if given.

    Raises:
        NotFound: the dataset does not exist.
        UserError: an unknown kind, or none of that kind in the dataset.
    """
    from store.datasets import get_items
    from store.errors import UserError
    from workbench.models.templates import is_yes_no

    if kind not in ITEM_KINDS:
        raise UserError(f"item kind: expected one of {', '.join(ITEM_KINDS)}, got {kind!r}")
    items = get_items(db, dataset)
    chosen = [item.source_id for item in items
              if kind == "any" or is_yes_no(item.kind, item.options) == (kind == "yes_no")]
    if not chosen:
        raise UserError(f"items: dataset {dataset!r} has no {ITEM_KINDS[kind]}")
    return tuple(chosen[:limit] if limit is not None else chosen)
