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

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import sqlite_utils

from store.generations import stored_keys
from store.jobs import (
    Arm,
    Job,
    finish_session,
    job_counts,
    list_jobs,
    mark_done,
    mark_status,
    set_audit_status,
    set_job_keys,
    start_session,
    sync_done,
)
from store.records import ModelRecord
from workbench.audit.events import (
    AuditEvent,
    AuditFinished,
    AuditPlanned,
    BlockProgress,
    JudgeFinished,
    RunnerProgress,
    StageStarted,
)
from workbench.audit.judge import JudgeOutcome, judge_audit
from workbench.audit.plan import Plan, create_plan, plan_fblock, request_for
from workbench.audit.spec import BLOCKS, ROLE_BLOCK, AuditSpec
from workbench.audit.variants import Variant, get_variant
from workbench.models import GenerationFinished, Runner, RunnerEvent
from workbench.models.backend import Backend

BackendFactory = Callable[[ModelRecord], Backend]


class AuditEngine:
    """The runners of an audit, one per model, created on first use and freed on request.

    Args:
        db: the store.
        threads: CPU threads per model (default: all cores).
        gpu_layers: layers offloaded to a GPU.
        ctx: context size in tokens (default: the runner's).
        backend_factory: builds a ready backend for a model (tests pass a fake one);
            by default the runner loads llama.cpp lazily, only if something is generated.
    """

    def __init__(self, db: sqlite_utils.Database, *, threads: int | None = None,
                 gpu_layers: int = 0, ctx: int | None = None,
                 backend_factory: BackendFactory | None = None) -> None:
        self.db = db
        self.threads = threads
        self.gpu_layers = gpu_layers
        self.ctx = ctx
        self.backend_factory = backend_factory
        self._runners: dict[int, Runner] = {}

    def runner(self, model: ModelRecord) -> Runner:
        """The runner of `model` (created once; its backend loads on first generation)."""
        runner = self._runners.get(model.id)
        if runner is None:
            backend = self.backend_factory(model) if self.backend_factory else None
            runner = Runner(self.db, model, threads=self.threads, gpu_layers=self.gpu_layers,
                            ctx=self.ctx, backend=backend)
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


@dataclass(frozen=True)
class AuditOutcome:
    """What `run_audit` did."""

    audit: str
    audit_id: int
    generated: int
    job_counts: dict[str, int]
    judge: JudgeOutcome | None
    elapsed_s: float
    stopped: bool


class _Progress:
    """Counts done/total per block from the jobs table and emits `BlockProgress`."""

    def __init__(self, db: sqlite_utils.Database, audit_id: int,
                 emit: Callable[[AuditEvent], None]) -> None:
        self.db = db
        self.audit_id = audit_id
        self.emit = emit
        self.done: dict[str, int] = {}
        self.total: dict[str, int] = {}
        self.not_fired: dict[str, int] = {}

    def refresh(self) -> None:
        self.done, self.total, self.not_fired = {}, {}, {}
        for role, status, n in self.db.execute(
                "SELECT role, status, COUNT(*) FROM jobs WHERE audit_id = ? "
                "GROUP BY role, status", [self.audit_id]):
            block = ROLE_BLOCK.get(role, role)
            if status == "not_fired":
                self.not_fired[block] = self.not_fired.get(block, 0) + n
                continue
            self.total[block] = self.total.get(block, 0) + n
            if status == "done":
                self.done[block] = self.done.get(block, 0) + n
        for block in BLOCKS:
            if block in self.total:
                self.emit(BlockProgress(block, self.done.get(block, 0), self.total[block]))

    def finished(self, block: str, n: int = 1) -> None:
        self.done[block] = self.done.get(block, 0) + n
        self.emit(BlockProgress(block, self.done[block], self.total.get(block, 0)))


def _variants(db: sqlite_utils.Database, jobs: Sequence[Job]) -> dict[int, Variant]:
    found: dict[int, Variant] = {}
    for job in jobs:
        if job.variant_id is not None and job.variant_id not in found:
            variant = get_variant(db, job.variant_id)
            if variant is not None:
                found[variant.id] = variant
    return found


def run_jobs(db: sqlite_utils.Database, plan: Plan, runner: Runner, arms: Sequence[Arm],
             stage: int, progress: _Progress, emit: Callable[[AuditEvent], None],
             should_stop: Callable[[], bool] | None = None) -> tuple[int, bool]:
    """Generate the pending jobs of `stage` for `arms` (all of one model) through its runner.

    Returns:
        (generations made now, whether the run was stopped).
    """
    arm_ids = {arm.id for arm in arms}
    arms_by_id = {arm.id: arm for arm in arms}
    jobs = [job for job in list_jobs(db, plan.audit.id, stage=stage)
            if job.arm_id in arm_ids and job.status in ("pending", "error")]
    if not jobs:
        return 0, False
    items = {item.id: item for item in plan.items}
    variants = _variants(db, jobs)
    config = plan.audit.config
    # An arm's jobs item by item: the runner re-sorts by token ids for the KV cache, and
    # this order decides which duplicate request (same key) carries the variant id.
    jobs.sort(key=lambda j: (j.arm_id, j.item_id, j.id))
    requests, fixes = [], []
    by_key: dict[str, list[Job]] = {}
    for job in jobs:
        variant = variants.get(job.variant_id) if job.variant_id is not None else None
        request = request_for(job.role, items[job.item_id], arms_by_id[job.arm_id], variant,
                              config)
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
    label = "stage 2" if stage == 2 else "stage 1"
    to_generate = len(by_key) - len(stored_keys(db, by_key))
    emit(StageStarted(label, runner.model.name, to_generate))

    def on_runner_event(event: RunnerEvent) -> None:
        emit(RunnerProgress(label, runner.model.name, event))
        if isinstance(event, GenerationFinished) and event.parse_status != "error":
            finished = by_key.get(event.key, [])
            mark_done(db, [job.id for job in finished])
            for job in finished:
                progress.finished(ROLE_BLOCK[job.role])

    summary = runner.run(requests, on_event=on_runner_event, should_stop=should_stop)
    if sync_done(db, plan.audit.id):
        progress.refresh()
    if not summary.stopped:
        # What is still missing failed in the backend: marked 'error', retried next run.
        stored = stored_keys(db, by_key)
        failed = [job.id for key, group in by_key.items() if key not in stored for job in group]
        if failed:
            mark_status(db, failed, "error")
    return summary.generated, summary.stopped


def _model_order(plan: Plan, judge_model: ModelRecord | None) -> list[ModelRecord]:
    order: list[ModelRecord] = []
    for arm in plan.arms:
        model = plan.models[arm.model_id]
        if model.id not in {m.id for m in order}:
            order.append(model)
    if judge_model is not None and any(m.id == judge_model.id for m in order):
        order = [m for m in order if m.id != judge_model.id] + \
            [next(m for m in order if m.id == judge_model.id)]
    return order


def run_audit(db: sqlite_utils.Database, spec: AuditSpec, *,
              engine: AuditEngine | None = None, judge_model: ModelRecord | None = None,
              judge: bool = True, on_event: Callable[[AuditEvent], None] | None = None,
              should_stop: Callable[[], bool] | None = None) -> AuditOutcome:
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
        What was generated now and the audit's job counts.
    """
    from workbench.models import default_model

    started = time.perf_counter()
    emit = on_event or (lambda event: None)
    owns_engine = engine is None
    engine = engine or AuditEngine(db)
    plan = create_plan(db, spec, engine.runner)
    audit = plan.audit
    sync_done(db, audit.id)
    session = start_session(db, "audit", audit_id=audit.id, settings=audit.config)
    set_audit_status(db, audit.id, "running")
    progress = _Progress(db, audit.id, emit)
    progress.refresh()
    emit(AuditPlanned(audit.name, tuple(arm.label for arm in plan.arms), len(plan.items),
                      dict(progress.total), dict(progress.done), dict(progress.not_fired)))
    if judge and judge_model is None:
        judge_model = default_model(db)
    generated, stopped, outcome = 0, False, None
    status = "failed"
    try:
        for model in _model_order(plan, judge_model if judge else None):
            runner = engine.runner(model)
            arms = [arm for arm in plan.arms if arm.model_id == model.id]
            for stage in (1, 2):
                if stage == 2:
                    if plan_fblock(db, plan, engine.runner, arms):
                        progress.refresh()
                made, stopped = run_jobs(db, plan, runner, arms, stage, progress, emit,
                                         should_stop)
                generated += made
                if stopped:
                    break
            if stopped:
                break
            if not (judge and judge_model is not None and model.id == judge_model.id):
                engine.release(model)
        if judge and judge_model is not None and not stopped:
            outcome = _judge(db, audit.id, engine.runner(judge_model), emit, should_stop)
            generated += outcome.generated
            stopped = outcome.stopped
        status = "stopped" if stopped else "finished"
    finally:
        if owns_engine:
            engine.close()
        set_audit_status(db, audit.id, status)
        finish_session(db, session, status, generated)
    counts = job_counts(db, audit.id)
    elapsed = time.perf_counter() - started
    emit(AuditFinished(audit.name, generated, counts, elapsed, stopped))
    return AuditOutcome(audit.name, audit.id, generated, counts, outcome, elapsed, stopped)


def _judge(db: sqlite_utils.Database, audit_id: int, runner: Runner,
           emit: Callable[[AuditEvent], None],
           should_stop: Callable[[], bool] | None) -> JudgeOutcome:
    from workbench.audit.judge import judge_subjects

    subjects = judge_subjects(db, audit_id)
    emit(StageStarted("judge", runner.model.name, len(subjects)))
    done = 0

    def on_runner_event(event: RunnerEvent) -> None:
        nonlocal done
        emit(RunnerProgress("judge", runner.model.name, event))
        if isinstance(event, GenerationFinished):
            done += 1
            emit(BlockProgress("judge", done, event.total))

    outcome = judge_audit(db, audit_id, runner, on_event=on_runner_event,
                          should_stop=should_stop)
    emit(JudgeFinished(outcome.method, outcome.subjects, outcome.stored, outcome.yes,
                       outcome.no))
    return outcome
