"""A study's plan in the store: arms, comparison units, targeted and fixed-sentence variants, jobs.

A comparison unit is one item under one targeted edit: its original prompt pᵢ, the targeted
prompt p′ᵢ and the baseline prompts p″ᵢ. For an ordinary target the original prompt is the
item's question; for the recall/precision controls (seed 000 §4.2) it is the control's own
reference — the vignette with "Is this patient male?" and options Yes/No — so the
baselines edit that reference too. Each prompt is asked k times (one job per sampler seed).

Stage 1 (planned here, no generation needed): original, target and fixed-sentence jobs.
Stage 2 (`workbench.counterfactual.paraphrase`): the token-adjusted paraphrase, sized with
each model's own tokenizer, then its jobs. Planning is idempotent: planning the same study
again adds nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import sqlite_utils

from analysis.counterfactual.definitions import StudyRole
from store.errors import UserError
from store.jobs import Arm, Audit, Job, JobSpec, add_arm, add_jobs, create_audit, list_jobs, \
    mark_status
from store.records import Item, ModelRecord
from workbench.engine import StudyContext
from workbench.engine.variants import (
    Variant,
    find_variant,
    get_variant,
    store_variant,
    variant_key,
)
from workbench.counterfactual.spec import FIXED_OPERATOR, StudySpec
from workbench.models import GenerationRequest, Runner, Sampler

RunnerFor = Callable[[ModelRecord], Runner]
"""Gives the (cached) runner of a model; planning only computes keys with it."""

STAGE_OF_ROLE: dict[str, int] = {StudyRole.ORIGINAL: 1, StudyRole.TARGET: 1, StudyRole.FIXED: 1,
                                 StudyRole.PARAPHRASE: 2}


@dataclass(frozen=True)
class Unit:
    """One item under one targeted edit, and the original prompt its baselines edit.

    Attributes:
        item: the item.
        target: the targeted variant (fired or not).
        reference: the original prompt's question text.
        options: the options of every prompt of the unit (None: the item's own).
        gold: the original prompt's gold label (None: the item's, or unknown).
    """

    item: Item
    target: Variant
    reference: str
    options: dict[str, str] | None
    gold: str | None


@dataclass(frozen=True)
class StudyPlan:
    """A stored study with its arms, the models behind them, and its items."""

    audit: Audit
    arms: tuple[Arm, ...]
    models: dict[int, ModelRecord]
    items: tuple[Item, ...]


def unit_of(item: Item, target: Variant) -> Unit:
    """The comparison unit of `item` under the targeted variant `target`."""
    reference = target.details.get("control_baseline_text")
    if reference is not None:
        return Unit(item, target, str(reference), target.options,
                    target.details.get("control_baseline_gold"))
    if "reference_text" in target.details:  # a subgroup pair: the original's vignette
        return Unit(item, target, str(target.details["reference_text"]), None, None)
    return Unit(item, target, item.question, None, None)


def sampler_of(config: dict, seed: int) -> Sampler:
    """The sampler of one sample: the study's temperature and budget, this sample's seed."""
    return Sampler(temperature=float(config["temperature"]), seed=int(seed),
                   max_tokens=int(config["max_tokens"]))


def request_for(role: str, item: Item, variant: Variant, arm: Arm, seed: int,
                config: dict) -> GenerationRequest:
    """The generation a study job asks for (the key is computed from this).

    Args:
        role: 'original', 'target', 'fixed' or 'paraphrase'.
        item: the job's item.
        variant: the unit's targeted variant for 'original'; else the job's own variant.
        arm: the job's arm (model and template).
        seed: the sample's sampler seed.
        config: the study's stored config.
    """
    sampler = sampler_of(config, seed)
    mode = str(config["mode"])
    if role == StudyRole.ORIGINAL:
        unit = unit_of(item, variant)
        own = unit.options is None and unit.reference == item.question
        return GenerationRequest(item, mode, arm.template, sampler,
                                 question=None if own else unit.reference,
                                 options=unit.options, gold=unit.gold)
    if role not in STAGE_OF_ROLE:
        raise ValueError(f"unknown study role {role!r}")
    return GenerationRequest(item, mode, arm.template, sampler, question=variant.text,
                             options=variant.options,
                             gold=variant.gold if variant.options is not None else None,
                             variant_id=variant.id)


def cached_variant(ctx: StudyContext, variant_id: int | None) -> Variant:
    """A variant by id, loaded once per run."""
    cache: dict[int, Variant] = ctx.cache.setdefault("variants", {})
    if variant_id not in cache:
        variant = get_variant(ctx.db, variant_id or 0)
        if variant is None:
            raise ValueError(f"job refers to variant {variant_id}, which is not stored")
        cache[variant_id or 0] = variant
    return cache[variant_id or 0]


def study_request(ctx: StudyContext, job: Job) -> GenerationRequest:
    """The generation a stored study job asks for (`request_for`)."""
    return request_for(job.role, ctx.items[job.item_id], cached_variant(ctx, job.variant_id),
                       ctx.arm(job.arm_id), int(job.seed or 0), ctx.config)


# ---------------------------------------------------------------- variants


def target_variant(db: sqlite_utils.Database, operator_id: str, item: Item, seed: int) -> Variant:
    """The stored targeted edit of `operator_id` on the item's stem (shared by every study).

    The recall/precision controls are keyed by their answer format too (`CONTROL_FORMAT`):
    their options changed from A. Yes / B. No to a plain Yes/No, and a stored lettered
    control must not stand in for the new one.
    """
    from workbench.perturb import get_operator
    from workbench.perturb.baselines import CONTROL_FORMAT

    op = get_operator(operator_id)
    extra = {"format": CONTROL_FORMAT} if op.family == "control" else None
    existing = find_variant(db, variant_key(item.id or 0, op.id, seed, None, extra))
    if existing is not None:
        return existing
    result = op.apply(item.question, seed=seed, item_key=item.source_id, options=item.options,
                      gold=item.gold)
    return store_variant(db, op, result, item_id=item.id or 0, seed=seed, key_extra=extra)


def _target(db: sqlite_utils.Database, spec: StudySpec, target_id: str, item: Item,
            seed: int) -> Variant:
    """A catalogue target's variant, an imported text's (`file:<name>`) or a dose-response
    unit's anchor (`dose:<level>`)."""
    from workbench.counterfactual import dose, subgroups
    from workbench.counterfactual.imported import PREFIX, imported_variant

    if target_id.startswith(dose.PREFIX):
        return dose.dose_variant(db, target_id, item, seed)
    if target_id.startswith(subgroups.PREFIX):
        return subgroups.subgroup_variant(db, target_id, item, spec.subgroups,
                                          spec.subgroup_reference, seed)
    if not target_id.startswith(PREFIX):
        return target_variant(db, target_id, item, seed)
    if spec.targets_file is None:
        raise UserError(f"target {target_id!r} is an imported text: pass the same "
                        "--targets-file to plan this study")
    return imported_variant(db, target_id, item, spec.targets_file, seed)


def fixed_variant(db: sqlite_utils.Database, unit: Unit, sentence: str, seed: int) -> Variant:
    """The fixed sentence prepended to the unit's original prompt (one row per unit).

    Keyed by the unit's targeted variant and the sentence, so a control's reference and an
    item's stem each get their own row; `details.reference_variant_id` names the unit.
    """
    from workbench.perturb import get_operator

    op = get_operator(FIXED_OPERATOR)
    extra = ["reference", unit.target.key, sentence]
    key = variant_key(unit.item.id or 0, op.id, seed, None, extra)
    existing = find_variant(db, key)
    if existing is not None:
        return existing
    result = op.apply(unit.reference, seed=seed, item_key=unit.item.source_id,
                      params={"sentence": sentence})
    if unit.options is not None:
        result = replace(result, options=dict(unit.options), gold=unit.gold)
    return store_variant(db, op, result, item_id=unit.item.id or 0, seed=seed,
                         extra_details={"reference_variant_id": unit.target.id},
                         key_extra=extra)


# ---------------------------------------------------------------- stage 1


def unit_jobs(arm: Arm, unit: Unit, role: str, variant: Variant, runner: Runner,
              config: dict) -> list[JobSpec]:
    """The k jobs (one per seed) asking `role`'s prompt of a unit."""
    stage = STAGE_OF_ROLE[role]
    slot = unit.target if role == StudyRole.ORIGINAL else variant
    specs = []
    for index, seed in enumerate(config["seeds"]):
        request = request_for(role, unit.item, slot, arm, seed, config)
        specs.append(JobSpec(arm_id=arm.id, item_id=unit.item.id or 0, role=role, stage=stage,
                             variant_id=slot.id, sample_index=index, seed=int(seed),
                             generation_key=runner.key(request)))
    return specs


def create_study(db: sqlite_utils.Database, spec: StudySpec, runner_for: RunnerFor) -> StudyPlan:
    """Store the study, its arms, its targeted and fixed-sentence variants and stage-1 jobs.

    Idempotent: an existing study with the same name and settings is found, and jobs already
    planned are kept. A targeted edit that does not fire on an item is recorded as one
    'not_fired' target job and the item is left out of that target's comparisons.

    Raises:
        NotFound: unknown dataset or model.
        UserError: a study of that name exists with other settings; a bad item id.
    """
    from store.datasets import dataset_id
    from workbench.engine.plans import arm_label, select_items
    from workbench.models import resolve_model

    ds_id = dataset_id(db, spec.dataset)
    models = [resolve_model(db, name) for name in spec.models]
    items = select_items(db, spec)
    if spec.subgroups:
        from workbench.counterfactual.subgroups import check_templates

        check_templates(items, spec.subgroups)
    if spec.targets_file is not None:
        from workbench.counterfactual.imported import check_items

        known = {r[0] for r in db.execute("SELECT source_id FROM items WHERE dataset_id = ?",
                                          [ds_id])}
        check_items(spec.targets_file, known, spec.dataset)
    audit = create_audit(db, spec.study_name, "study", ds_id, spec.config())
    config = audit.config
    arms = [add_arm(db, audit.id, arm_label(model.name, config["template"]), model.id,
                    config["template"]) for model in models]
    by_id = {model.id: model for model in models}
    seed = int(config["seed"])
    units = [unit_of(item, _target(db, spec, op_id, item, seed))
             for item in items for op_id in config["targets"]]
    fixed: dict[int, Variant] = {}
    if "fixed_sentence" in config["baselines"]:
        fixed = {u.target.id: fixed_variant(db, u, config["fixed_sentence"], seed)
                 for u in units if u.target.fired}
    specs: list[JobSpec] = []
    for arm in arms:
        runner = runner_for(by_id[arm.model_id])
        for unit in units:
            if not unit.target.fired:
                specs.append(JobSpec(arm.id, unit.item.id or 0, StudyRole.TARGET, 1, unit.target.id,
                                     0, int(config["seeds"][0]), None))
                continue
            specs += unit_jobs(arm, unit, StudyRole.ORIGINAL, unit.target, runner, config)
            specs += unit_jobs(arm, unit, StudyRole.TARGET, unit.target, runner, config)
            if unit.target.id in fixed:
                specs += unit_jobs(arm, unit, StudyRole.FIXED, fixed[unit.target.id], runner,
                                   config)
    add_jobs(db, audit.id, specs)
    not_fired = {u.target.id for u in units if not u.target.fired}
    stale = [job.id for job in list_jobs(db, audit.id, status="pending", role=StudyRole.TARGET)
             if job.variant_id in not_fired]
    if stale:
        mark_status(db, stale, "not_fired")
    return StudyPlan(audit, tuple(arms), by_id, tuple(items))


def fired_units(ctx: StudyContext, arms: Sequence[Arm]) -> dict[int, list[Unit]]:
    """Per arm, the units whose targeted edit fired (read back from the stored target jobs)."""
    out: dict[int, list[Unit]] = {}
    for arm in arms:
        seen: set[int] = set()
        units = []
        for job in list_jobs(ctx.db, ctx.audit.id, role=StudyRole.TARGET, arm_id=arm.id):
            if job.status == "not_fired" or job.variant_id in seen:
                continue
            seen.add(job.variant_id or 0)
            units.append(unit_of(ctx.items[job.item_id], cached_variant(ctx, job.variant_id)))
        out[arm.id] = units
    return out
