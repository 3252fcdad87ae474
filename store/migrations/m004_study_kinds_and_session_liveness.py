"""Migration m004: audits of every study kind (`audits` rebuilt); sessions record their process."""

from __future__ import annotations

import sqlite_utils

from store.kinds import AUDIT_KINDS


def m004_study_kinds_and_session_liveness(db: sqlite_utils.Database) -> None:
    """Audits of every study kind (seeds 000, 001, 003); sessions record their process.

    SQLite cannot alter a CHECK constraint, so `audits` is rebuilt (the documented
    12-step procedure: this migration runs with foreign keys off, and `migrate` runs
    `PRAGMA foreign_key_check` before committing). `sessions` gains the pid and host of
    the process that works, and a heartbeat, so a session left 'running' by a killed
    process can be told apart from one still working (see `store.runs`).
    """
    kinds = ", ".join(f"'{kind}'" for kind in AUDIT_KINDS)
    db.executescript(
        f"""
        CREATE TABLE audits_new (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL DEFAULT 'audit' CHECK (kind IN ({kinds})),
            dataset_id INTEGER NOT NULL REFERENCES datasets(id),
            config_json TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'planned',
            created_at TEXT NOT NULL
        );
        INSERT INTO audits_new (id, name, kind, dataset_id, config_json, status, created_at)
            SELECT id, name, kind, dataset_id, config_json, status, created_at FROM audits;
        DROP TABLE audits;
        ALTER TABLE audits_new RENAME TO audits;
        CREATE INDEX idx_audits_kind ON audits(kind);
        ALTER TABLE sessions ADD COLUMN pid INTEGER;
        ALTER TABLE sessions ADD COLUMN host TEXT;
        ALTER TABLE sessions ADD COLUMN heartbeat_at TEXT;
        CREATE INDEX idx_sessions_audit ON sessions(audit_id, status);
        CREATE INDEX idx_jobs_audit_role ON jobs(audit_id, role, status);
        """
    )


m004_study_kinds_and_session_liveness.foreign_keys_off = True  # type: ignore[attr-defined]
