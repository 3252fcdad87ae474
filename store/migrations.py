"""Schema migrations: named functions, applied in order on open, recorded in `_migrations`.

Add a migration by appending a new `mNNN_description(db)` function to `MIGRATIONS`; never
edit one that has shipped. `docs/schema.md` documents every table and column.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

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


def m002_label_event_undo(db: sqlite_utils.Database) -> None:
    """Label events: `undoes_id` marks an undo (the event it reverts), so undo can step back."""
    db.executescript(
        """
        ALTER TABLE label_events ADD COLUMN undoes_id INTEGER REFERENCES label_events(id);
        CREATE INDEX idx_label_events_session ON label_events(session_id, person_id);
        """
    )


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


AUDIT_KINDS: tuple[str, ...] = ("audit", "run", "study", "dbpa", "robustness")
"""Kinds of planned work in `audits`: the seed-002 audit, `paw run`, the seed-000 study,
a DBPA analysis (seed 001) and the seed-003 robustness tests. All share arms, jobs, the
runner and the generations; the kind picks the planner and the report."""


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


def m005_signed_annotation_record(db: sqlite_utils.Database) -> None:
    """Annotation audit trail: signing keys per person, the named rater pair of a set, and
    `record_log`, the hash-chained, signed log of everything that decides a result.

    `people` gains the scrypt cost of its hash (`kdf_json`; NULL = the m001 cost), an
    Ed25519 public key, the private key sealed under the passphrase (`wrapped_key`) and
    who registered the person. `annotation_sets` gains its two raters and the coordinator
    who named them. See docs/annotation.md (trust model) and annotate/record.py.
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


def m008_jobs_index_with_key(db: sqlite_utils.Database) -> None:
    """Jobs: the (audit, status) index also carries the generation key.

    `store.runs` counts each run's distinct generations on every listing (the UI's Runs
    screen, `paw audits`); without the key in the index that count read every job row:
    100 ms for one audit of 54,000 jobs. The wider index answers the same (audit, status)
    lookups as the one it replaces.
    """
    db.executescript(
        """
        CREATE INDEX idx_jobs_audit_key ON jobs(audit_id, status, generation_key);
        DROP INDEX idx_jobs_audit;
        """
    )


Migration = Callable[[sqlite_utils.Database], None]

MIGRATIONS: list[Migration] = [
    m001_initial,
    m002_label_event_undo,
    m003_unique_jobs_without_variant,
    m004_study_kinds_and_session_liveness,
    m005_signed_annotation_record,
    m006_text_embeddings_and_dbpa_tests,
    m007_flip_index,
    m008_jobs_index_with_key,
]


def applied(db: sqlite_utils.Database) -> list[str]:
    """Names of the migrations already recorded in the database, in order applied."""
    if "_migrations" not in db.table_names():
        return []
    return [row["name"] for row in db.query("SELECT name FROM _migrations ORDER BY id")]


def migrate(db: sqlite_utils.Database) -> list[str]:
    """Apply every migration not yet recorded; returns the names applied now.

    Each migration runs in its own transaction together with its record, so a crash
    mid-migration leaves the database at the previous version.
    """
    db.execute(
        "CREATE TABLE IF NOT EXISTS _migrations ("
        "id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at TEXT NOT NULL)"
    )
    done = set(applied(db))
    now_applied: list[str] = []
    for version, migration in enumerate(MIGRATIONS, start=1):
        name = migration.__name__
        if name in done:
            continue
        conn = db.conn
        # A migration that rebuilds a referenced table runs with foreign keys off (the
        # pragma is a no-op inside a transaction, so it is switched before BEGIN) and
        # must leave no dangling reference: checked before COMMIT.
        keys_off = bool(getattr(migration, "foreign_keys_off", False))
        if keys_off:
            conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("BEGIN IMMEDIATE")
        try:
            # executescript would COMMIT the open transaction, so run statements one by one.
            _run_in_transaction(db, migration)
            if keys_off and conn.execute("PRAGMA foreign_key_check").fetchone() is not None:
                raise RuntimeError(f"migration {name} left dangling foreign keys")
            conn.execute(
                "INSERT INTO _migrations (name, applied_at) VALUES (?, ?)",
                (name, datetime.now(timezone.utc).isoformat(timespec="seconds")),
            )
            # user_version = number of migrations applied: an older PAW reading a newer
            # file refuses it before writing (store.db.check_schema_version).
            conn.execute(f"PRAGMA user_version = {version}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # SQLite may have rolled back already (disk full)
                conn.execute("ROLLBACK")
            raise
        finally:
            if keys_off:
                conn.execute("PRAGMA foreign_keys = ON")
        now_applied.append(name)
    if db.execute("PRAGMA user_version").fetchone()[0] < len(MIGRATIONS):
        db.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")  # files from before m005
    return now_applied


class _TransactionalDatabase:
    """Adapter so migrations can call `executescript` inside one open transaction."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        self._db = db

    def executescript(self, script: str) -> None:
        import sqlite3

        statement = ""
        for line in script.splitlines(keepends=True):
            statement += line
            if sqlite3.complete_statement(statement):
                self._db.conn.execute(statement)
                statement = ""
        if statement.strip():
            raise ValueError(f"incomplete SQL statement in migration: {statement!r}")

    def execute(self, sql: str, params: tuple | list = ()) -> None:
        self._db.conn.execute(sql, params)

    def __getattr__(self, name: str):
        return getattr(self._db, name)


def _run_in_transaction(db: sqlite_utils.Database, migration: Migration) -> None:
    migration(_TransactionalDatabase(db))  # type: ignore[arg-type]
