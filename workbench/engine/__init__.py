"""The staged job engine every kind of run plans and runs on: runners, stages, events, variants.

`workbench/audit` (seed 002), `counterfactual` (000), `dbpa` (001) and `robustness` (003)
each write a planner and their `Stage`s and call `run_staged`; what they share lives here,
below all four (import-linter's `workbench papers` contract keeps them apart).
"""

from workbench.engine.events import (
    AuditEvent,
    AuditFinished,
    AuditPlanned,
    BlockProgress,
    JudgeFinished,
    RunnerProgress,
    StageStarted,
)
from workbench.engine.plans import Plan, arm_label, resolve_templates, select_items
from workbench.engine.progress import Progress
from workbench.engine.runners import AuditEngine
from workbench.engine.staged import (
    Stage,
    StagedOutcome,
    StudyContext,
    run_job_batch,
    run_staged,
)
from workbench.engine.variants import Variant, get_variant, question_variant

__all__ = [
    "AuditEngine",
    "AuditEvent",
    "AuditFinished",
    "AuditPlanned",
    "BlockProgress",
    "JudgeFinished",
    "Plan",
    "Progress",
    "RunnerProgress",
    "Stage",
    "StageStarted",
    "StagedOutcome",
    "StudyContext",
    "Variant",
    "arm_label",
    "get_variant",
    "question_variant",
    "resolve_templates",
    "run_job_batch",
    "run_staged",
    "select_items",
]
