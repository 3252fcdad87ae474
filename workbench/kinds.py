"""What the application knows per kind of run (`audits.kind`): its progress blocks, its
`paw report` flag, and how to resume it.

`paw audits`, the UI's Runs screen and `paw report` read these tables; a new kind of study
adds one line to each ("module" or "module:function" strings, imported when used).
Every resumer has the signature `resume(db, audit_id, *, engine, on_event, should_stop)`
and runs what the stored plan still misses (nothing, when it is complete).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite_utils

    from workbench.engine import AuditEngine

KIND_BLOCKS: dict[str, str] = {
    "audit": "workbench.audit.spec",
    "run": "workbench.audit.spec",
    "study": "workbench.counterfactual.execute",
    "dbpa": "workbench.dbpa.spec",
    "robustness": "workbench.robustness.spec",
}
"""Module whose `ROLE_BLOCK` (and `BLOCKS`, the order) maps each kind's job roles to the
progress blocks its planner reports; a kind not listed shows its roles as blocks."""

REPORT_FLAG: dict[str, str] = {"audit": "--audit", "run": "--audit", "study": "--study",
                               "dbpa": "--dbpa", "robustness": "--robustness"}
"""`paw report` flag of each kind."""


def kind_blocks(kind: str) -> tuple[dict[str, str], tuple[str, ...]]:
    """(role -> block, block order) of a kind's planner (identity when unknown)."""
    import importlib

    name = KIND_BLOCKS.get(kind)
    if name is None:
        return {}, ()
    try:
        module = importlib.import_module(name)
    except ImportError:  # a kind whose package this install lacks: roles are shown as is
        return {}, ()
    return dict(getattr(module, "ROLE_BLOCK", {})), tuple(getattr(module, "BLOCKS", ()))


RESUMERS: dict[str, str] = {
    "audit": "workbench.audit.execute:resume_audit",
    "dbpa": "workbench.dbpa.execute:resume_dbpa",
    "robustness": "workbench.robustness.execute:resume_robustness",
}
"""Resume function of each kind of run."""


def can_resume(kind: str) -> bool:
    """Whether runs of `kind` can be resumed from the UI."""
    return kind in RESUMERS


def resume_run(db: sqlite_utils.Database, audit_id: int, kind: str, *, engine: AuditEngine,
               on_event: Callable[[Any], None] | None = None,
               should_stop: Callable[[], bool] | None = None) -> Any:
    """Continue a stored run of any kind.

    Raises:
        UserError: runs of that kind cannot be resumed here.
    """
    from store.errors import UserError

    target = RESUMERS.get(kind)
    if target is None:
        raise UserError(f"runs of kind {kind!r} cannot be resumed from here; run the command "
                        f"that created it again (known: {', '.join(sorted(RESUMERS))})")
    module, _, name = target.partition(":")
    resume = getattr(importlib.import_module(module), name)
    return resume(db, audit_id, engine=engine, on_event=on_event, should_stop=should_stop)
