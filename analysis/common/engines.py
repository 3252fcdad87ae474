"""Which engines made a run's generations, per arm, with counts (issue 36.2).

Every generation records its engine (`generations.engine`, migration m013): the in-process
llama-cpp-python build and device, or a pool's kind, build and slot mode. One audit is
meant to run on one engine; where a user allowed a mix (`--allow-mixed-engines`), every
report states it with `engine_mix_line`.
"""

from __future__ import annotations

import sqlite_utils

UNRECORDED = "unrecorded (stored before m013)"
"""How a generation without a recorded engine is counted."""


def engine_counts(db: sqlite_utils.Database, audit_id: int) -> dict[str, dict[str, int]]:
    """arm label -> engine -> generations of that arm's done jobs made on it."""
    rows = db.execute(
        "SELECT a.label, g.engine, COUNT(*) FROM jobs j JOIN arms a ON a.id = j.arm_id "
        "JOIN generations g ON g.key = j.generation_key "
        "WHERE j.audit_id = ? AND j.status = 'done' GROUP BY a.id, g.engine "
        "ORDER BY a.id, g.engine", [audit_id]).fetchall()
    counts: dict[str, dict[str, int]] = {}
    for label, engine, n in rows:
        counts.setdefault(str(label), {})[engine or UNRECORDED] = int(n)
    return counts


def model_engines(db: sqlite_utils.Database, audit_id: int, model_id: int) -> set[str]:
    """The recorded engines of a model's generations among a run's done jobs."""
    rows = db.execute(
        "SELECT DISTINCT g.engine FROM jobs j JOIN generations g ON g.key = j.generation_key "
        "WHERE j.audit_id = ? AND j.status = 'done' AND g.model_id = ? "
        "AND g.engine IS NOT NULL", [audit_id, model_id]).fetchall()
    return {str(r[0]) for r in rows}


def engine_mix_line(db: sqlite_utils.Database, audit_id: int) -> str | None:
    """'arm: engine (n), engine (m); …' when the run's generations came from more than one
    recorded engine; None when they came from one (or none is recorded)."""
    counts = engine_counts(db, audit_id)
    engines = {e for per_arm in counts.values() for e in per_arm if e != UNRECORDED}
    if len(engines) <= 1:
        return None
    return "MIXED: " + "; ".join(
        f"{arm}: " + ", ".join(f"{engine} ({n})" for engine, n in per_arm.items())
        for arm, per_arm in counts.items())
