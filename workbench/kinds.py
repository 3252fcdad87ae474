"""How to continue a stored run of each kind: one resume function per `audits.kind`.

The UI's Runs screen resumes an interrupted run, whatever its kind, through `resume_run`;
a new kind of study adds one line to `RESUMERS` ("module:function", imported when used).
Every resumer has the signature `resume(db, audit_id, *, engine, on_event, should_stop)`
and runs what the stored plan still misses (nothing, when it is complete).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite_utils

    from workbench.audit.engine import AuditEngine

RESUMERS: dict[str, str] = {
    "audit": "workbench.audit.execute:resume_audit",
    "dbpa": "workbench.dbpa.execute:resume_dbpa",
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
