"""Migration m014: a declared foreign key from a job to the generation that answers it, so
Datasette (and any tool reading `PRAGMA foreign_key_list`) links `jobs` to `generations`."""

from __future__ import annotations

import sqlite_utils


def m014_job_generation_link(db: sqlite_utils.Database) -> None:
    """`jobs.done_generation_key`: `generation_key` once the job is done, else NULL; a
    virtual generated column (nothing stored, existing rows kept as they are) declared
    `REFERENCES generations(key)`.

    `generation_key` itself cannot carry the constraint: it is set when the job is planned,
    before its generation exists (a pending job's key names a generation still to come, and
    a not-fired job's none), so SQLite would refuse the plan. A done job's generation is
    always stored first (`store.jobs.sync_done`), so the constraint on the done column
    holds, and SQLite enforces it from now on.
    """
    db.executescript(
        """
        ALTER TABLE jobs ADD COLUMN done_generation_key TEXT
            GENERATED ALWAYS AS (CASE WHEN status = 'done' THEN generation_key END) VIRTUAL
            REFERENCES generations(key);
        """
    )
