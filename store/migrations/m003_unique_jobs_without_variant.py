"""Migration m003: one job per slot even when its variant is NULL (a unique index)."""

from __future__ import annotations

import sqlite_utils


def m003_unique_jobs_without_variant(db: sqlite_utils.Database) -> None:
    """Jobs: one per (audit, arm, item, role, variant, sample) even when variant is NULL.

    SQLite treats NULLs as distinct in UNIQUE constraints, so m001's constraint let two
    `baseline` jobs (variant NULL) coexist; this index closes that gap in the schema itself.
    """
    db.executescript(
        """
        CREATE UNIQUE INDEX idx_jobs_unique_slot ON jobs(
            audit_id, arm_id, item_id, role, IFNULL(variant_id, -1), sample_index);
        """
    )
