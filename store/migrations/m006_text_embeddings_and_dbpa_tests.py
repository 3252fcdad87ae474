"""Migration m006: `text_embeddings` (keyed by text) and `dbpa_tests` (DBPA permutation tests)."""

from __future__ import annotations

import sqlite_utils


def m006_text_embeddings_and_dbpa_tests(db: sqlite_utils.Database) -> None:
    """Embeddings keyed by text, not generation; stored DBPA permutation-test results.

    `text_embeddings` holds one L2-normalised float32 vector per (embedder, embedder
    version, sha256 of the text), so a text is embedded once per embedder whatever
    generation, run or analysis it came from (`workbench.embed.embed_texts`). `dbpa_tests`
    holds one seed-001 permutation test per (run, item, condition pair, perturbation,
    embedder, distance): what `paw dbpa` computed and the DBPA report reads.
    """
    db.executescript(
        """
        CREATE TABLE text_embeddings (
            id INTEGER PRIMARY KEY,
            embedder TEXT NOT NULL,
            version TEXT NOT NULL,
            text_sha256 TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL,
            created_at TEXT NOT NULL,
            UNIQUE (embedder, version, text_sha256)
        );
        CREATE TABLE dbpa_tests (
            id INTEGER PRIMARY KEY,
            audit_id INTEGER NOT NULL REFERENCES audits(id),
            case_study TEXT NOT NULL,
            item_id INTEGER NOT NULL REFERENCES items(id),
            baseline_arm_id INTEGER NOT NULL REFERENCES arms(id),
            perturbed_arm_id INTEGER NOT NULL REFERENCES arms(id),
            perturbation TEXT NOT NULL,
            variant_id INTEGER REFERENCES variants(id),
            embedder TEXT NOT NULL,
            embedder_version TEXT NOT NULL,
            distance TEXT NOT NULL,
            n_baseline INTEGER NOT NULL,
            n_perturbed INTEGER NOT NULL,
            permutations INTEGER NOT NULL,
            permutation_seed INTEGER NOT NULL,
            effect_size REAL,
            p_value REAL,
            n_at_least INTEGER,
            status TEXT NOT NULL,
            note TEXT,
            generation_ids_json TEXT NOT NULL,
            created_at TEXT NOT NULL,
            UNIQUE (audit_id, item_id, baseline_arm_id, perturbed_arm_id, perturbation,
                    embedder, distance)
        );
        CREATE INDEX idx_dbpa_tests_audit ON dbpa_tests(audit_id, embedder, distance);
        """
    )
