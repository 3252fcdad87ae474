"""Kinds of planned work in `audits` (`audits.kind`): what the m004 CHECK allows."""

from __future__ import annotations

AUDIT_KINDS: tuple[str, ...] = ("audit", "run", "study", "dbpa", "robustness")
"""Kinds of planned work in `audits`: the seed-002 audit, `paw run`, the seed-000 study,
a DBPA analysis (seed 001) and the seed-003 robustness tests. All share arms, jobs, the
runner and the generations; the kind picks the planner and the report."""
