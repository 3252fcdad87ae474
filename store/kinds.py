"""Kinds of planned work in `audits` (`audits.kind`): what the m004 CHECK allows.

What the application does with each kind (its planner, report, progress blocks, resumer,
`paw report` flag) is registered once in `workbench/kinds.py`; a test checks that registry
against `Kind`, `AUDIT_KINDS` and the CHECK in a migrated store.
"""

from __future__ import annotations

from enum import StrEnum


class Kind(StrEnum):
    """Kinds of planned work in `audits`: the seed-002 audit, `paw run`, the seed-000 study,
    a DBPA analysis (seed 001) and the seed-003 robustness tests. All share arms, jobs, the
    runner and the generations; the kind picks the planner and the report. Members compare
    equal to the stored strings."""

    AUDIT = "audit"
    RUN = "run"
    STUDY = "study"
    DBPA = "dbpa"
    ROBUSTNESS = "robustness"


AUDIT_KINDS: tuple[str, ...] = tuple(Kind)
"""The values the `audits.kind` CHECK allows (m004), in `Kind`'s order."""
