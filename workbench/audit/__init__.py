"""Seed 002's audit: its settings, plan (stage 1, the F-block on the arm's own chain), judge and
execution on the shared engine (`workbench.engine`)."""

from workbench.audit.execute import run_audit
from workbench.audit.judge import JudgeOutcome, judge_audit, judge_method
from workbench.audit.plan import create_plan, plan_fblock
from workbench.audit.spec import BLOCKS, AuditSpec

__all__ = [
    "BLOCKS",
    "AuditSpec",
    "JudgeOutcome",
    "create_plan",
    "judge_audit",
    "judge_method",
    "plan_fblock",
    "run_audit",
]
