"""Build and store an audit's plan: arms, variants and jobs (stage 1), then F-block (stage 2).

Stage 1 needs no generation: for every item, each selected M operator edits the stem and
the option shuffle permutes the options, and every arm gets a baseline, a direct, an
m_block and a shuffle job. Stage 2 needs the arm's own baseline chain: its final answer is
stripped, each F operator edits it, and an f_block job asks the model to continue.
A variant that did not fire gets a job with status 'not_fired' and no generation key.
Everything is idempotent: planning the same audit again adds nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sqlite_utils

from store.datasets import dataset_id, get_item
from store.generations import Generation, get_generation
from store.jobs import Arm, JobSpec, add_arm, add_jobs, create_audit, list_jobs, mark_status
from analysis.audit.definitions import AuditRole
from store.records import Item, ModelRecord
from workbench.audit.spec import AuditSpec
from workbench.engine.plans import Plan, arm_label, select_items
from workbench.engine.variants import (
    Variant,
    find_variant,
    question_variant,
    store_variant,
    variant_key,
)
from workbench.models import DEFAULT_TEMPLATE, GenerationRequest, Runner, Sampler
from workbench.perturb import SHUFFLE_OPERATOR, get_operator, strip_final_answer
from workbench.perturb.base import Operator

RunnerFor = Callable[[ModelRecord], Runner]
"""Gives the (cached) runner of a model; the planner only computes keys with it, except
that stage 2 reads token pieces from the model for exact F1 prefixes."""


# ---------------------------------------------------------------- requests


def cot_sampler(config: dict) -> Sampler:
    """Greedy decoding with the audit's CoT budget (baseline, M-block, shuffle, F-block)."""
    return Sampler(max_tokens=int(config["max_tokens"]))


def direct_sampler(config: dict) -> Sampler:
    """Greedy decoding with the short budget of a direct answer."""
    return Sampler(max_tokens=int(config["direct_max_tokens"]))


def request_for(role: str, item: Item, arm: Arm, variant: Variant | None,
                config: dict) -> GenerationRequest:
    """The generation a job of `role` asks for (the key is computed from this).

    Args:
        role: 'baseline', 'direct', 'm_block', 'shuffle' or 'f_block'.
        item: the job's item.
        arm: the job's arm (its template is used for every CoT-like role).
        variant: the job's variant (None for baseline and direct).
        config: the audit's stored config.
    """
    if role == AuditRole.BASELINE:
        return GenerationRequest(item, "cot", arm.template, cot_sampler(config))
    if role == AuditRole.DIRECT:
        return GenerationRequest(item, "direct", DEFAULT_TEMPLATE["direct"],
                                 direct_sampler(config))
    assert variant is not None, f"role {role} needs a variant"
    if role == AuditRole.M_BLOCK:
        return GenerationRequest(item, "cot", arm.template, cot_sampler(config),
                                 question=variant.text, variant_id=variant.id)
    if role == AuditRole.SHUFFLE:
        return GenerationRequest(item, "cot", arm.template, cot_sampler(config),
                                 options=variant.options, gold=variant.gold,
                                 variant_id=variant.id)
    if role == AuditRole.F_BLOCK:
        ids = variant.details.get("prefix_token_ids")
        return GenerationRequest(item, "continue", arm.template, cot_sampler(config),
                                 prefix=variant.text,
                                 prefix_token_ids=None if ids is None else tuple(ids),
                                 variant_id=variant.id)
    raise ValueError(f"unknown job role {role!r}")


# ---------------------------------------------------------------- stage 1


def create_plan(db: sqlite_utils.Database, spec: AuditSpec, runner_for: RunnerFor) -> Plan:
    """Store the audit, its arms, its stage-1 variants and jobs (idempotent).

    Args:
        db: the store.
        spec: the audit's settings.
        runner_for: the runner of each model (used here to compute generation keys).

    Returns:
        The stored plan.

    Raises:
        NotFound: unknown dataset or model.
        UserError: an audit of that name exists with other settings.
    """
    from workbench.models import resolve_model

    ds_id = dataset_id(db, spec.dataset)
    models = [resolve_model(db, name) for name in spec.models]
    items = select_items(db, spec)
    audit = create_audit(db, spec.audit_name, "audit", ds_id, spec.config())
    arms = [add_arm(db, audit.id, arm_label(model.name, template), model.id, template)
            for model in models for template in spec.templates]
    by_id = {model.id: model for model in models}
    config = audit.config
    # Chain operators (the F-block, user-defined chain rules) wait for the baseline chain.
    ops = [op for op in map(get_operator, config["operators"]) if op.target != "chain"]
    specs: list[JobSpec] = []
    not_fired: set[int] = set()
    for item in items:
        variants = [question_variant(db, op, item, int(config["seed"])) for op in ops]
        not_fired.update(v.id for v in variants if not v.fired)
        for arm in arms:
            runner = runner_for(by_id[arm.model_id])
            roles: list[tuple[str, Variant | None]] = [(AuditRole.BASELINE, None)]
            if config["direct"]:
                roles.append((AuditRole.DIRECT, None))
            roles += [(AuditRole.SHUFFLE if v.operator_id == SHUFFLE_OPERATOR
                       else AuditRole.M_BLOCK, v) for v in variants]
            for role, variant in roles:
                key = None
                if variant is None or variant.fired:
                    key = runner.key(request_for(role, item, arm, variant, config))
                specs.append(JobSpec(arm_id=arm.id, item_id=item.id or 0, role=role, stage=1,
                                     variant_id=None if variant is None else variant.id,
                                     generation_key=key))
    add_jobs(db, audit.id, specs)
    _mark_not_fired(db, audit.id, not_fired)
    return Plan(audit, tuple(arms), by_id, tuple(items))


def _mark_not_fired(db: sqlite_utils.Database, audit_id: int, variant_ids: set[int]) -> None:
    if not variant_ids:
        return
    job_ids = [job.id for job in list_jobs(db, audit_id, status="pending")
               if job.variant_id in variant_ids]
    if job_ids:
        mark_status(db, job_ids, "not_fired")


# ---------------------------------------------------------------- stage 2


def exact_prefix_ids(piece: Callable[[int], bytes], output: str,
                     output_ids: Sequence[int], prefix: str) -> tuple[int, ...] | None:
    """The baseline's own output token ids that spell exactly `prefix`, if a token boundary
    falls at its end; None otherwise (the runner then tokenizes the prefix text).

    Re-tokenizing a truncated chain can split it differently from how the model wrote it;
    continuing from the model's own tokens keeps the F1 context identical to the baseline's.

    Args:
        piece: the bytes of one token id (the model's vocabulary).
        output: the baseline output text.
        output_ids: its token ids.
        prefix: the kept chain (a prefix of `output`).
    """
    if not output.startswith(prefix):
        return None
    target = prefix.encode("utf-8")
    pieces = [piece(t) for t in output_ids]
    if b"".join(pieces).decode("utf-8", errors="replace") != output:
        return None
    length = 0
    for index, chunk in enumerate(pieces):
        if length == len(target):
            return tuple(output_ids[:index])
        length += len(chunk)
        if length > len(target):
            return None
    return tuple(output_ids) if length == len(target) else None


def chain_variant(db: sqlite_utils.Database, op: Operator, item: Item, baseline: Generation,
                  seed: int, runner: Runner) -> Variant:
    """The stored F-block variant of `op` on the arm's baseline chain (final answer stripped)."""
    key = variant_key(item.id or 0, op.id, seed, baseline.id)
    existing = find_variant(db, key)
    if existing is not None:
        return existing
    output = baseline.output or ""
    chain = strip_final_answer(output)
    result = op.apply(chain, seed=seed, item_key=item.source_id)
    extra: dict = {"chain_chars": len(chain)}
    if op.family == "F1" and result.fired and result.text and baseline.output_token_ids:
        ids = exact_prefix_ids(runner.backend.piece, output, baseline.output_token_ids,
                               result.text)
        extra["prefix_token_ids"] = None if ids is None else list(ids)
    return store_variant(db, op, result, item_id=item.id or 0, seed=seed,
                         source_generation_id=baseline.id, extra_details=extra)


def plan_fblock(db: sqlite_utils.Database, plan: Plan, runner_for: RunnerFor,
                arms: Sequence[Arm] | None = None) -> int:
    """Plan the F-block jobs of every arm/item whose baseline generation is stored.

    Args:
        db: the store.
        plan: the audit's plan.
        runner_for: the runner of each model.
        arms: only these arms (default: all of the audit's).

    Returns:
        How many jobs were new.
    """
    config = plan.audit.config
    f_ops = [op for op in map(get_operator, config["operators"]) if op.target == "chain"]
    if not f_ops:
        return 0
    seed = int(config["seed"])
    items = {item.id: item for item in plan.items}
    added = 0
    for arm in arms if arms is not None else plan.arms:
        runner = runner_for(plan.models[arm.model_id])
        planned: dict[int, int] = {}
        for job in list_jobs(db, plan.audit.id, role=AuditRole.F_BLOCK, arm_id=arm.id):
            planned[job.item_id] = planned.get(job.item_id, 0) + 1
        specs: list[JobSpec] = []
        not_fired: set[int] = set()
        for job in list_jobs(db, plan.audit.id, role=AuditRole.BASELINE, arm_id=arm.id,
                             status="done"):
            if planned.get(job.item_id, 0) >= len(f_ops) or job.generation_key is None:
                continue
            baseline = get_generation(db, job.generation_key)
            if baseline is None or baseline.parse_status == "error":
                continue
            item = items.get(job.item_id) or get_item(db, job.item_id)
            for op in f_ops:
                variant = chain_variant(db, op, item, baseline, seed, runner)
                key = None
                if variant.fired:
                    key = runner.key(request_for(AuditRole.F_BLOCK, item, arm, variant, config))
                else:
                    not_fired.add(variant.id)
                specs.append(JobSpec(arm_id=arm.id, item_id=job.item_id, role=AuditRole.F_BLOCK,
                                     stage=2, variant_id=variant.id, generation_key=key))
        added += add_jobs(db, plan.audit.id, specs)
        _mark_not_fired(db, plan.audit.id, not_fired)
    return added
