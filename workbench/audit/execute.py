"""Run an audit: plan, stage 1, F-block planning, stage 2, judge — resumable, one model at a time.

Each model is loaded once: all of its arms run stage 1 (baselines, direct, M-block, shuffle),
then its F-block is planned on its own baselines and run (stage 2), and the model is freed
before the next one loads. The judge model goes last and stays loaded for the judge. Within
a run the runner orders prompts by their token ids, so prompts sharing a prefix (an item's
baseline and its shuffle, an arm's F1 truncations of one chain) run back to back on the KV
cache. Each generation is stored and its jobs marked done as it finishes, so a killed audit
resumes where it stopped and a finished one generates nothing new when run again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import sqlite_utils

from store.jobs import Job
from store.records import ModelRecord
from workbench.audit.judge import JudgeOutcome, judge_audit
from workbench.audit.plan import create_plan, plan_fblock, request_for
from workbench.audit.spec import BLOCKS, ROLE_BLOCK, AuditSpec
from workbench.engine import (
    AuditEngine,
    AuditEvent,
    BlockProgress,
    JudgeFinished,
    Plan,
    RunnerProgress,
    Stage,
    StagedOutcome,
    StageStarted,
    StudyContext,
    run_staged,
)
from workbench.engine.variants import Variant, get_variant
from workbench.models import (
    GenerationFinished,
    GenerationRequest,
    Runner,
    RunnerEvent,
    RunStarted,
)

__all__ = ["resume_audit", "run_audit", "spec_from_config"]


def _variant(ctx: StudyContext, variant_id: int | None) -> Variant | None:
    if variant_id is None:
        return None
    cache: dict[int, Variant | None] = ctx.cache.setdefault("variants", {})
    if variant_id not in cache:
        cache[variant_id] = get_variant(ctx.db, variant_id)
    return cache[variant_id]


def audit_request(ctx: StudyContext, job: Job) -> GenerationRequest:
    """The generation a seed-002 audit job asks for (`plan.request_for`)."""
    return request_for(job.role, ctx.items[job.item_id], ctx.arm(job.arm_id),
                       _variant(ctx, job.variant_id), ctx.config)


def audit_stages(plan: Plan) -> list[Stage]:
    """Stage 1 (baseline, direct, M-block, shuffle), then stage 2 (the F-block, planned on
    each arm's own stored baselines right before it runs)."""

    def plan_stage2(ctx: StudyContext, arms: Sequence, runner: Runner) -> int:
        return plan_fblock(ctx.db, plan, ctx.engine.runner, arms)

    return [Stage("stage 1", 1, audit_request),
            Stage("stage 2", 2, audit_request, plan=plan_stage2)]


def run_audit(db: sqlite_utils.Database, spec: AuditSpec, *,
              engine: AuditEngine | None = None, judge_model: ModelRecord | None = None,
              judge: bool = True, on_event: Callable[[AuditEvent], None] | None = None,
              should_stop: Callable[[], bool] | None = None) -> StagedOutcome:
    """Plan (or find) the audit and run everything still missing, then judge.

    Args:
        db: the store.
        spec: the audit's settings.
        engine: the runners (default: llama.cpp, all cores).
        judge_model: the chain-registration judge (default: the embedded model).
        judge: run the judge at all.
        on_event: receives `AuditEvent`s (progress per block, runner events, …).
        should_stop: polled before each generation; True stops cleanly (resumable).

    Returns:
        What was generated now, the audit's job counts, and the judge's verdicts stored now.
    """
    from workbench.models import default_model

    owns_engine = engine is None
    engine = engine or AuditEngine(db)
    try:
        plan = create_plan(db, spec, engine.runner)
        if judge and judge_model is None:
            judge_model = default_model(db)
        ctx = StudyContext(db, plan.audit, plan.arms, dict(plan.models),
                           {item.id or 0: item for item in plan.items}, engine,
                           judge_model if judge else None)
        outcome: list[JudgeOutcome] = []

        def run_judge(emit: Callable[[AuditEvent], None]) -> tuple[int, bool]:
            assert judge_model is not None
            result = _judge(db, plan.audit.id, engine.runner(judge_model), emit, should_stop)
            outcome.append(result)
            return result.generated, result.stopped

        staged = run_staged(ctx, audit_stages(plan), command="audit", role_block=ROLE_BLOCK,
                            blocks=BLOCKS, on_event=on_event, should_stop=should_stop,
                            after_models=run_judge if judge and judge_model else None)
    finally:
        if owns_engine:
            engine.close()
    return replace(staged, judgements=outcome[0].stored if outcome else 0)


def _judge(db: sqlite_utils.Database, audit_id: int, runner: Runner,
           emit: Callable[[AuditEvent], None],
           should_stop: Callable[[], bool] | None) -> JudgeOutcome:
    done = 0

    def on_runner_event(event: RunnerEvent) -> None:
        nonlocal done
        if isinstance(event, RunStarted):
            # What the judge will generate: distinct prompts not stored yet (two subjects
            # with the same edit and chain share one judge generation).
            emit(StageStarted("judge", runner.model.name, event.to_generate))
        emit(RunnerProgress("judge", runner.model.name, event))
        if isinstance(event, GenerationFinished):
            done += 1
            emit(BlockProgress("judge", done, event.total))

    outcome = judge_audit(db, audit_id, runner, on_event=on_runner_event,
                          should_stop=should_stop)
    emit(JudgeFinished(outcome.method, outcome.subjects, outcome.stored, outcome.yes,
                       outcome.no))
    return outcome


def spec_from_config(name: str, config: dict) -> AuditSpec:
    """The `AuditSpec` of a stored audit (its `config_json` and name), to resume it."""
    item_ids = config.get("item_ids")
    return AuditSpec(dataset=config["dataset"], models=tuple(config["models"]),
                     templates=tuple(config["templates"]),
                     operators=tuple(config["operators"]), seed=int(config["seed"]),
                     limit=config.get("limit"),
                     item_ids=None if item_ids is None else tuple(item_ids),
                     max_tokens=int(config["max_tokens"]), direct=bool(config["direct"]),
                     name=name)


def resume_audit(db: sqlite_utils.Database, audit_id: int, *, engine: AuditEngine,
                 on_event: Callable[[AuditEvent], None] | None = None,
                 should_stop: Callable[[], bool] | None = None) -> StagedOutcome:
    """Run whatever a stored seed-002 audit still misses (the UI's and `paw resume`'s path).

    The chain-registration judge runs with the embedded model, as `paw audit` does by
    default.
    """
    row = db.execute("SELECT name, config_json FROM audits WHERE id = ?", [audit_id]).fetchone()
    from store.db import loads

    return run_audit(db, spec_from_config(row[0], loads(row[1])), engine=engine,
                     on_event=on_event, should_stop=should_stop)
