"""Plan a DBPA analysis: arms (one per model), variants, and k seeded sample jobs per condition.

Per item and arm: k `baseline` jobs on the unperturbed question, for every operator
that fired on the item k `perturbed` jobs on the edited question, and (the identity
control, on by default) k `identity` jobs: the unperturbed question again, with its own
independent seeds whatever `--seeds` says. Every sample is a
free-text chain-of-thought answer at the analysis's temperature and token budget; sample
i's seed is `spec.sample_seed(mode, seed, model, condition, i)`, a function of i alone, so
raising k adds only the new samples' jobs and a re-run finds every generation stored.
A model swap adds the second model as another arm; its baseline samples are the perturbed
condition of the swap test. Before anything but the variants is stored, the plan's
families are checked against the smallest p their k and B allow (`guard`). Everything is
idempotent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sqlite_utils

from analysis.dbpa.definitions import DbpaRole
from store.datasets import dataset_id
from store.jobs import (
    Arm,
    Audit,
    Job,
    JobSpec,
    add_arm,
    add_jobs,
    create_audit,
    list_jobs,
    mark_status,
)
from store.records import Item, ModelRecord
from workbench.engine import StudyContext
from workbench.engine.plans import arm_label
from workbench.engine.variants import Variant
from workbench.dbpa.spec import IDENTITY, DbpaSpec, sample_seed
from workbench.models import GenerationRequest, Runner, Sampler


@dataclass(frozen=True)
class DbpaPlan:
    """A stored DBPA analysis with its arms, models, items and variants per item."""

    audit: Audit
    arms: tuple[Arm, ...]
    models: dict[int, ModelRecord]
    items: tuple[Item, ...]
    variants: dict[int, tuple[Variant, ...]]


def sampler(config: dict, seed: int) -> Sampler:
    """Pure temperature sampling (no top-k/top-p/min-p filter) with the stated budget."""
    return Sampler(temperature=float(config["temperature"]), seed=seed,
                   max_tokens=int(config["max_tokens"]))


def sample_request(item: Item, arm: Arm, variant: Variant | None, config: dict,
                   seed: int) -> GenerationRequest:
    """The generation of one sample: the CoT template on the item or its variant."""
    if variant is None:
        return GenerationRequest(item, "cot", arm.template, sampler(config, seed))
    return GenerationRequest(
        item, "cot", arm.template, sampler(config, seed),
        question=variant.text if variant.target == "question" else None,
        options=variant.options, gold=variant.gold, variant_id=variant.id)


def condition_of(variant: Variant | None) -> str:
    """The condition name a sample's seed is drawn for: 'baseline' or the operator id."""
    return "baseline" if variant is None else variant.operator_id


def create_dbpa_plan(db: sqlite_utils.Database, spec: DbpaSpec,
                     runner_for: Callable[[ModelRecord], Runner]) -> DbpaPlan:
    """Store the analysis, its arms, variants and sample jobs (idempotent).

    Args:
        db: the store.
        spec: the analysis's settings.
        runner_for: the runner of each model (used only to compute generation keys).

    Returns:
        The stored plan.

    Raises:
        NotFound: unknown dataset or model.
        UserError: bad item ids, an empty dataset, a name taken by other settings, or a k
            (or B) too small for a family to reject (`guard.check_resolution`).
    """
    from workbench.engine.plans import select_items
    from workbench.engine.variants import question_variant
    from workbench.dbpa.guard import check_resolution, plan_families
    from workbench.models import resolve_model
    from workbench.perturb import get_operator

    ds_id = dataset_id(db, spec.dataset)
    models = [resolve_model(db, name) for name in spec.models]
    items = select_items(db, spec)
    config = spec.config()
    ops = [get_operator(op) for op in config["operators"]]
    k, mode, base = int(config["k"]), config["seeds"], int(config["seed"])
    variants: dict[int, tuple[Variant, ...]] = {
        item.id or 0: tuple(question_variant(db, op, item, base) for op in ops)
        for item in items}
    fired = sum(v.fired for vs in variants.values() for v in vs)
    if config["version"] >= 2:  # version 1 was planned before the guard: resumed as is
        check_resolution(config, plan_families(config, fired, len(items)))
    audit = create_audit(db, spec.audit_name, "dbpa", ds_id, config)
    arms = [add_arm(db, audit.id, arm_label(model.name, spec.template), model.id,
                    spec.template) for model in models]
    by_id = {model.id: model for model in models}
    specs: list[JobSpec] = []
    not_fired: set[int] = set()
    for item in items:
        item_variants = variants[item.id or 0]
        not_fired.update(v.id for v in item_variants if not v.fired)
        for arm in arms:
            model = by_id[arm.model_id]
            runner = runner_for(model)
            conditions: list[Variant | None] = [None, *item_variants]
            for variant in conditions:
                role = DbpaRole.BASELINE if variant is None else DbpaRole.PERTURBED
                for index in range(k):
                    seed = sample_seed(mode, base, model.sha256, condition_of(variant), index)
                    key = None
                    if variant is None or variant.fired:
                        key = runner.key(sample_request(item, arm, variant, config, seed))
                    specs.append(JobSpec(
                        arm_id=arm.id, item_id=item.id or 0, role=role, stage=1,
                        variant_id=None if variant is None else variant.id,
                        sample_index=index, seed=seed, generation_key=key))
            if config.get("identity_control"):
                for index in range(k):
                    seed = sample_seed("independent", base, model.sha256, IDENTITY, index)
                    specs.append(JobSpec(
                        arm_id=arm.id, item_id=item.id or 0, role=DbpaRole.IDENTITY, stage=1,
                        variant_id=None, sample_index=index, seed=seed,
                        generation_key=runner.key(sample_request(item, arm, None, config,
                                                                 seed))))
    add_jobs(db, audit.id, specs)
    if not_fired:
        ids = [job.id for job in list_jobs(db, audit.id, status="pending")
               if job.variant_id in not_fired]
        if ids:
            mark_status(db, ids, "not_fired")
    return DbpaPlan(audit, tuple(arms), by_id, tuple(items), variants)


def request_of_job(ctx: StudyContext, job: Job) -> GenerationRequest:
    """The generation a DBPA job asks for (engine `Stage.request`)."""
    variants = ctx.cache.setdefault("variants", {})
    variant = None
    if job.variant_id is not None:
        if job.variant_id not in variants:
            from workbench.engine.variants import get_variant

            variants[job.variant_id] = get_variant(ctx.db, job.variant_id)
        variant = variants[job.variant_id]
    assert job.seed is not None, "every DBPA job is planned with its sample's seed"
    return sample_request(ctx.items[job.item_id], ctx.arm(job.arm_id), variant, ctx.config,
                          int(job.seed))

