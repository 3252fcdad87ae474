"""Migration m001: the first schema (data, models, plans, generations, judgements, annotation)."""

from __future__ import annotations

import sqlite_utils


def m001_initial(db: sqlite_utils.Database) -> None:
    """The whole product's schema: data, models, plans, generations, judgements, annotation."""
    db.executescript(
        """
        CREATE TABLE datasets (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            format TEXT NOT NULL,
            source_path TEXT,
            source_sha256 TEXT,
            created_at TEXT NOT NULL
        );

        CREATE TABLE items (
            id INTEGER PRIMARY KEY,
            dataset_id INTEGER NOT NULL REFERENCES datasets(id),
            source_id TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('mcq', 'binary')),
            question TEXT NOT NULL,
            context TEXT,
            options_json TEXT NOT NULL,
            gold TEXT NOT NULL,
            subject TEXT,
            meta_json TEXT,
            source_line INTEGER,
            UNIQUE (dataset_id, source_id)
        );
        CREATE INDEX idx_items_dataset ON items(dataset_id);

        CREATE TABLE models (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            backend TEXT NOT NULL DEFAULT 'llama_cpp',
            path TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            size_bytes INTEGER,
            architecture TEXT,
            quantization TEXT,
            context_length INTEGER,
            chat_template TEXT,
            prefix_cache_safe INTEGER NOT NULL DEFAULT 1,
            metadata_json TEXT,
            created_at TEXT NOT NULL
        );

        CREATE TABLE audits (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL DEFAULT 'audit' CHECK (kind IN ('audit', 'run')),
            dataset_id INTEGER NOT NULL REFERENCES datasets(id),
            config_json TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'planned',
            created_at TEXT NOT NULL
        );

        CREATE TABLE arms (
            id INTEGER PRIMARY KEY,
            audit_id INTEGER NOT NULL REFERENCES audits(id),
            label TEXT NOT NULL,
            model_id INTEGER NOT NULL REFERENCES models(id),
            template TEXT NOT NULL,
            UNIQUE (audit_id, label)
        );

        CREATE TABLE variants (
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL UNIQUE,
            item_id INTEGER NOT NULL REFERENCES items(id),
            operator_id TEXT NOT NULL,
            family TEXT NOT NULL,
            intent TEXT,
            locus TEXT,
            target TEXT NOT NULL CHECK (target IN ('question', 'chain', 'options', 'prompt')),
            seed INTEGER NOT NULL,
            source_generation_id INTEGER REFERENCES generations(id),
            fired INTEGER NOT NULL,
            reason TEXT,
            text TEXT,
            options_json TEXT,
            gold TEXT,
            old TEXT,
            new TEXT,
            token_change_fraction REAL,
            details_json TEXT,
            created_at TEXT NOT NULL
        );
        CREATE INDEX idx_variants_item ON variants(item_id, operator_id);

        CREATE TABLE generations (
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL UNIQUE,
            model_id INTEGER NOT NULL REFERENCES models(id),
            item_id INTEGER REFERENCES items(id),
            variant_id INTEGER REFERENCES variants(id),
            mode TEXT NOT NULL,
            template TEXT NOT NULL,
            prompt TEXT NOT NULL,
            prefix TEXT,
            prefix_token_ids_json TEXT,
            sampler_json TEXT NOT NULL,
            seed INTEGER,
            labels_json TEXT,
            output TEXT,
            output_token_ids_json TEXT,
            answer TEXT,
            parse_status TEXT NOT NULL,
            option_probs_json TEXT,
            option_logits_json TEXT,
            tokens_in INTEGER,
            tokens_out INTEGER,
            latency_s REAL,
            finish_reason TEXT,
            error TEXT,
            created_at TEXT NOT NULL
        );
        CREATE INDEX idx_generations_item ON generations(item_id, model_id);
        CREATE INDEX idx_generations_variant ON generations(variant_id);

        CREATE TABLE jobs (
            id INTEGER PRIMARY KEY,
            audit_id INTEGER NOT NULL REFERENCES audits(id),
            arm_id INTEGER NOT NULL REFERENCES arms(id),
            item_id INTEGER NOT NULL REFERENCES items(id),
            variant_id INTEGER REFERENCES variants(id),
            role TEXT NOT NULL,
            stage INTEGER NOT NULL DEFAULT 1,
            sample_index INTEGER NOT NULL DEFAULT 0,
            seed INTEGER,
            generation_key TEXT,
            status TEXT NOT NULL DEFAULT 'pending',
            UNIQUE (audit_id, arm_id, item_id, role, variant_id, sample_index)
        );
        CREATE INDEX idx_jobs_audit ON jobs(audit_id, status);
        CREATE INDEX idx_jobs_key ON jobs(generation_key);

        CREATE TABLE sessions (
            id INTEGER PRIMARY KEY,
            audit_id INTEGER REFERENCES audits(id),
            command TEXT NOT NULL,
            settings_json TEXT,
            versions_json TEXT,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            status TEXT NOT NULL DEFAULT 'running',
            n_generated INTEGER NOT NULL DEFAULT 0
        );

        CREATE TABLE embeddings (
            id INTEGER PRIMARY KEY,
            generation_id INTEGER NOT NULL REFERENCES generations(id),
            embedder TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL,
            created_at TEXT NOT NULL,
            UNIQUE (generation_id, embedder)
        );

        CREATE TABLE judgements (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,
            method TEXT NOT NULL,
            subject_generation_id INTEGER NOT NULL REFERENCES generations(id),
            variant_id INTEGER REFERENCES variants(id),
            judge_generation_id INTEGER REFERENCES generations(id),
            verdict TEXT,
            evidence TEXT,
            created_at TEXT NOT NULL,
            UNIQUE (kind, method, subject_generation_id)
        );

        CREATE TABLE people (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            role TEXT NOT NULL CHECK (role IN ('rater', 'coordinator')),
            pass_salt BLOB NOT NULL,
            pass_hash BLOB NOT NULL,
            created_at TEXT NOT NULL
        );

        CREATE TABLE annotation_sets (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            audit_id INTEGER REFERENCES audits(id),
            config_json TEXT NOT NULL,
            codebook_version TEXT NOT NULL,
            created_at TEXT NOT NULL
        );

        CREATE TABLE annotation_cases (
            id INTEGER PRIMARY KEY,
            set_id INTEGER NOT NULL REFERENCES annotation_sets(id),
            code TEXT NOT NULL UNIQUE,
            variant_id INTEGER NOT NULL REFERENCES variants(id),
            baseline_generation_id INTEGER REFERENCES generations(id),
            perturbed_generation_id INTEGER REFERENCES generations(id),
            stratum TEXT NOT NULL,
            ask_harm INTEGER NOT NULL DEFAULT 0,
            ask_chain_registration INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX idx_cases_set ON annotation_cases(set_id);

        CREATE TABLE annotation_orders (
            set_id INTEGER NOT NULL REFERENCES annotation_sets(id),
            person_id INTEGER NOT NULL REFERENCES people(id),
            case_id INTEGER NOT NULL REFERENCES annotation_cases(id),
            position INTEGER NOT NULL,
            PRIMARY KEY (set_id, person_id, case_id)
        );

        CREATE TABLE annotation_sessions (
            id INTEGER PRIMARY KEY,
            person_id INTEGER NOT NULL REFERENCES people(id),
            set_id INTEGER REFERENCES annotation_sets(id),
            started_at TEXT NOT NULL,
            app_version TEXT NOT NULL,
            host TEXT,
            pid INTEGER
        );

        CREATE TABLE label_events (
            id INTEGER PRIMARY KEY,
            case_id INTEGER NOT NULL REFERENCES annotation_cases(id),
            person_id INTEGER NOT NULL REFERENCES people(id),
            session_id INTEGER REFERENCES annotation_sessions(id),
            field TEXT NOT NULL,
            value TEXT,
            supersedes_id INTEGER REFERENCES label_events(id),
            time_on_item_ms INTEGER,
            app_version TEXT NOT NULL,
            codebook_version TEXT NOT NULL,
            created_at TEXT NOT NULL,
            prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL UNIQUE
        );
        CREATE INDEX idx_label_events_case ON label_events(case_id, person_id, field);

        CREATE TABLE adjudications (
            id INTEGER PRIMARY KEY,
            case_id INTEGER NOT NULL REFERENCES annotation_cases(id),
            field TEXT NOT NULL,
            value TEXT,
            source TEXT NOT NULL CHECK (source IN ('unanimous', 'adjudicated')),
            reason TEXT,
            person_id INTEGER REFERENCES people(id),
            created_at TEXT NOT NULL
        );
        CREATE INDEX idx_adjudications_case ON adjudications(case_id, field);
        """
    )
