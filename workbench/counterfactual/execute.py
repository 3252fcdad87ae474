"""Run a seed-000 study on the shared engine: plan, answers (stage 1), paraphrases (stage 2).

Per model: stage 1 asks the original, targeted and fixed-sentence prompts k times each;
stage 2 first sizes and writes each unit's token-adjusted paraphrase with that model's
tokenizer (the paraphraser model generating, measure-and-retry) and then asks it k times.
Everything is content-addressed and stored as it finishes, so a killed study resumes and a
finished one generates nothing new when run again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sqlite_utils

from workbench.engine import AuditEngine, Stage, StudyContext, run_staged
from workbench.engine.events import AuditEvent
from workbench.counterfactual.paraphrase import plan_paraphrases
from workbench.counterfactual.plan import create_study, study_request
from workbench.counterfactual.spec import ROLES, StudySpec

ROLE_BLOCK: dict[str, str] = {role: role for role in ROLES}
"""Progress block of each study role (one bar per role)."""


@dataclass(frozen=True)
class StudyOutcome:
    """What `run_study` did (`generated` counts the paraphraser's attempts too)."""

    study: str
    study_id: int
    generated: int
    job_counts: dict[str, int]
    elapsed_s: float
    stopped: bool


def study_stages() -> list[Stage]:
    """Stage 1 (original, target, fixed sentence), then stage 2 (paraphrase, planned on the
    model's own tokenizer right before it runs)."""
    return [Stage("answers", 1, study_request),
            Stage("paraphrase", 2, study_request, plan=plan_paraphrases)]


def run_study(db: sqlite_utils.Database, spec: StudySpec, *, engine: AuditEngine | None = None,
              on_event: Callable[[AuditEvent], None] | None = None,
              should_stop: Callable[[], bool] | None = None) -> StudyOutcome:
    """Plan (or find) the study and generate everything still missing.

    Args:
        db: the store.
        spec: the study's settings.
        engine: the runners (default: llama.cpp on the idle cores).
        on_event: receives the engine's events (and the paraphraser's runner events).
        should_stop: polled before each generation; True stops cleanly (resumable).

    Returns:
        What was generated now and the study's job counts.
    """
    owns_engine = engine is None
    engine = engine or AuditEngine(db)
    try:
        plan = create_study(db, spec, engine.runner)
        ctx = StudyContext(db, plan.audit, plan.arms, dict(plan.models),
                           {item.id or 0: item for item in plan.items}, engine)
        staged = run_staged(ctx, study_stages(), command="study", role_block=ROLE_BLOCK,
                            blocks=ROLES, on_event=on_event, should_stop=should_stop)
    finally:
        if owns_engine:
            engine.close()
    generated = staged.generated + int(ctx.cache.get("paraphrase_generated", 0))
    return StudyOutcome(staged.audit, staged.audit_id, generated, staged.job_counts,
                        staged.elapsed_s, staged.stopped)
