"""Migration m010: rater files (a rater's own blinded file, packed and merged back)."""

from __future__ import annotations

import sqlite_utils


def m010_rater_files(db: sqlite_utils.Database) -> None:
    """`rater_files`: one row per file packed for a rater (`paw annotate pack`), with the
    statement the coordinator signed (its case list and digests); `merged_events`: which
    event of which file became which label event (`paw annotate merge`), so a file merged
    twice adds nothing. See annotate/raterfile/file.py and annotate/raterfile/merge.py.
    """
    db.executescript(
        """
        CREATE TABLE rater_files (
            id INTEGER PRIMARY KEY,
            file_id TEXT NOT NULL UNIQUE,
            set_id INTEGER NOT NULL REFERENCES annotation_sets(id),
            person_id INTEGER NOT NULL REFERENCES people(id),
            packed_by INTEGER NOT NULL REFERENCES people(id),
            packed_at TEXT NOT NULL,
            statement_json TEXT NOT NULL
        );
        CREATE TABLE merged_events (
            file_id TEXT NOT NULL REFERENCES rater_files(file_id),
            seq INTEGER NOT NULL,
            label_event_id INTEGER NOT NULL UNIQUE REFERENCES label_events(id),
            PRIMARY KEY (file_id, seq)
        );
        """
    )
