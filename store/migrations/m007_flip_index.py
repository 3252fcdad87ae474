"""Migration m007: `flip_index`, the flip inspector's derived, rebuildable index."""

from __future__ import annotations

import sqlite_utils


def m007_flip_index(db: sqlite_utils.Database) -> None:
    """The flip inspector's index: one row per answered perturbed job, derived and rebuildable.

    `flip_index` holds what the flip list filters, counts and sorts on (flip, chain update
    by the token rule, JSD of the option distributions, operator tags), so `paw flips` and
    the UI's flip inspector page through 50,000 edits in SQL without reading chains.
    `analysis.flips.index.index_flips` fills it from `jobs`/`generations` as answers arrive; its
    rows can be deleted at any time (they are recomputed). Two indexes: (audit, flipped) walks
    a page in job order and stops after it; the covering one answers every filter's
    `COUNT(*)` without reading rows. `judgements` gains an index by subject, for the
    judge-verdict filter.
    """
    db.executescript(
        """
        CREATE TABLE flip_index (  -- a cache: no foreign keys (they cost 60% of its inserts)
            job_id INTEGER PRIMARY KEY,
            audit_id INTEGER NOT NULL,
            arm_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            variant_id INTEGER NOT NULL,
            role TEXT NOT NULL,
            family TEXT NOT NULL,
            operator_id TEXT NOT NULL,
            intent TEXT,
            generation_id INTEGER NOT NULL,
            base_generation_id INTEGER NOT NULL,
            generation_key TEXT NOT NULL,
            answer TEXT,
            base_answer TEXT,
            excluded TEXT,
            flipped INTEGER,
            chain_updated INTEGER,
            jsd REAL,
            search TEXT NOT NULL
        );
        CREATE INDEX idx_flip_index_page ON flip_index(audit_id, flipped);
        CREATE INDEX idx_flip_index_filters ON flip_index(audit_id, flipped, family,
            operator_id, intent, arm_id, role, chain_updated, jsd, generation_id);
        CREATE INDEX idx_judgements_subject ON judgements(subject_generation_id, kind);
        """
    )
