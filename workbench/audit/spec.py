"""What an audit is: models × templates, dataset, operators, seed and decoding, as stored config.

`AuditSpec` is everything that defines the plan; it is stored as the audit's `config_json`
and hashed into the default audit name, so running the same command again finds the same
audit (and generates nothing new), while changing any setting makes a new one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from store.db import dumps
from store.errors import UserError

SHUFFLE_OPERATOR = "option_shuffle"
"""The Appendix D option shuffle: the catalogue id planned with role 'shuffle'."""

BLOCKS: tuple[str, ...] = ("baseline", "direct", "M", "F", "shuffle")
"""Progress blocks, in the order the CLI prints them."""

ROLE_BLOCK: dict[str, str] = {"baseline": "baseline", "direct": "direct", "m_block": "M",
                              "f_block": "F", "shuffle": "shuffle"}
"""Which progress block each job role counts in."""

CONFIG_VERSION = 1
"""Bumped if the meaning of the stored config changes."""

DEFAULT_MAX_TOKENS = 384
"""Tokens a CoT baseline, M-block answer or F-block continuation may generate."""

DIRECT_MAX_TOKENS = 16
"""Tokens a direct answer may generate (the answer is read at the end of the prompt)."""


def resolve_operators(text: str | None) -> tuple[str, ...]:
    """The operator ids an `--operators` value selects, in catalogue (paper) order.

    Args:
        text: comma-separated words: 'all' (F-block, M-block and the option shuffle),
            'F' or 'M' (one block), 'shuffle', a family ('F1', 'M2'), or operator ids.
            None or empty means 'all'.

    Raises:
        UserError: a word names no operator of the seed-002 battery.
    """
    from workbench.perturb import F_BLOCK, M_BLOCK, OPERATORS, load_catalogue

    battery = list(F_BLOCK) + list(M_BLOCK) + [SHUFFLE_OPERATOR]
    families = {OPERATORS[op].family for op in battery}
    chosen: set[str] = set()
    extras: list[str] = []  # user-defined operators and question-level baselines, in given order
    catalogue: dict | None = None
    for word in (w.strip() for w in (text or "all").split(",")):
        if not word:
            continue
        if word.lower() == "all":
            chosen.update(battery)
        elif word in ("F", "M"):
            chosen.update(F_BLOCK if word == "F" else M_BLOCK)
        elif word.lower() == "shuffle":
            chosen.add(SHUFFLE_OPERATOR)
        elif word in families:
            chosen.update(op for op in battery if OPERATORS[op].family == word)
        elif word in battery:
            chosen.add(word)
        else:
            catalogue = catalogue if catalogue is not None else load_catalogue()
            if word not in catalogue or not auditable(catalogue[word]):
                raise UserError(
                    f"--operators: expected all, F, M, shuffle, a family (F1..F7, M1..M6), "
                    f"a battery id ({', '.join(battery)}) or a user-defined or baseline "
                    f"operator that edits the question or the chain (`paw operators`), "
                    f"got {word!r}"
                )
            if word not in extras:
                extras.append(word)
    if not chosen and not extras:
        raise UserError("--operators: expected at least one operator, got none")
    return tuple(op for op in battery if op in chosen) + tuple(extras)


def auditable(op) -> bool:
    """Whether an audit can run `op` beside the battery: it edits the question stem or the
    chain and keeps the options (controls change the question asked, so they are not)."""
    return op.target in ("question", "chain") and op.block != "control"


@dataclass(frozen=True)
class AuditSpec:
    """The settings that define an audit's plan.

    Attributes:
        dataset: dataset name.
        models: registered model names (one arm per model × template).
        templates: CoT prompt template ids (`name@version`).
        operators: operator ids (see `resolve_operators`).
        seed: seed of every operator draw (and of the option shuffle).
        limit: first N items of the dataset (None: all).
        item_ids: explicit item source ids (in this order), instead of `limit`.
        max_tokens: generation budget of CoT, M-block and F-block generations.
        direct: also plan the no-CoT direct baseline.
        name: the audit's name (default: derived from the other settings).
    """

    dataset: str
    models: tuple[str, ...]
    templates: tuple[str, ...] = ("neutral_cot@1",)
    operators: tuple[str, ...] = field(default_factory=lambda: resolve_operators("all"))
    seed: int = 0
    limit: int | None = None
    item_ids: tuple[str, ...] | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS
    direct: bool = True
    name: str | None = None

    def __post_init__(self) -> None:
        if not self.models:
            raise UserError("--models: expected at least one model name, got none")
        if not self.templates:
            raise UserError("--templates: expected at least one template, got none")
        if self.limit is not None and self.limit < 1:
            raise UserError(f"--limit: expected a positive number, got {self.limit}")
        if self.max_tokens < 1:
            raise UserError(f"--max-tokens: expected a positive number, got {self.max_tokens}")

    def config(self) -> dict[str, Any]:
        """The stored form (`audits.config_json`): every setting except the name."""
        return {
            "version": CONFIG_VERSION, "dataset": self.dataset, "models": list(self.models),
            "templates": list(self.templates), "operators": list(self.operators),
            "seed": self.seed, "limit": self.limit,
            "item_ids": None if self.item_ids is None else list(self.item_ids),
            "max_tokens": self.max_tokens, "direct_max_tokens": DIRECT_MAX_TOKENS,
            "direct": self.direct,
        }

    @property
    def audit_name(self) -> str:
        """`name`, or `<dataset>-<8 hex of the config hash>` so equal settings share one audit."""
        if self.name:
            return self.name
        digest = hashlib.sha256(dumps(self.config()).encode()).hexdigest()[:8]
        return f"{self.dataset}-{digest}"


def arm_label(model: str, template: str) -> str:
    """The arm label shown in reports: `<model>/<template id>`."""
    return f"{model}/{template}"


def resolve_templates(text: str | None) -> tuple[str, ...]:
    """CoT template ids (`name@version`) from a comma-separated `--templates` value.

    Raises:
        UserError: an unknown template, or one that is not a chain-of-thought template.
    """
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
