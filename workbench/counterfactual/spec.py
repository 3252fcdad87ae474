"""What a seed-000 study is: models, targeted edits, baselines, k seeded samples, as stored config.

`StudySpec` holds everything that defines the plan. It is stored as the study's
`config_json` and hashed into the default study name, so running the same command again
finds the same study (and generates nothing new), while changing any setting makes a new one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from analysis.common.options import choices
from analysis.counterfactual.definitions import (
    Alternative,
    Correction,
    KlFloor,
    Sides,
    StudyRole,
)
from store.db import dumps
from store.errors import UserError

if TYPE_CHECKING:
    from workbench.counterfactual.imported import TargetsFile
    from workbench.counterfactual.subgroups import Subgroup

CONFIG_VERSION = 2
"""Bumped if the meaning of the stored config changes (2: yes/no prompts and controls, the
analysis settings correction/sides/kl_floor, the token-fraction denominator)."""

"""`--correction`: the family-wise correction that marks significance (§4.1: Bonferroni)."""

TOKEN_DENOMINATORS: tuple[str, ...] = ("longer", "original")
"""`--token-denominator` of the token-change fraction that sizes the paraphrase: token edit
distance / the longer token count (PAW's, a fraction in [0, 1] also for insertions) or /
the original prompt's token count (the authors' released code). §3.2 says only "the
fraction of tokens changed"."""

ROLES: tuple[str, ...] = tuple(StudyRole)
"""Job roles of a study: the original prompt pᵢ, the targeted edit p′ᵢ and the two
baselines p″ᵢ (fixed sentence, token-adjusted paraphrase). Every job of a comparison unit
names the unit's targeted variant: 'original' and 'target' jobs in `jobs.variant_id`, the
baselines in their variant's `details.reference_variant_id` (docs/counterfactual.md)."""

BASELINES: dict[str, str] = {"paraphrase_adjusted": StudyRole.PARAPHRASE,
                             "fixed_sentence": StudyRole.FIXED}
"""`--baselines` names → job role (§3.2: the token-adjusted paraphrase and the fixed sentence)."""

PARAPHRASE_OPERATOR = "paraphrase_token_adjusted"
"""The catalogue entry whose tags the paraphrase variants carry (the LLM is its paraphraser)."""

FIXED_OPERATOR = "fixed_sentence"
"""The catalogue's configurable fixed-sentence baseline."""

DEFAULT_SEEDS: tuple[int, ...] = (0, 1, 42)
"""§4.1: "Each model generates three responses per prompt (seeds 0, 1, 42; temperature 0.7)"."""

DEFAULT_TEMPERATURE = 0.7
"""§4.1's sampling temperature."""

DEFAULT_FIXED_SENTENCE = "family_member"
"""§4.1's fixed sentence: "A family member came with me to the appointment."."""

DEFAULT_TOLERANCE = 0.03
"""Paraphrase: accepted when |achieved − target token-change fraction| ≤ this (absolute)."""

DEFAULT_MAX_ATTEMPTS = 4
"""Paraphrase: LLM attempts per (model, item, targeted edit) before the deterministic fallback."""

MAX_TOKENS = {"direct": 16, "cot": 384}
"""Default generation budget per mode (direct: the answer is read at the end of the prompt)."""

TEMPLATE = {"direct": "direct_yesno@1", "cot": "neutral_cot@1"}
"""Default prompt template per mode. Direct: `direct_yesno@1` — yes/no items and the
controls asked for a plain Yes/No as seed 000's authors ask them (on the demo triage items
`direct@1`'s lettered wording left half the control samples unparsed; docs/counterfactual.md)."""


def default_seeds(k: int) -> tuple[int, ...]:
    """The first k of 0, 1, 42, 43, 44, … (the paper's three, then the next integers)."""
    seeds = list(DEFAULT_SEEDS[:k])
    while len(seeds) < k:
        seeds.append(DEFAULT_SEEDS[-1] + len(seeds) - len(DEFAULT_SEEDS) + 1)
    return tuple(seeds)


def resolve_targets(text: str | None) -> tuple[str, ...]:
    """Targeted edits from a comma-separated `--targets` value (operator ids).

    Any catalogue operator that edits the question stem counts, also user-defined ones and
    the recall/precision controls; the seed-000 baselines are not targets.

    Raises:
        UserError: an unknown operator or one that does not edit the question.
    """
    from workbench.perturb import get_operator

    ids: list[str] = []
    for word in (w.strip() for w in (text or "").split(",")):
        if not word:
            continue
        op = get_operator(word)
        if op.target != "question" or op.family == "baseline":
            raise UserError(f"--targets: expected operators that edit the question stem "
                            f"(e.g. gender_swap, M2_sex, control_recall), got {word!r} "
                            f"(target {op.target}, family {op.family})")
        if word not in ids:
            ids.append(word)
    if not ids:
        raise UserError("--targets: expected at least one operator id, got none")
    return tuple(ids)


def resolve_baselines(text: str | None) -> tuple[str, ...]:
    """Baselines from a comma-separated `--baselines` value, in the order given.

    Raises:
        UserError: a name that is not a seed-000 baseline.
    """
    names: list[str] = []
    for word in (w.strip() for w in (text or "").split(",")):
        if not word:
            continue
        if word not in BASELINES:
            raise UserError(f"--baselines: expected {', '.join(BASELINES)}, got {word!r}")
        if word not in names:
            names.append(word)
    if not names:
        raise UserError("--baselines: expected at least one baseline, got none")
    return tuple(names)


@dataclass(frozen=True)
class StudySpec:
    """The settings that define a study's plan.

    Attributes:
        dataset: dataset name.
        models: registered model names (one arm each).
        targets: targeted operator ids (`resolve_targets`).
        baselines: 'paraphrase_adjusted' and/or 'fixed_sentence'.
        seeds: one sampler seed per sample; k = len(seeds).
        temperature: sampling temperature of every answer (0 = greedy: k identical samples).
        mode: 'direct' (answer read at the end of the prompt, the paper's next-token
            probabilities) or 'cot'.
        template: prompt template id (default per mode).
        max_tokens: generation budget (default per mode).
        fixed_sentence: a `FIXED_SENTENCES` name or any sentence.
        paraphraser: model name that paraphrases ('default' = embedded), or 'table' for the
            deterministic paraphraser only.
        tolerance: accepted |achieved − target| token-change fraction.
        max_attempts: LLM attempts before the deterministic fallback.
        seed: seed of every operator draw.
        limit: first N items of the dataset.
        item_ids: explicit item source ids instead of `limit`.
        alternative: the regression's H1: 'less' (β_pert < 0) or 'greater'.
        name: the study's name (default: derived from the other settings).
        correction: 'bonferroni' (the paper's), 'holm' or 'none' (`Correction`).
        sides: 'one' (the paper's tests) or 'two' (`--two-sided`, the authors' code).
        kl_floor: 'q' or 'both' (`analysis.counterfactual.definitions.KL_FLOORS`).
        token_denominator: 'longer' or 'original' (`TOKEN_DENOMINATORS`).
        targets_file: ready-made perturbed texts (`--targets-file`), each perturbation a
            target `file:<name>` besides `targets` (which may then be empty).
        levels: the dose-response design (`--dose-levels`, §4.1): token-change levels,
            one paraphrase per item and level, no targets, only the paraphrase baseline.
        subgroups: the Q-Pain subgroup design (`--subgroups`, App. H): template items
            filled per subgroup, every pair of subgroups a target `subgroup:<a>/<b>`.
        subgroup_reference: (attribute, value) of App. I's reference group (race, White):
            pairs that differ only in it carry a signed direction for the regressions.
        paraphrase_span: 'sentence' (App. B: one sentence rewritten) or 'fit' (as many
            sentences as the target fraction needs, never the final question); default
            'fit' with `levels`, else 'sentence'. Stored in the config only when 'fit', so
            the studies of before it keep their names and keys.
    """

    dataset: str
    models: tuple[str, ...] = ("default",)
    targets: tuple[str, ...] = ("gender_swap",)
    baselines: tuple[str, ...] = tuple(BASELINES)
    seeds: tuple[int, ...] = DEFAULT_SEEDS
    temperature: float = DEFAULT_TEMPERATURE
    mode: str = "direct"
    template: str | None = None
    max_tokens: int | None = None
    fixed_sentence: str = DEFAULT_FIXED_SENTENCE
    paraphraser: str = "default"
    tolerance: float = DEFAULT_TOLERANCE
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    seed: int = 0
    limit: int | None = None
    item_ids: tuple[str, ...] | None = None
    alternative: Alternative = Alternative.LESS
    name: str | None = None
    correction: Correction = Correction.BONFERRONI
    sides: Sides = Sides.ONE
    kl_floor: KlFloor = KlFloor.Q
    token_denominator: str = "longer"
    targets_file: TargetsFile | None = None
    levels: tuple[float, ...] = ()
    subgroups: tuple[Subgroup, ...] = ()
    subgroup_reference: tuple[str, str] | None = None
    paraphrase_span: str | None = None

    def __post_init__(self) -> None:
        # The typed options arrive as members or as their strings (the CLI's choices, a
        # stored config): a known string becomes its member, anything else is refused below.
        for field, kind in (("alternative", Alternative), ("correction", Correction),
                            ("sides", Sides), ("kl_floor", KlFloor)):
            value = getattr(self, field)
            if not isinstance(value, kind) and value in choices(kind):
                object.__setattr__(self, field, kind(value))
        checks = [
            (bool(self.models), "--models: expected at least one model name, got none"),
            (bool(self.all_targets), ("--targets: expected at least one operator id (or "
                                     "--targets-file), got none")),
            (bool(self.seeds), "--seeds: expected at least one seed, got none"),
            (len(set(self.seeds)) == len(self.seeds),
             f"--seeds: expected distinct seeds, got {','.join(map(str, self.seeds))}"),
            (self.temperature >= 0, f"--temperature: expected ≥ 0, got {self.temperature}"),
            (self.mode in MAX_TOKENS, f"--mode: expected direct or cot, got {self.mode!r}"),
            (0 < self.tolerance < 1, (f"--tolerance: expected a fraction in (0, 1), got "
                                     f"{self.tolerance}")),
            (1 <= self.max_attempts <= 20, (f"--attempts: expected 1..20, got "
                                           f"{self.max_attempts}")),
            (self.limit is None or self.limit >= 1,
             f"--limit: expected a positive number, got {self.limit}"),
            (self.max_tokens is None or self.max_tokens >= 1,
             f"--max-tokens: expected a positive number, got {self.max_tokens}"),
            (isinstance(self.alternative, Alternative),
             f"--alternative: expected less or greater, got {self.alternative!r}"),
            (bool(self.fixed_sentence.strip()), "--fixed-sentence: expected a name or text"),
            (isinstance(self.correction, Correction),
             (f"--correction: expected one of {', '.join(choices(Correction))}, got "
              f"{self.correction!r}")),
            (isinstance(self.sides, Sides),
             f"sides: expected one or two, got {self.sides!r}"),
            (isinstance(self.kl_floor, KlFloor),
             f"--kl-floor: expected q or both, got {self.kl_floor!r}"),
            (self.token_denominator in TOKEN_DENOMINATORS,
             (f"--token-denominator: expected one of {', '.join(TOKEN_DENOMINATORS)}, got "
             f"{self.token_denominator!r}")),
            (self.paraphrase_span in (None, "sentence", "fit"),
             (f"--paraphrase-span: expected sentence or fit, got {self.paraphrase_span!r}")),
        ]
        if self.levels:
            checks += [
                (not self.targets and self.targets_file is None,
                 ("--dose-levels: a dose-response study has no targets; expected no "
                 "--targets or --targets-file with it")),
                (tuple(self.baselines) == ("paraphrase_adjusted",),
                 ("--dose-levels: expected --baselines paraphrase_adjusted (the design "
                 "varies the paraphrase only)")),
                (all(0 < level <= 1 for level in self.levels),
                 "--dose-levels: expected fractions in (0, 1]"),
            ]
        if self.subgroups:
            checks += [
                (not self.targets and self.targets_file is None and not self.levels,
                 ("--subgroups: a subgroup study's targets are its pairs; expected no "
                 "--targets, --targets-file or --dose-levels with it")),
                (len(self.subgroups) >= 2, "--subgroups: expected at least 2 subgroups"),
            ]
        for ok, message in checks:
            if not ok:
                raise UserError(message)
        resolve_baselines(",".join(self.baselines))
        if self.template is not None:
            from workbench.models.templates import get_template

            template = get_template(self.template)
            if template.mode != self.mode:
                raise UserError(f"--template: {template.id} is a {template.mode} template, "
                                f"not usable with --mode {self.mode}")

    @property
    def all_targets(self) -> tuple[str, ...]:
        """The catalogue targets, then the imported ones (`file:<name>`)."""
        from workbench.counterfactual.dose import level_id

        imported = self.targets_file.target_ids if self.targets_file is not None else ()
        from workbench.counterfactual.subgroups import pair_ids

        doses = tuple(level_id(level) for level in self.levels)
        pairs = pair_ids(self.subgroups) if self.subgroups else ()
        return (tuple(self.targets) + tuple(t for t in imported if t not in self.targets)
                + doses + pairs)

    @property
    def span(self) -> str:
        """The paraphrase span: `paraphrase_span`, or 'fit' for a dose study, else 'sentence'."""
        return self.paraphrase_span or ("fit" if self.levels else "sentence")

    @property
    def k(self) -> int:
        """Samples per prompt."""
        return len(self.seeds)

    def config(self) -> dict[str, Any]:
        """The stored form (`audits.config_json`): every setting except the name."""
        from workbench.models.templates import get_template

        template = get_template(self.template or TEMPLATE[self.mode]).id
        span = {} if self.span == "sentence" else {"paraphrase_span": self.span}
        return {
            "version": CONFIG_VERSION, "dataset": self.dataset, "models": list(self.models),
            "targets": list(self.all_targets), "baselines": list(self.baselines),
            "seeds": list(self.seeds), "temperature": self.temperature, "mode": self.mode,
            "template": template, "max_tokens": self.max_tokens or MAX_TOKENS[self.mode],
            "fixed_sentence": self.fixed_sentence, "paraphraser": self.paraphraser,
            "tolerance": self.tolerance, "max_attempts": self.max_attempts, "seed": self.seed,
            "limit": self.limit,
            "item_ids": None if self.item_ids is None else list(self.item_ids),
            "alternative": self.alternative, "correction": self.correction,
            "sides": self.sides, "kl_floor": self.kl_floor,
            "token_denominator": self.token_denominator,
            "targets_file": None if self.targets_file is None else {
                "sha256": self.targets_file.sha256, "names": list(self.targets_file.names)},
            "levels": list(self.levels),
            "subgroups": [[s.key, s.fill] for s in self.subgroups],
            "subgroup_reference": None if self.subgroup_reference is None
            else list(self.subgroup_reference),
            **span,
        }

    @property
    def study_name(self) -> str:
        """`name`, or `<dataset>-study-<8 hex of the config hash>` (equal settings, one study)."""
        if self.name:
            return self.name
        digest = hashlib.sha256(dumps(self.config()).encode()).hexdigest()[:8]
        return f"{self.dataset}-study-{digest}"
