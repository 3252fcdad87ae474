"""The staged job engine every kind of planned work runs on: audits, runs and studies.

A piece of work (an `audits` row of any kind) is arms × items × jobs. What differs between
the seed-002 audit, the seed-000 study, DBPA and the seed-003 tests is only *which* jobs
exist and *what each job asks the model*; how they run is shared and lives here:

- `AuditEngine` (`runners.py`) keeps one runner per model (loaded lazily, freed on request);
- a `Stage` says which jobs it plans (after the earlier stages' generations exist: the
  F-block edits the arm's own chain, a CFV re-answer needs the proposed change) and which
  `GenerationRequest` each job is; stages run per model, in order, and `judge` stages run
  last on the judge model;
- `run_staged` runs the stages resumably: generations already stored are skipped, each new
  one is stored and its jobs marked done as it finishes, progress per block is emitted as
  the same events (`AuditPlanned`, `StageStarted`, `BlockProgress`, …) that the CLI's
  progress bars and the UI's Runs screen consume, and the session's heartbeat is refreshed
  so `store.runs` can tell a running process from a killed one.

A new kind of study writes its planner (arms, stage-1 jobs) and its `Stage`s, and calls
`run_staged`; it gets resume, progress, cancel and status for free.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlite_utils

from store.generations import stored_keys
from store.jobs import (
    Arm,
    Audit,
    Job,
    finish_session,
    heartbeat,
    job_counts,
    list_jobs,
    mark_done,
    mark_status,
    set_audit_status,
    set_job_keys,
    start_session,
    sync_done,
)
from store.records import Item, ModelRecord
from workbench.engine.events import (
    AuditEvent,
    AuditFinished,
    AuditPlanned,
    RunnerProgress,
    RunWarning,
    StageStarted,
)
from workbench.engine.progress import Progress
from workbench.engine.runners import AuditEngine, live_sessions
from workbench.models import GenerationFinished, GenerationRequest, Runner, RunnerEvent
from workbench.models.engine_check import check_one_engine

HEARTBEAT_EVERY_S = 10.0
"""How often a working session refreshes `sessions.heartbeat_at`."""


RequestOf = Callable[[Job], GenerationRequest]
"""The generation a job asks for (its key is computed from this)."""


def run_job_batch(db: sqlite_utils.Database, audit_id: int, runner: Runner, jobs: Sequence[Job],
                  request_of: RequestOf, progress: Progress, emit: Callable[[AuditEvent], None],
                  *, label: str, should_stop: Callable[[], bool] | None = None,
                  on_stored: Callable[[], None] | None = None) -> tuple[int, bool]:
    """Generate what `jobs` (pending or errored, all for `runner`'s model) still need.

    Each job's key is recomputed from its request (a stale key is fixed), duplicates run
    once, stored keys are skipped; each generation marks its jobs done as it is stored.
    Jobs whose generation failed in the backend are marked 'error' (retried next run).

    Args:
        db: the store.
        audit_id: the jobs' audit.
        runner: the model's runner.
        jobs: the jobs to run (others' statuses are untouched).
        request_of: the request of each job.
        progress: per-block counters.
        emit: receives the events.
        label: the stage's name in events ('stage 1', 'judge', …).
        should_stop: polled before each generation; True stops cleanly.
        on_stored: called after each stored generation (heartbeat).

    Returns:
        (generations made now, whether the run was stopped).
    """
    jobs = [job for job in jobs if job.status in ("pending", "error")]
    if not jobs:
        return 0, False
    # Item by item within an arm: the runner re-sorts by token ids for the KV cache, and
    # this order decides which duplicate request (same key) carries the variant id.
    jobs.sort(key=lambda j: (j.arm_id, j.item_id, j.id))
    requests, fixes = [], []
    by_key: dict[str, list[Job]] = {}
    for job in jobs:
        request = request_of(job)
        key = runner.key(request)
        if key != job.generation_key:
            fixes.append((job.id, key))
        requests.append(request)
        by_key.setdefault(key, []).append(job)
    if fixes:
        set_job_keys(db, fixes)
    errored = [job.id for job in jobs if job.status == "error"]
    if errored:
        mark_status(db, errored, "pending")
    to_generate = len(by_key) - len(stored_keys(db, by_key))
    emit(StageStarted(label, runner.model.name, to_generate))

    def on_runner_event(event: RunnerEvent) -> None:
        emit(RunnerProgress(label, runner.model.name, event))
        if isinstance(event, GenerationFinished):
            if on_stored is not None:
                on_stored()
            if event.parse_status != "error":
                finished = by_key.get(event.key, [])
                mark_done(db, [job.id for job in finished])
                for job in finished:
                    progress.finished(progress.block_of(job.role))

    summary = runner.run(requests, on_event=on_runner_event, should_stop=should_stop)
    if sync_done(db, audit_id):
        progress.refresh()
    if not summary.stopped:
        stored = stored_keys(db, by_key)
        failed = [job.id for key, group in by_key.items() if key not in stored for job in group]
        if failed:
            mark_status(db, failed, "error")
    return summary.generated, summary.stopped


@dataclass
class StudyContext:
    """What a stage's planner and request builder see.

    Attributes:
        db: the store.
        audit: the stored audit/study row (its `config` holds the settings).
        arms: every arm.
        models: model records by id.
        items: the items by id.
        engine: the runners (a planner may need a model, e.g. to tokenize).
        judge_model: the model of `judge` stages (None: no judge stages run).
        cache: scratch space a kind may use to share loaded rows between its stages.
        emit: the run's event sink, set by `run_staged`, so a stage's planner that itself
            generates (a paraphraser, a proposed counterfactual) can report its progress.
        should_stop: the run's stop poll, set by `run_staged` (None: never stop).
    """

    db: sqlite_utils.Database
    audit: Audit
    arms: tuple[Arm, ...]
    models: dict[int, ModelRecord]
    items: dict[int, Item]
    engine: AuditEngine
    judge_model: ModelRecord | None = None
    cache: dict[str, Any] = field(default_factory=dict)
    emit: Callable[[AuditEvent], None] = field(default=lambda event: None, repr=False)
    should_stop: Callable[[], bool] | None = field(default=None, repr=False)

    @property
    def config(self) -> dict[str, Any]:
        """The stored settings."""
        return self.audit.config

    def arm(self, arm_id: int) -> Arm:
        """An arm by id."""
        return next(a for a in self.arms if a.id == arm_id)


@dataclass(frozen=True)
class Stage:
    """One stage of a piece of work.

    Attributes:
        name: shown in progress ('stage 1', 'F-block', 'paraphrase', 'judge', …).
        number: the `jobs.stage` value of its jobs.
        request: the generation each of its jobs asks for.
        plan: adds this stage's jobs for the given arms (all of one model; for judge stages,
            every arm) once earlier stages ran; returns how many are new. None: the stage's
            jobs were planned up front.
        on: 'arm' runs with each arm's own model; 'judge' runs once, last, with the judge
            model, over every arm's jobs of this stage.
        after: called after the stage ran for a model (e.g. to store judgements parsed from
            the judge's generations); returns nothing.
    """

    name: str
    number: int
    request: Callable[[StudyContext, Job], GenerationRequest]
    plan: Callable[[StudyContext, Sequence[Arm], Runner], int] | None = None
    on: str = "arm"
    after: Callable[[StudyContext, Sequence[Arm]], None] | None = None


@dataclass(frozen=True)
class StagedOutcome:
    """What a run on the engine did (`run_staged`, and the seed-002 and seed-003 runs that
    add their judge's verdicts and their embeddings).

    Attributes:
        audit: the run's name.
        audit_id: its id.
        generated: generations made now.
        job_counts: the run's jobs per status.
        elapsed_s: wall time of this call.
        stopped: stopped early (resumable).
        judgements: judge verdicts stored now (kinds with a judge that writes them).
        embedded: vectors embedded now (kinds that embed, e.g. seed 003's EDD).
    """

    audit: str
    audit_id: int
    generated: int
    job_counts: dict[str, int]
    elapsed_s: float
    stopped: bool
    judgements: int = 0
    embedded: int = 0


def model_order(arms: Sequence[Arm], models: Mapping[int, ModelRecord],
                last: ModelRecord | None = None) -> list[ModelRecord]:
    """Models in arm order, with `last` (the judge) moved to the end so it stays loaded."""
    order: list[ModelRecord] = []
    for arm in arms:
        if all(m.id != arm.model_id for m in order):
            order.append(models[arm.model_id])
    if last is not None and any(m.id == last.id for m in order):
        order = [m for m in order if m.id != last.id] + [last]
    return order


def run_staged(ctx: StudyContext, stages: Sequence[Stage], *, command: str,
               role_block: Mapping[str, str], blocks: Sequence[str] = (),
               on_event: Callable[[AuditEvent], None] | None = None,
               should_stop: Callable[[], bool] | None = None,
               after_models: Callable[[Callable[[AuditEvent], None]], tuple[int, bool]]
               | None = None) -> StagedOutcome:
    """Run every stage of a planned piece of work, resumably, model by model.

    Each model is loaded once: its arms run every 'arm' stage in order (each stage planned
    right before it runs), and the model is freed before the next loads. Then the 'judge'
    stages run on `ctx.judge_model`, and finally `after_models` (e.g. the seed-002 judge,
    which writes judgements rather than jobs).

    Args:
        ctx: the stored plan (audit, arms, models, items) and the engine.
        stages: the stages, in order.
        command: recorded on the session ('audit', 'study', 'dbpa', …).
        role_block: the progress block of each job role.
        blocks: block order for progress.
        on_event: receives the events.
        should_stop: polled before each generation; True stops cleanly (resumable).
        after_models: extra work with the engine at the end; returns (generated, stopped).

    Returns:
        What was generated now and the job counts.
    """
    started = time.perf_counter()
    emit = on_event or (lambda event: None)
    ctx.emit, ctx.should_stop = emit, should_stop
    db, audit = ctx.db, ctx.audit
    for model in [*ctx.models.values(), *([ctx.judge_model] if ctx.judge_model else [])]:
        # One run, one engine (refused before anything is stored or the status changes).
        check_one_engine(db, audit, model, ctx.engine.runner(model).engine,
                         ctx.engine.allow_mixed_engines)
    sync_done(db, audit.id)
    for other in live_sessions(db, audit.id):
        emit(RunWarning(
            f"run {audit.name!r} is already being run by another live process (pid "
            f"{other['pid']} on {other['host']}, session {other['id']}, started "
            f"{other['started_at']}); both would do the same work and the second store "
            "write of each generation is wasted: stop one (one coordinator per store; split "
            "work across servers with --servers instead)"))
    session = start_session(db, command, audit_id=audit.id, settings=audit.config)
    set_audit_status(db, audit.id, "running")
    progress = Progress(db, audit.id, emit, role_block, blocks)
    progress.refresh(emit=False)
    emit(AuditPlanned(audit.name, tuple(arm.label for arm in ctx.arms), len(ctx.items),
                      dict(progress.total), dict(progress.done), dict(progress.not_fired)))
    progress.emit_all()
    last_beat = [time.monotonic()]

    def beat() -> None:
        now = time.monotonic()
        if now - last_beat[0] >= HEARTBEAT_EVERY_S:
            last_beat[0] = now
            heartbeat(db, session)

    def run_stage(stage: Stage, arms: Sequence[Arm], runner: Runner) -> tuple[int, bool]:
        if stage.plan is not None and stage.plan(ctx, arms, runner):
            progress.refresh()
        arm_ids = {arm.id for arm in arms}
        jobs = [job for job in list_jobs(db, audit.id, stage=stage.number)
                if job.arm_id in arm_ids]
        made, stopped = run_job_batch(
            db, audit.id, runner, jobs, lambda job: stage.request(ctx, job), progress, emit,
            label=stage.name, should_stop=should_stop, on_stored=beat)
        if stage.after is not None and not stopped:
            stage.after(ctx, arms)
        return made, stopped

    generated, stopped, status = 0, False, "failed"
    judge = ctx.judge_model
    arm_stages = [s for s in stages if s.on == "arm"]
    judge_stages = [s for s in stages if s.on == "judge"]
    try:
        keep_judge = bool(judge_stages or after_models)
        for model in model_order(ctx.arms, ctx.models, judge if keep_judge else None):
            runner = ctx.engine.runner(model)
            arms = [arm for arm in ctx.arms if arm.model_id == model.id]
            for stage in arm_stages:
                made, stopped = run_stage(stage, arms, runner)
                generated += made
                if stopped:
                    break
            if stopped:
                break
            if judge is None or model.id != judge.id or not keep_judge:
                ctx.engine.release(model)
        if not stopped and judge is not None:
            for stage in judge_stages:
                made, stopped = run_stage(stage, ctx.arms, ctx.engine.runner(judge))
                generated += made
                if stopped:
                    break
        if not stopped and after_models is not None:
            made, stopped = after_models(emit)
            generated += made
        # The flip inspector's derived index, brought up to date now, so the first listing
        # of a large audit does not pay for it (seconds at 50,000 edits).
        from analysis.flips.index import index_flips

        index_flips(db, audit.id)
        status = "stopped" if stopped else "finished"
    finally:
        set_audit_status(db, audit.id, status)
        finish_session(db, session, status, generated)
    counts = job_counts(db, audit.id)
    elapsed = time.perf_counter() - started
    emit(AuditFinished(audit.name, generated, counts, elapsed, stopped))
    return StagedOutcome(audit.name, audit.id, generated, counts, elapsed, stopped)
