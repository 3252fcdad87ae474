"""What a robustness run is (seed 003): models, dataset, tests, prefixes, judge, embedder, seed.

`RobustnessSpec` is stored as the run's `config_json` and hashed into its default name, so
the same command resumes the same run. The judge model and the embedder are part of it:
they decide the CFV outcomes, direction labels, flags and EDD, so a report is never a mix
of two judges. Naming another judge makes a new run that reuses every stored generation of
the audited models and generates only the new judge's verdicts.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from analysis.robustness.definitions import (
    DEMOGRAPHIC_MODES,
    EDD_DEFAULT_EMBEDDER,
    MODE_PREFIX,
    RobustnessRole as Role,
)
from store.db import dumps
from store.errors import UserError

TESTS: tuple[str, ...] = ("cfv", "demographic")
"""The paper's two tests: counterfactual validity and demographic robustness."""

PREFIX_OPERATORS: tuple[str, ...] = (
    "demo_prefix_male_white", "demo_prefix_male_black", "demo_prefix_male_hispanic",
    "demo_prefix_female_white", "demo_prefix_female_black", "demo_prefix_female_hispanic",
)
"""The six demographic prefixes (catalogue ids; the texts live in workbench/perturb)."""

BLOCKS: tuple[str, ...] = ("baseline", "demographic", "CFV", "CFV answer", "judge")
"""Progress blocks, in the order the CLI prints them."""

ROLE_BLOCK: dict[str, str] = {
    Role.BASELINE: "baseline", Role.DEMOGRAPHIC: "demographic", Role.CFV_PROPOSE: "CFV",
    Role.CFV_ANSWER: "CFV answer", Role.JUDGE_CFV: "judge", Role.JUDGE_DIRECTION: "judge",
    Role.JUDGE_FLAGS: "judge",
}
"""Which progress block each job role counts in."""

CONFIG_VERSION = 1
"""Bumped if the meaning of the stored config changes."""

DEFAULT_MAX_TOKENS = 384
"""Tokens a CoT answer (baseline, prefixed, CFV re-answer) may generate."""

DEFAULT_CFV_MAX_TOKENS = 512
"""Tokens a CFV proposal may generate: it rewrites the whole case."""

DEFAULT_JUDGE_MAX_TOKENS = 160
"""Tokens a judge verdict may generate (the flags judge quotes evidence)."""


def resolve_prefixes(text: str | None) -> tuple[str, ...]:
    """Prefix operator ids from `--prefixes`: 'all' or keys such as 'male_white,female_black'.

    Raises:
        UserError: a word names no demographic prefix.
    """
    chosen: list[str] = []
    for word in (w.strip() for w in (text or "all").split(",")):
        if not word:
            continue
        if word.lower() == "all":
            chosen += [op for op in PREFIX_OPERATORS if op not in chosen]
            continue
        op = word if word.startswith("demo_prefix_") else f"demo_prefix_{word.lower()}"
        if op not in PREFIX_OPERATORS:
            keys = ", ".join(p.removeprefix("demo_prefix_") for p in PREFIX_OPERATORS)
            raise UserError(f"--prefixes: expected all or some of {keys}, got {word!r}")
        if op not in chosen:
            chosen.append(op)
    if not chosen:
        raise UserError("--prefixes: expected at least one prefix, got none")
    return tuple(op for op in PREFIX_OPERATORS if op in chosen)


def resolve_modes(text: str | None) -> tuple[str, ...]:
    """Demographic modes from `--demographic-mode`: prefix (the paper's), substitute, both.

    Raises:
        UserError: another word.
    """
    word = (text or MODE_PREFIX).strip().lower()
    if word == "both":
        return DEMOGRAPHIC_MODES
    if word in DEMOGRAPHIC_MODES:
        return (word,)
    raise UserError(f"--demographic-mode: expected prefix, substitute or both, got {text!r}")


def resolve_tests(text: str | None) -> tuple[str, ...]:
    """Test names from `--tests` ('all', 'cfv', 'demographic', comma-separated).

    Raises:
        UserError: an unknown test.
    """
    chosen: set[str] = set()
    for word in (w.strip().lower() for w in (text or "all").split(",")):
        if not word:
            continue
        if word == "all":
            chosen.update(TESTS)
        elif word in TESTS:
            chosen.add(word)
        else:
            raise UserError(f"--tests: expected all, cfv or demographic, got {word!r}")
    if not chosen:
        raise UserError("--tests: expected at least one test, got none")
    return tuple(t for t in TESTS if t in chosen)


@dataclass(frozen=True)
class RobustnessSpec:
    """The settings that define a robustness run.

    Attributes:
        dataset: dataset name.
        models: registered model names (one arm per model).
        template: the CoT template every answer uses (its reasoning is the explanation).
        tests: 'cfv' and/or 'demographic'.
        prefixes: demographic prefix operator ids (default: the paper's six).
        seed: seed of the CFV target draw (and of the prefix variants' keys).
        limit: first N items of the dataset (None: all).
        item_ids: explicit item source ids instead of `limit`.
        max_tokens: budget of every CoT answer.
        cfv_max_tokens: budget of a CFV proposal.
        judge: the judge model's registered name.
        judge_max_tokens: budget of a judge verdict.
        embedder: the EDD embedder spec (the embedder interface's names).
        modes: demographic modes: 'prefix' (the paper's prepended sentence) and/or
            'substitute' (the vignette's own words rewritten; `workbench.robustness.substitute`).
        name: the run's name (default: derived from the other settings).
    """

    dataset: str
    models: tuple[str, ...]
    template: str = "neutral_cot@1"
    tests: tuple[str, ...] = TESTS
    prefixes: tuple[str, ...] = PREFIX_OPERATORS
    seed: int = 0
    limit: int | None = None
    item_ids: tuple[str, ...] | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS
    cfv_max_tokens: int = DEFAULT_CFV_MAX_TOKENS
    judge: str = "default"
    judge_max_tokens: int = DEFAULT_JUDGE_MAX_TOKENS
    embedder: str = EDD_DEFAULT_EMBEDDER
    modes: tuple[str, ...] = (MODE_PREFIX,)
    name: str | None = None

    def __post_init__(self) -> None:
        if not self.models:
            raise UserError("--models: expected at least one model name, got none")
        if self.limit is not None and self.limit < 1:
            raise UserError(f"--limit: expected a positive number, got {self.limit}")
        for flag, value in (("--max-tokens", self.max_tokens),
                            ("--cfv-max-tokens", self.cfv_max_tokens),
                            ("--judge-max-tokens", self.judge_max_tokens)):
            if value < 1:
                raise UserError(f"{flag}: expected a positive number, got {value}")
        if not self.modes or any(m not in DEMOGRAPHIC_MODES for m in self.modes):
            raise UserError(f"--demographic-mode: expected prefix, substitute or both, got "
                            f"{', '.join(self.modes) or 'none'}")
        if len(set(self.models)) != len(self.models):
            raise UserError(f"--models: expected distinct names, got {', '.join(self.models)}")

    @property
    def demographic(self) -> bool:
        """The demographic test is planned."""
        return "demographic" in self.tests

    @property
    def cfv(self) -> bool:
        """The CFV test is planned."""
        return "cfv" in self.tests

    def config(self) -> dict[str, Any]:
        """The stored form (`audits.config_json`): every setting except the name."""
        return {
            "version": CONFIG_VERSION, "dataset": self.dataset, "models": list(self.models),
            "template": self.template, "tests": list(self.tests),
            "prefixes": list(self.prefixes) if self.demographic else [],
            "seed": self.seed, "limit": self.limit,
            "item_ids": None if self.item_ids is None else list(self.item_ids),
            "max_tokens": self.max_tokens, "cfv_max_tokens": self.cfv_max_tokens,
            "judge": self.judge, "judge_max_tokens": self.judge_max_tokens,
            "embedder": self.embedder if self.demographic else None,
            # Only when not the paper's default, so earlier runs keep their names.
            **({"demographic_modes": list(self.modes)}
               if self.demographic and self.modes != (MODE_PREFIX,) else {}),
        }

    @property
    def audit_name(self) -> str:
        """`name`, or `robustness-<dataset>-<8 hex of the config hash>`."""
        if self.name:
            return self.name
        digest = hashlib.sha256(dumps(self.config()).encode()).hexdigest()[:8]
        return f"robustness-{self.dataset}-{digest}"
