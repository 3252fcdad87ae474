"""What a DBPA analysis is (seed 001): conditions, k samples, decoding, embedders, distances.

`DbpaSpec` is stored as the analysis's `config_json` and hashed into its default name, so
the same `paw dbpa` command finds the same analysis (and generates, embeds and tests
nothing new), while any other setting makes a new one that still reuses every stored
generation and embedding (both are content-addressed).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from analysis.common.options import choices
from analysis.dbpa.definitions import Correction, DbpaRole
from store.db import dumps
from store.errors import UserError

CONFIG_VERSION = 2
"""Bumped if the meaning of the stored config changes (2: the identity control and the
k guard's `allow_small_k`; a version-1 config is resumed as it was stored, `spec_of`)."""

DEFAULT_OPERATORS = "M2_sex,M3_distractor_a,M4_negation_a,M5_severity_a"
"""Two destructive edits that should move the answer distribution (M4, M5), one the paper
tags destructive on the surface (M2 sex) and one preserving distractor (M3)."""

DEFAULT_K = 10
"""Samples per condition (the authors' code draws 20; docs/dbpa.md "Defaults" says why 10:
C(20, 10) = 184,756 distinct splits put the floor at B's 1/(1 + B), and sampling is the
cost on a CPU)."""
DEFAULT_TEMPERATURE = 0.7
"""Seed 000's sampling temperature (SPEC A5); the authors' DBPA code samples at 1.0."""
DEFAULT_MAX_TOKENS = 128
"""Free-text answers of at most 128 tokens (the authors': 256): long enough for a short
explanation and the answer line on SmolLM2, short enough that k = 10 per condition stays
minutes on 2 cores."""

DEFAULT_PERMUTATIONS = 1000
"""B (the authors' default too): p ≥ 1/1001, enough for Holm at α = 0.05 over up to 49
tests when k is large enough (k = 10 unpaired; `analysis.dbpa.design.minimum_k`)."""

DEFAULT_ALPHA = 0.05
SEED_MODES = ("independent", "shared")
"""'independent': every (model, condition, sample index) has its own seed, as the paper's
exchangeability needs; 'shared': sample i of every condition uses seed base + i (common
random numbers). Shared seeds couple y_i and y'_i, so their tests swap within pairs
instead of permuting the pool (`analysis.dbpa.design`; measured in
bench/dbpa_null_power.py and docs/dbpa.md)."""

IDENTITY = "identity_control"
"""The identity control's condition and perturbation name: the baseline question asked
again with its own independent seeds (the authors' false-positive measure)."""

ROLE_BLOCK: dict[str, str] = {DbpaRole.BASELINE: "baseline", DbpaRole.PERTURBED: "perturbed",
                              DbpaRole.IDENTITY: "identity control"}
BLOCKS: tuple[str, ...] = ("baseline", "perturbed", "identity control")


def sample_seed(mode: str, base: int, model_sha256: str, condition: str, index: int) -> int:
    """The sampler seed of sample `index` of a condition: a function of the index, never of k.

    Args:
        mode: 'independent' or 'shared'.
        base: the analysis seed.
        model_sha256: the model's file hash (independent mode: models draw apart).
        condition: 'baseline', the operator id, or `IDENTITY`.
        index: 0-based sample index.
    """
    if mode == "shared":
        return base + index
    digest = hashlib.sha256(f"dbpa:{base}:{model_sha256}:{condition}:{index}".encode())
    return int(digest.hexdigest()[:8], 16) & 0x7FFFFFFF


def split_words(text: str | None) -> tuple[str, ...]:
    """Comma-separated words, stripped, empty ones dropped."""
    return tuple(w.strip() for w in (text or "").split(",") if w.strip())


@dataclass(frozen=True)
class DbpaSpec:
    """The settings that define a DBPA analysis.

    Attributes:
        dataset: dataset name.
        models: one model (perturbation tests), or the two of a model swap.
        model_swap: test the second model against the first on the unperturbed question.
        operators: question operators, each a perturbation (may be empty for a swap).
        k: samples per (item, condition).
        temperature: sampling temperature of every sample.
        max_tokens: generation budget of every sample.
        seed: the analysis seed (operator draws and sample seeds; each test's permutation
            seed is a hash of the test's identity, `workbench.dbpa.analyse.TestSpec`).
        seeds: 'independent' or 'shared' (see `SEED_MODES`; shared seeds make paired tests).
        template: the CoT prompt template.
        limit: first N items (None: all).
        item_ids: explicit item source ids instead of `limit`.
        embedders: embedder specs (`workbench.embed`).
        distances: discrepancies ω ('jsd', 'energy', 'energy_emb').
        permutations: B.
        alpha: significance level after correction.
        correction: 'holm', 'bonferroni' or 'none', over the declared family.
        should_change / should_not_change: the TPR/FPR partition (None: by intent tag).
        identity_control: also sample the baseline again with independent seeds and test
            it against the baseline (the empirical FPR).
        allow_small_k: run even when k (or B) is too small for a family to reject at α
            (the report then warns); otherwise such a plan is refused.
        name: the analysis name (default: derived from the other settings).
        version: the config layout (`CONFIG_VERSION`; 1 for analyses stored before it).
    """

    dataset: str
    models: tuple[str, ...] = ("default",)
    model_swap: bool = False
    operators: tuple[str, ...] = ()
    k: int = DEFAULT_K
    temperature: float = DEFAULT_TEMPERATURE
    max_tokens: int = DEFAULT_MAX_TOKENS
    seed: int = 0
    seeds: str = "independent"
    template: str = "neutral_cot@1"
    limit: int | None = None
    item_ids: tuple[str, ...] | None = None
    embedders: tuple[str, ...] = ("tfidf",)
    distances: tuple[str, ...] = ("jsd",)
    permutations: int = DEFAULT_PERMUTATIONS
    alpha: float = DEFAULT_ALPHA
    correction: Correction = Correction.HOLM
    should_change: tuple[str, ...] | None = None
    should_not_change: tuple[str, ...] | None = None
    identity_control: bool = True
    allow_small_k: bool = False
    name: str | None = None
    version: int = CONFIG_VERSION

    def __post_init__(self) -> None:
        from analysis.dbpa.statistics import DISTANCES

        if self.k < 2:
            raise UserError(f"--k: expected at least 2 samples per condition (P0 needs a "
                            f"pair), got {self.k}")
        if self.temperature <= 0:
            raise UserError(f"--temperature: expected a positive temperature (k greedy "
                            f"samples would all be the same text), got {self.temperature}")
        if self.max_tokens < 1:
            raise UserError(f"--max-tokens: expected a positive number, got {self.max_tokens}")
        if self.permutations < 1:
            raise UserError(f"--perms: expected at least 1 permutation, got {self.permutations}")
        if not 0 < self.alpha < 1:
            raise UserError(f"--alpha: expected a level between 0 and 1, got {self.alpha}")
        if self.limit is not None and self.limit < 1:
            raise UserError(f"--limit: expected a positive number, got {self.limit}")
        if self.seeds not in SEED_MODES:
            raise UserError(f"--seeds: expected one of {', '.join(SEED_MODES)}, got "
                            f"{self.seeds!r}")
        if not isinstance(self.correction, Correction):
            if self.correction not in choices(Correction):
                raise UserError(f"--correction: expected one of {', '.join(choices(Correction))}, "
                                f"got {self.correction!r}")
            object.__setattr__(self, "correction", Correction(self.correction))
        bad = [d for d in self.distances if d not in DISTANCES]
        if bad or not self.distances:
            raise UserError(f"--distance: expected one or more of {', '.join(DISTANCES)}, "
                            f"got {', '.join(bad) or 'none'}")
        if self.model_swap and len(self.models) != 2:
            raise UserError(f"--model-swap: expected two model names (reference,candidate), "
                            f"got {', '.join(self.models) or 'none'}")
        if self.model_swap and self.models[0] == self.models[1]:
            raise UserError(f"--model-swap: expected two different models, got "
                            f"{self.models[0]!r} twice")
        if not self.model_swap and len(self.models) != 1:
            raise UserError("--model: expected one model (use --model-swap for two)")
        if not self.operators and not self.model_swap:
            raise UserError("--operators: expected at least one operator (or --model-swap)")
        if self.version not in (1, CONFIG_VERSION):
            raise UserError(f"DBPA config version {self.version} is not one this PAW reads "
                            f"(1 or {CONFIG_VERSION})")

    def config(self) -> dict[str, Any]:
        """The stored form (`audits.config_json`): every setting except the name."""
        config = {
            "version": CONFIG_VERSION, "dataset": self.dataset, "models": list(self.models),
            "model_swap": self.model_swap, "operators": list(self.operators), "k": self.k,
            "temperature": self.temperature, "max_tokens": self.max_tokens, "seed": self.seed,
            "seeds": self.seeds, "template": self.template, "limit": self.limit,
            "item_ids": None if self.item_ids is None else list(self.item_ids),
            "embedders": list(self.embedders), "distances": list(self.distances),
            "permutations": self.permutations, "alpha": self.alpha,
            "correction": self.correction,
            "should_change": None if self.should_change is None else list(self.should_change),
            "should_not_change": None if self.should_not_change is None
            else list(self.should_not_change),
        }
        if self.version == 1:  # stored before the identity control: resumed as it was
            return {**config, "version": 1}
        return {**config, "identity_control": self.identity_control,
                "allow_small_k": self.allow_small_k}

    @property
    def audit_name(self) -> str:
        """`name`, or `dbpa-<dataset>-<8 hex of the config hash>`."""
        if self.name:
            return self.name
        digest = hashlib.sha256(dumps(self.config()).encode()).hexdigest()[:8]
        return f"dbpa-{self.dataset}-{digest}"


def resolve_dbpa_operators(text: str | None) -> tuple[str, ...]:
    """Question operators for DBPA from an `--operators` value (see the audit's
    `resolve_operators`), refusing chain operators.

    Chain (F-block) operators edit each sample's own chain: the perturbed output would be
    built from a baseline output, so the two conditions' outputs are not independent
    draws and the permutation null does not hold.

    Raises:
        UserError: unknown words, or a chain operator.
    """
    from workbench.perturb import resolve_operators
    from workbench.perturb import get_operator

    if text is not None and text.strip().lower() in ("", "none"):
        return ()
    ops = resolve_operators(text or DEFAULT_OPERATORS)
    chain = [op for op in ops if get_operator(op).target == "chain"]
    if chain:
        raise UserError(f"--operators: DBPA tests edits of the question; chain operators "
                        f"edit each sample's own chain, so its outputs are not independent "
                        f"draws (got {', '.join(chain[:4])}{'…' if len(chain) > 4 else ''})")
    return ops
