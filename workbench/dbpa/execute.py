"""Run a DBPA analysis on the staged engine: samples (stage 1), then embeddings and tests.

The samples run like every planned piece of work (`workbench.engine.run_staged`):
one model at a time, resumable, each generation stored as it finishes. When every model
is done, `analyse` embeds the outputs with each configured embedder and stores every
permutation test in `dbpa_tests`; the report (`analysis.dbpa.report`) reads them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sqlite_utils

from workbench.engine import AuditEngine, Stage, StudyContext, run_staged
from workbench.engine.events import AuditEvent
from workbench.dbpa.analyse import analyse
from workbench.dbpa.plan import create_dbpa_plan, request_of_job
from workbench.dbpa.spec import BLOCKS, ROLE_BLOCK, DbpaSpec


@dataclass(frozen=True)
class DbpaOutcome:
    """What `run_dbpa` did."""

    audit: str
    audit_id: int
    generated: int
    tests_computed: int
    job_counts: dict[str, int]
    elapsed_s: float
    stopped: bool


def run_dbpa(db: sqlite_utils.Database, spec: DbpaSpec, *, engine: AuditEngine | None = None,
             on_event: Callable[[AuditEvent], None] | None = None,
             should_stop: Callable[[], bool] | None = None,
             threads: int | None = None) -> DbpaOutcome:
    """Plan (or find) the analysis, generate what is missing, embed and test.

    Args:
        db: the store.
        spec: the analysis's settings.
        engine: the runners (default: llama.cpp).
        on_event: receives the engine's events (and embedding/test progress).
        should_stop: polled before each generation and each test; True stops cleanly.
        threads: CPU threads for llama.cpp (generation and embeddings).

    Returns:
        What was generated and tested now.
    """
    from workbench.embed import get_embedder

    # Every embedder must load before hours of sampling, not after (e.g. minilm absent).
    for name in spec.embedders:
        get_embedder(name, db).close()
    owns_engine = engine is None
    engine = engine or AuditEngine(db, threads=threads)
    tested = [0]
    try:
        plan = create_dbpa_plan(db, spec, engine.runner)
        ctx = StudyContext(db, plan.audit, plan.arms, dict(plan.models),
                           {item.id or 0: item for item in plan.items}, engine)

        def after(emit: Callable[[AuditEvent], None]) -> tuple[int, bool]:
            made, stopped = analyse(db, plan.audit, emit, should_stop, threads=threads)
            tested[0] = made
            return 0, stopped

        staged = run_staged(ctx, [Stage("samples", 1, request_of_job)], command="dbpa",
                            role_block=ROLE_BLOCK, blocks=BLOCKS, on_event=on_event,
                            should_stop=should_stop, after_models=after)
    finally:
        if owns_engine:
            engine.close()
    return DbpaOutcome(staged.audit, staged.audit_id, staged.generated, tested[0],
                       staged.job_counts, staged.elapsed_s, staged.stopped)


def spec_of(db: sqlite_utils.Database, audit_id: int) -> DbpaSpec:
    """The settings of a stored DBPA analysis, as a spec that finds the same analysis."""
    from store.runs import find_run, run_config

    config = run_config(db, audit_id)
    name = find_run(db, audit_id, "dbpa").name

    def maybe(key: str) -> tuple[str, ...] | None:
        return None if config.get(key) is None else tuple(config[key])

    return DbpaSpec(
        dataset=config["dataset"], models=tuple(config["models"]),
        model_swap=bool(config["model_swap"]), operators=tuple(config["operators"]),
        k=int(config["k"]), temperature=float(config["temperature"]),
        max_tokens=int(config["max_tokens"]), seed=int(config["seed"]), seeds=config["seeds"],
        template=config["template"], limit=config["limit"], item_ids=maybe("item_ids"),
        embedders=tuple(config["embedders"]), distances=tuple(config["distances"]),
        permutations=int(config["permutations"]), alpha=float(config["alpha"]),
        correction=config["correction"], should_change=maybe("should_change"),
        should_not_change=maybe("should_not_change"), name=name,
        # Version 1 had neither: no identity control, and no guard (it was planned already).
        identity_control=bool(config.get("identity_control", False)),
        allow_small_k=bool(config.get("allow_small_k", True)),
        version=int(config.get("version", 1)))


def resume_dbpa(db: sqlite_utils.Database, audit_id: int, *, engine: AuditEngine,
                on_event: Callable[[AuditEvent], None] | None = None,
                should_stop: Callable[[], bool] | None = None) -> DbpaOutcome:
    """Continue a stored DBPA analysis (`workbench.kinds.KINDS`): what is missing runs."""
    return run_dbpa(db, spec_of(db, audit_id), engine=engine, on_event=on_event,
                    should_stop=should_stop)
