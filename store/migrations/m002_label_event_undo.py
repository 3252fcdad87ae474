"""Migration m002: `label_events.undoes_id`, so an undo is an event that names what it reverts."""

from __future__ import annotations

import sqlite_utils


def m002_label_event_undo(db: sqlite_utils.Database) -> None:
    """Label events: `undoes_id` marks an undo (the event it reverts), so undo can step back."""
    db.executescript(
        """
        ALTER TABLE label_events ADD COLUMN undoes_id INTEGER REFERENCES label_events(id);
        CREATE INDEX idx_label_events_session ON label_events(session_id, person_id);
        """
    )
