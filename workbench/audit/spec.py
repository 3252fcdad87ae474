"""What an audit is: models × templates, dataset, operators, seed and decoding, as stored config.

`AuditSpec` is everything that defines the plan; it is stored as the audit's `config_json`
and hashed into the default audit name, so running the same command again finds the same
audit (and generates nothing new), while changing any setting makes a new one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from analysis.audit.definitions import AuditRole
from store.db import dumps
from store.errors import UserError
from workbench.perturb.battery import resolve_operators

BLOCKS: tuple[str, ...] = ("baseline", "direct", "M", "F", "shuffle")
"""Progress blocks, in the order the CLI prints them."""

ROLE_BLOCK: dict[str, str] = {AuditRole.BASELINE: "baseline", AuditRole.DIRECT: "direct",
                              AuditRole.M_BLOCK: "M", AuditRole.F_BLOCK: "F",
                              AuditRole.SHUFFLE: "shuffle"}
"""Which progress block each job role counts in."""

CONFIG_VERSION = 1
"""Bumped if the meaning of the stored config changes."""

DEFAULT_MAX_TOKENS = 384
"""Tokens a CoT baseline, M-block answer or F-block continuation may generate."""

DIRECT_MAX_TOKENS = 16
"""Tokens a direct answer may generate (the answer is read at the end of the prompt)."""


@dataclass(frozen=True)
class AuditSpec:
    """The settings that define an audit's plan.

    Attributes:
        dataset: dataset name.
        models: registered model names (one arm per model × template).
        templates: CoT prompt template ids (`name@version`).
        operators: operator ids (see `workbench.perturb.resolve_operators`).
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
