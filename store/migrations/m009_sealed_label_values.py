"""Migration m009: sealed label values (each person's X25519 key; an event's sealed form)."""

from __future__ import annotations

import sqlite_utils


def m009_sealed_label_values(db: sqlite_utils.Database) -> None:
    """Label values encrypted to the rater and the set's coordinator (annotate/trust/sealing.py).

    `people.box_public_key` is the X25519 public key sealed values are encrypted to (its
    private half is derived from the person's signing key); `label_events.sealed_json`
    holds an event's field and value sealed, with `field` '*' and `value` NULL in the row.
    Events written before m009 keep their field and value in clear.
    """
    db.executescript(
        """
        ALTER TABLE people ADD COLUMN box_public_key BLOB;
        ALTER TABLE label_events ADD COLUMN sealed_json TEXT;
        """
    )
