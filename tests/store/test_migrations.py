"""The migrated schema: tables, pragmas, idempotent migration, unique content keys."""

from __future__ import annotations

import sqlite3

import pytest

from store import open_db
from store.migrations import MIGRATIONS, applied

EXPECTED_TABLES = {
    "_migrations", "datasets", "items", "models", "audits", "arms", "variants",
    "generations", "jobs", "sessions", "embeddings", "judgements", "people",
    "annotation_sets", "annotation_cases", "annotation_orders", "annotation_sessions",
    "label_events", "adjudications",
}


def test_every_migration_applied_and_recorded(db):
    assert applied(db) == [m.__name__ for m in MIGRATIONS]
    assert EXPECTED_TABLES <= set(db.table_names())


def test_generation_columns(db):
    cols = {c.name for c in db["generations"].columns}
    assert {"key", "model_id", "mode", "prompt", "sampler_json", "seed", "answer",
            "parse_status", "option_probs_json", "option_logits_json", "tokens_in",
            "tokens_out", "latency_s"} <= cols


def test_pragmas_on_disk(db_path):
    db = open_db(db_path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000


def test_reopen_applies_nothing_new(db_path):
    from store.migrations import migrate

    db = open_db(db_path)
    assert migrate(db) == []
    assert len(applied(db)) == len(MIGRATIONS)


def test_generation_key_is_unique(db):
    db["models"].insert({"name": "m", "path": "/x.gguf", "sha256": "0" * 64,
                         "created_at": "t"})
    row = {"key": "k1", "model_id": 1, "mode": "cot", "template": "neutral_cot@1",
           "prompt": "p", "sampler_json": "{}", "parse_status": "ok", "created_at": "t"}
    db["generations"].insert(row)
    with pytest.raises(sqlite3.IntegrityError):
        db["generations"].insert(row)


def test_foreign_keys_enforced(db):
    with pytest.raises(sqlite3.IntegrityError):
        db["items"].insert({"dataset_id": 99, "source_id": "x", "kind": "mcq",
                            "question": "q", "options_json": "{}", "gold": "A"})


def test_not_a_database_is_a_user_error(tmp_path):
    from store.errors import UserError

    bogus = tmp_path / "notes.db"
    bogus.write_bytes(b"this is not sqlite at all, just some text" * 10)
    with pytest.raises(UserError, match="notes.db"):
        open_db(bogus)


def test_a_job_without_variant_cannot_be_planned_twice(db):
    db["datasets"].insert({"name": "d", "format": "jsonl", "created_at": "t"})
    db["items"].insert({"dataset_id": 1, "source_id": "x", "kind": "mcq", "question": "q",
                        "options_json": "{}", "gold": "A"})
    db["models"].insert({"name": "m", "path": "/x.gguf", "sha256": "0" * 64, "created_at": "t"})
    db["audits"].insert({"name": "a", "dataset_id": 1, "config_json": "{}", "created_at": "t"})
    db["arms"].insert({"audit_id": 1, "label": "m", "model_id": 1, "template": "t@1"})
    job = {"audit_id": 1, "arm_id": 1, "item_id": 1, "role": "baseline"}
    db["jobs"].insert(job)
    # variant_id is NULL on both rows: m001's UNIQUE alone would let this through.
    with pytest.raises(sqlite3.IntegrityError):
        db["jobs"].insert(job)


def test_user_version_counts_the_migrations(db_path):
    from store.db import SCHEMA_VERSION

    db = open_db(db_path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == len(MIGRATIONS)
    # A file from before user_version was kept (0) gets it on the next open.
    db.execute("PRAGMA user_version = 0")
    db.conn.close()
    assert open_db(db_path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
