"""The staged job engine every kind of planned work runs on: audits, runs and studies.

A piece of work (an `audits` row of any kind) is arms × items × jobs. What differs between
the seed-002 audit, the seed-000 study, DBPA and the seed-003 tests is only *which* jobs
exist and *what each job asks the model*; how they run is shared and lives here:

- `AuditEngine` keeps one runner per model (loaded lazily, freed on request);
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
from workbench.audit.events import (
    AuditEvent,
    AuditFinished,
    AuditPlanned,
    BlockProgress,
    RunnerProgress,
    StageStarted,
)
from workbench.models import GenerationFinished, GenerationRequest, Runner, RunnerEvent
from workbench.models.backend import Backend

BackendFactory = Callable[[ModelRecord], Backend]

HEARTBEAT_EVERY_S = 10.0
"""How often a working session refreshes `sessions.heartbeat_at`."""


class AuditEngine:
    """The runners of a piece of work, one per model, created on first use and freed on request.

    Args:
        db: the store.
        threads: CPU threads per model (default: the runner's, idle cores).
        gpu_layers: layers offloaded to a GPU.
        ctx: context size in tokens (default: the runner's).
        backend_factory: builds a ready backend for a model (tests pass a fake one);
            by default the runner loads llama.cpp lazily, only if something is generated.
        batch_size: sequences per llama.cpp batch (default: the runner's; 1: one at a
            time); batching needs the runner's bit-exactness self-check to pass.
        servers: a server pool (`PoolSettings`, or its base URLs; default: `PAW_SERVERS`);
            every model decodes there, and a model the pool does not serve is a
            `UserError` (never a silent in-process run).
    """

    def __init__(self, db: sqlite_utils.Database, *, threads: int | None = None,
                 gpu_layers: int = 0, ctx: int | None = None,
                 backend_factory: BackendFactory | None = None,
                 batch_size: int | None = None, servers: Any = None) -> None:
        from workbench.models.server import PoolSettings, servers_from_env

        self.db = db
        if servers is None:
            servers = servers_from_env()
        if servers and not isinstance(servers, PoolSettings):
            servers = PoolSettings(tuple(servers), ctx=ctx)
        self.servers = servers or None
        self.threads = threads
        self.gpu_layers = gpu_layers
        self.ctx = ctx
        self.backend_factory = backend_factory
        self.batch_size = batch_size
        self._runners: dict[int, Runner] = {}

    def runner(self, model: ModelRecord) -> Runner:
        """The runner of `model` (created once; its backend loads on first generation)."""
        runner = self._runners.get(model.id)
        if runner is None:
            backend = self.backend_factory(model) if self.backend_factory else None
            if backend is None and self.servers:
                from workbench.models.server import ServerPoolBackend

                backend = ServerPoolBackend(model, self.servers)
            runner = Runner(self.db, model, threads=self.threads, gpu_layers=self.gpu_layers,
                            ctx=self.ctx, backend=backend, batch_size=self.batch_size)
            self._runners[model.id] = runner
        return runner

    def release(self, model: ModelRecord) -> None:
        """Free a model's backend (the runner is rebuilt if needed again)."""
        runner = self._runners.pop(model.id, None)
        if runner is not None:
            runner.close()

    def close(self) -> None:
        """Free every loaded model."""
        for runner in self._runners.values():
            runner.close()
        self._runners.clear()


class Progress:
    """Counts done/total per block from the jobs table and emits `BlockProgress`.

    Args:
        db: the store.
        audit_id: whose jobs.
        emit: receives the events.
        role_block: which block each job role counts in (a role not listed is its own).
        blocks: the order blocks are reported in.
    """

    def __init__(self, db: sqlite_utils.Database, audit_id: int,
                 emit: Callable[[AuditEvent], None], role_block: Mapping[str, str],
                 blocks: Sequence[str] = ()) -> None:
        self.db = db
        self.audit_id = audit_id
        self.emit = emit
        self.role_block = dict(role_block)
        self.blocks = tuple(blocks)
        self.done: dict[str, int] = {}
        self.total: dict[str, int] = {}
        self.not_fired: dict[str, int] = {}

    def block_of(self, role: str) -> str:
        """The progress block a job role counts in."""
        return self.role_block.get(role, role)

    def refresh(self, emit: bool = True) -> None:
        """Recount from the jobs table and (unless `emit` is False) emit every block's
        progress."""
        self.done, self.total, self.not_fired = {}, {}, {}
        for role, status, n in self.db.execute(
                "SELECT role, status, COUNT(*) FROM jobs WHERE audit_id = ? "
                "GROUP BY role, status", [self.audit_id]):
            block = self.block_of(role)
            if status == "not_fired":
                self.not_fired[block] = self.not_fired.get(block, 0) + n
                continue
            self.total[block] = self.total.get(block, 0) + n
            if status == "done":
                self.done[block] = self.done.get(block, 0) + n
        if emit:
            self.emit_all()

    def emit_all(self) -> None:
        """Emit every block's current progress, in block order."""
        order = list(self.blocks) + sorted(b for b in self.total if b not in self.blocks)
        for block in order:
            if block in self.total:
                self.emit(BlockProgress(block, self.done.get(block, 0), self.total[block]))

    def finished(self, block: str, n: int = 1) -> None:
        """`n` jobs of `block` got their generation."""
        self.done[block] = self.done.get(block, 0) + n
        self.emit(BlockProgress(block, self.done[block], self.total.get(block, 0)))


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
    """What `run_staged` did."""

    audit: str
    audit_id: int
    generated: int
    job_counts: dict[str, int]
    elapsed_s: float
    stopped: bool


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
    sync_done(db, audit.id)
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
