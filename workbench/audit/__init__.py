"""Planned work on the runner: the staged job engine (every kind), and the seed-002 audit on it."""

from workbench.audit.engine import (
    Progress,
    Stage,
    StagedOutcome,
    StudyContext,
    run_job_batch,
    run_staged,
)

from workbench.audit.events import (
    AuditEvent,
    AuditFinished,
    AuditPlanned,
    BlockProgress,
    JudgeFinished,
    RunnerProgress,
    StageStarted,
)
from workbench.audit.engine import AuditEngine
from workbench.audit.execute import AuditOutcome, run_audit
from workbench.audit.judge import JudgeOutcome, judge_audit, judge_method
from workbench.audit.plan import Plan, create_plan, load_plan, plan_fblock
from workbench.audit.spec import (
    BLOCKS,
    SHUFFLE_OPERATOR,
    AuditSpec,
    resolve_operators,
    resolve_templates,
)

__all__ = [
    "BLOCKS",
    "SHUFFLE_OPERATOR",
    "AuditEngine",
    "AuditEvent",
    "AuditFinished",
    "AuditOutcome",
    "AuditPlanned",
    "AuditSpec",
    "BlockProgress",
    "JudgeFinished",
    "JudgeOutcome",
    "Plan",
    "Progress",
    "RunnerProgress",
    "Stage",
    "StageStarted",
    "StagedOutcome",
    "StudyContext",
    "create_plan",
    "judge_audit",
    "judge_method",
    "load_plan",
    "plan_fblock",
    "resolve_operators",
    "resolve_templates",
    "run_audit",
    "run_job_batch",
    "run_staged",
]
