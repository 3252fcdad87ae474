"""Migration m005: people's signing keys, a set's named raters, and the signed `record_log`."""

from __future__ import annotations

import sqlite_utils


def m005_signed_annotation_record(db: sqlite_utils.Database) -> None:
    """Annotation audit trail: signing keys per person, the named rater pair of a set, and
    `record_log`, the hash-chained, signed log of everything that decides a result.

    `people` gains the scrypt cost of its hash (`kdf_json`; NULL = the m001 cost), an
    Ed25519 public key, the private key sealed under the passphrase (`wrapped_key`) and
    who registered the person. `annotation_sets` gains its two raters and the coordinator
    who named them. See docs/annotation.md (trust model) and annotate/trust/record.py.
    """
    db.executescript(
        """
        ALTER TABLE people ADD COLUMN kdf_json TEXT;
        ALTER TABLE people ADD COLUMN public_key BLOB;
        ALTER TABLE people ADD COLUMN wrapped_key BLOB;
        ALTER TABLE people ADD COLUMN registered_by INTEGER REFERENCES people(id);
        ALTER TABLE annotation_sets ADD COLUMN rater_a_id INTEGER REFERENCES people(id);
        ALTER TABLE annotation_sets ADD COLUMN rater_b_id INTEGER REFERENCES people(id);
        ALTER TABLE annotation_sets ADD COLUMN raters_named_by INTEGER REFERENCES people(id);
        CREATE TABLE record_log (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,
            ref_table TEXT NOT NULL,
            ref_id INTEGER NOT NULL,
            person_id INTEGER REFERENCES people(id),
            content_json TEXT NOT NULL,
            created_at TEXT NOT NULL,
            prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL UNIQUE,
            signature BLOB
        );
        CREATE INDEX idx_record_log_ref ON record_log(ref_table, ref_id);
        """
    )
