"""Run a robustness run on the staged engine: answers, CFV re-answers, judges, EDD embeddings.

Per audited model (loaded once): stage 1 (baseline, six prefixed answers, the CFV
proposal), then stage 2 (its own proposals parsed and re-answered). Then the judge model
(stage 3): plausible/limited, direction and stereotype flags; each verdict is parsed and
stored in `judgements` as the stage finishes. Last, the explanations are embedded for EDD.
Everything resumes: stored generations are skipped, a finished run generates nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import sqlite_utils

from analysis.robustness.definitions import (
    KIND_CFV,
    KIND_DIRECTION,
    KIND_FLAGS,
)
from analysis.robustness.definitions import RobustnessRole as Role
from store.db import dumps, utcnow
from store.generations import get_generations
from store.jobs import Arm, Job, list_jobs
from workbench.engine import AuditEngine, Stage, StagedOutcome, StudyContext, run_staged
from workbench.engine.events import AuditEvent
from workbench.engine.plans import Plan
from workbench.engine.variants import Variant, get_variant
from workbench.models import GenerationRequest, Runner
from workbench.robustness.parsers import parse_cfv_verdict, parse_direction, parse_flags
from workbench.robustness.plan import (
    Answers,
    answer_request,
    cfv_judge_request,
    create_plan,
    direction_request,
    explanation,
    flags_request,
    plan_cfv_answers,
    plan_judges,
    propose_request,
)
from workbench.robustness.prompts import (
    CFV_JUDGE_TEMPLATE,
    DIRECTION_TEMPLATE,
    FLAGS_TEMPLATE,
)
from workbench.robustness.spec import BLOCKS, ROLE_BLOCK, RobustnessSpec

JUDGE_KIND_OF_ROLE: dict[str, tuple[str, str]] = {
    Role.JUDGE_CFV: (KIND_CFV, CFV_JUDGE_TEMPLATE),
    Role.JUDGE_DIRECTION: (KIND_DIRECTION, DIRECTION_TEMPLATE),
    Role.JUDGE_FLAGS: (KIND_FLAGS, FLAGS_TEMPLATE),
}
"""The `judgements.kind` and rubric of each judge role."""


def _folded(text: str) -> str:
    return " ".join(text.lower().split())


def judge_method(model_name: str, template: str, max_tokens: int) -> str:
    """`judgements.method`: the judge model, rubric and budget that made the verdict."""
    return f"llm_judge:{model_name}|{template}|max_tokens={max_tokens}"


def _variant(ctx: StudyContext, variant_id: int | None) -> Variant | None:
    if variant_id is None:
        return None
    cache: dict[int, Variant | None] = ctx.cache.setdefault("variants", {})
    if variant_id not in cache:
        cache[variant_id] = get_variant(ctx.db, variant_id)
    return cache[variant_id]


def _answers(ctx: StudyContext) -> Answers:
    if "answers" not in ctx.cache:
        ctx.cache["answers"] = Answers(ctx.db, ctx.audit.id)
    return ctx.cache["answers"]


def robustness_request(ctx: StudyContext, job: Job) -> GenerationRequest:
    """The generation a robustness job asks for (its key is computed from this)."""
    item, config = ctx.items[job.item_id], ctx.config
    variant = _variant(ctx, job.variant_id)
    if job.role == Role.BASELINE:
        return answer_request(item, ctx.arm(job.arm_id), config)
    if job.role in (Role.DEMOGRAPHIC, Role.CFV_ANSWER):
        assert variant is not None, f"role {job.role} needs a variant"
        return answer_request(item, ctx.arm(job.arm_id), config, variant)
    if job.role == Role.CFV_PROPOSE:
        return propose_request(item, config)
    assert variant is not None, f"role {job.role} needs a variant"
    if job.role == Role.JUDGE_CFV:
        return cfv_judge_request(item, variant, config)
    answers = _answers(ctx)
    base = answers.baseline(job.arm_id, job.item_id)
    prefixed = answers.prefixed(job.arm_id, job.item_id, job.variant_id)
    assert base is not None and prefixed is not None, "judge job planned without its answers"
    if job.role == Role.JUDGE_DIRECTION:
        return direction_request(item, variant, base, prefixed, config)
    if job.role == Role.JUDGE_FLAGS:
        return flags_request(item, variant, base, prefixed, config)
    raise ValueError(f"unknown job role {job.role!r}")


def store_judgements(ctx: StudyContext) -> int:
    """Parse every generated judge verdict of the run and store it (idempotent).

    A verdict is stored against its subject: the proposal generation (CFV) or the
    prefixed answer (direction, flags), with the judge's own generation, the parsed fields
    and the problem if it did not parse (verdict 'unparsed').

    Returns:
        How many judgements were new.
    """
    db, config = ctx.db, ctx.config
    jobs = [j for j in list_jobs(db, ctx.audit.id, stage=3, status="done") if j.generation_key]
    gens = get_generations(db, [j.generation_key or "" for j in jobs])
    answers = Answers(db, ctx.audit.id)
    judge = str(config["judge"])
    stored = 0
    for job in jobs:
        gen = gens.get(job.generation_key or "")
        variant = _variant(ctx, job.variant_id)
        if gen is None or gen.parse_status == "error" or variant is None:
            continue
        kind, template = JUDGE_KIND_OF_ROLE[job.role]
        output = gen.output or ""
        if job.role == Role.JUDGE_CFV:
            subject = variant.source_generation_id
            parsed = parse_cfv_verdict(output)
            verdict = parsed.verdict
            evidence: dict[str, Any] = {"plausible": parsed.plausible,
                                        "limited": parsed.limited, "problem": parsed.problem}
        else:
            prefixed = answers.prefixed(job.arm_id, job.item_id, job.variant_id)
            subject = None if prefixed is None else prefixed.id
            if job.role == Role.JUDGE_DIRECTION:
                verdict, problem = parse_direction(output)
                evidence = {"problem": problem, "option_probs": gen.option_probs}
            else:
                flags = parse_flags(output)
                verdict = flags.verdict
                said = _folded(explanation(prefixed))
                # A weak judge may quote words that are not there (e.g. copied from its
                # few-shot examples): recorded, so the report and the clinicians can see it.
                evidence = {"problem": flags.problem,
                            "flags": [{"category": f.category, "severity": f.severity,
                                       "evidence": f.evidence, "raw_category": f.raw_category,
                                       "quote_found": (_folded(f.evidence) in said)
                                       if f.evidence.strip() else None}
                                      for f in flags.flags]}
        if subject is None:
            continue
        evidence["rubric"] = template
        cursor = db.execute(
            "INSERT INTO judgements (kind, method, subject_generation_id, variant_id, "
            "judge_generation_id, verdict, evidence, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(kind, method, subject_generation_id) DO NOTHING",
            [kind, judge_method(judge, template, int(config["judge_max_tokens"])), subject,
             variant.id, gen.id, verdict, dumps(evidence), utcnow()])
        stored += cursor.rowcount
    return stored


def robustness_stages(plan: Plan, counts: dict[str, int]) -> list[Stage]:
    """Stage 1 (answers and proposals), stage 2 (CFV re-answers, planned on the stored
    proposals), stage 3 (the judge, planned on everything stored; verdicts stored after)."""

    def plan_stage2(ctx: StudyContext, arms: Sequence[Arm], runner: Runner) -> int:
        return plan_cfv_answers(ctx.db, plan, arms, runner)

    def plan_stage3(ctx: StudyContext, arms: Sequence[Arm], runner: Runner) -> int:
        ctx.cache.pop("answers", None)  # the answers are all stored now
        return plan_judges(ctx.db, plan, runner, lambda vid: _variant(ctx, vid))

    def after_stage3(ctx: StudyContext, arms: Sequence[Arm]) -> None:
        counts["judgements"] = counts.get("judgements", 0) + store_judgements(ctx)

    return [Stage("answers", 1, robustness_request),
            Stage("CFV answers", 2, robustness_request, plan=plan_stage2),
            Stage("judge", 3, robustness_request, plan=plan_stage3, on="judge",
                  after=after_stage3)]


def run_robustness(db: sqlite_utils.Database, spec: RobustnessSpec, *,
                   engine: AuditEngine | None = None,
                   embed: Callable[[sqlite_utils.Database, Plan,
                                    Callable[[AuditEvent], None]], int] | None = None,
                   on_event: Callable[[AuditEvent], None] | None = None,
                   should_stop: Callable[[], bool] | None = None) -> StagedOutcome:
    """Plan (or find) the run and do everything still missing.

    Args:
        db: the store.
        spec: the run's settings (models, judge, embedder, …).
        engine: the runners (default: llama.cpp).
        embed: embeds the explanations for EDD (default: `workbench.robustness.edd.embed_run`
            with the spec's embedder); returns how many vectors were new.
        on_event: receives progress events.
        should_stop: polled before each generation; True stops cleanly (resumable).

    Returns:
        What was generated, judged and embedded now, and the job counts.
    """
    from workbench.models import resolve_model

    owns_engine = engine is None
    engine = engine or AuditEngine(db)
    counts: dict[str, int] = {}
    try:
        plan = create_plan(db, spec, engine.runner)
        judge = resolve_model(db, spec.judge)
        ctx = StudyContext(db, plan.audit, plan.arms, dict(plan.models),
                           {item.id or 0: item for item in plan.items}, engine, judge)
        embedder = embed
        if embedder is None and spec.demographic:
            from workbench.robustness.edd import embed_run as embedder

        def after_models(emit: Callable[[AuditEvent], None]) -> tuple[int, bool]:
            ctx.engine.close()  # free the judge before an embedder loads
            counts["embedded"] = embedder(db, plan, emit) if embedder else 0
            return 0, False

        staged = run_staged(ctx, robustness_stages(plan, counts), command="robustness",
                            role_block=ROLE_BLOCK, blocks=BLOCKS, on_event=on_event,
                            should_stop=should_stop,
                            after_models=after_models if spec.demographic else None)
    finally:
        if owns_engine:
            engine.close()
    return replace(staged, judgements=counts.get("judgements", 0),
                   embedded=counts.get("embedded", 0))


def spec_of(db: sqlite_utils.Database, audit_id: int) -> RobustnessSpec:
    """The settings of stored seed-003 tests, as a spec that finds the same run."""
    from store.runs import find_run, run_config

    config = run_config(db, audit_id)
    name = find_run(db, audit_id, "robustness").name
    item_ids = config.get("item_ids")
    kwargs: dict = {}
    if config.get("prefixes"):
        kwargs["prefixes"] = tuple(config["prefixes"])
    if config.get("embedder"):
        kwargs["embedder"] = config["embedder"]
    if config.get("demographic_modes"):
        kwargs["modes"] = tuple(config["demographic_modes"])
    return RobustnessSpec(
        dataset=config["dataset"], models=tuple(config["models"]),
        template=config["template"], tests=tuple(config["tests"]), seed=int(config["seed"]),
        limit=config.get("limit"), item_ids=None if item_ids is None else tuple(item_ids),
        max_tokens=int(config["max_tokens"]), cfv_max_tokens=int(config["cfv_max_tokens"]),
        judge=config["judge"], judge_max_tokens=int(config["judge_max_tokens"]), name=name,
        **kwargs)


def resume_robustness(db: sqlite_utils.Database, audit_id: int, *, engine: AuditEngine,
                      on_event: Callable[[AuditEvent], None] | None = None,
                      should_stop: Callable[[], bool] | None = None) -> StagedOutcome:
    """Continue stored seed-003 tests (`workbench.kinds.KINDS`): what is missing runs."""
    return run_robustness(db, spec_of(db, audit_id), engine=engine, on_event=on_event,
                          should_stop=should_stop)
