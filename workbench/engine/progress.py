"""Progress of a run per block, counted from the jobs table and emitted as `BlockProgress`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import sqlite_utils

from workbench.engine.events import AuditEvent, BlockProgress


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
