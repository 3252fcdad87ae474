"""Schema migrations: one module each, applied in order on open, recorded in `_migrations`.

Each migration is a module `store/migrations/mNNN_description.py` holding one function of
the same name; that name is what `_migrations` records, so it never changes. Add a
migration by adding such a module and appending its function to `MIGRATIONS`; never edit
one that has shipped. `docs/schema.md` documents every table and column.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import sqlite_utils

from store.migrations import (
    m001_initial,
    m002_label_event_undo,
    m003_unique_jobs_without_variant,
    m004_study_kinds_and_session_liveness,
    m005_signed_annotation_record,
    m006_text_embeddings_and_dbpa_tests,
    m007_flip_index,
    m008_jobs_index_with_key,
    m009_sealed_label_values,
    m010_rater_files,
    m011_dbpa_design_and_null,
    m012_power_runs,
    m013_generation_engine,
    m014_job_generation_link,
)

Migration = Callable[[sqlite_utils.Database], None]

MIGRATIONS: list[Migration] = [
    m001_initial.m001_initial,
    m002_label_event_undo.m002_label_event_undo,
    m003_unique_jobs_without_variant.m003_unique_jobs_without_variant,
    m004_study_kinds_and_session_liveness.m004_study_kinds_and_session_liveness,
    m005_signed_annotation_record.m005_signed_annotation_record,
    m006_text_embeddings_and_dbpa_tests.m006_text_embeddings_and_dbpa_tests,
    m007_flip_index.m007_flip_index,
    m008_jobs_index_with_key.m008_jobs_index_with_key,
    m009_sealed_label_values.m009_sealed_label_values,
    m010_rater_files.m010_rater_files,
    m011_dbpa_design_and_null.m011_dbpa_design_and_null,
    m012_power_runs.m012_power_runs,
    m013_generation_engine.m013_generation_engine,
    m014_job_generation_link.m014_job_generation_link,
]
"""Every migration, in the order applied (a migration's place is its schema version)."""


def applied(db: sqlite_utils.Database) -> list[str]:
    """Names of the migrations already recorded in the database, in order applied."""
    if "_migrations" not in db.table_names():
        return []
    return [row["name"] for row in db.query("SELECT name FROM _migrations ORDER BY id")]


def migrate(db: sqlite_utils.Database, where: str = "database") -> list[str]:
    """Apply every migration not yet recorded; returns the names applied now.

    Each migration runs in its own transaction together with its record, so a crash
    mid-migration leaves the database at the previous version.

    Raises:
        UserError: the record of applied migrations was damaged (a row of `_migrations`
            deleted while the schema is past it): running it again would fail on its own
            tables, so the file is refused, naming the migration.
    """
    db.execute(
        "CREATE TABLE IF NOT EXISTS _migrations ("
        "id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at TEXT NOT NULL)"
    )
    done = set(applied(db))
    _check_record(db, done, where)
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


def _check_record(db: sqlite_utils.Database, done: set[str], where: str) -> None:
    from store.errors import UserError

    version = db.execute("PRAGMA user_version").fetchone()[0]
    names = [m.__name__ for m in MIGRATIONS]
    latest = max((n for n, name in enumerate(names, start=1) if name in done), default=0)
    for number, name in enumerate(names, start=1):
        if name not in done and (number < latest or number <= version):
            raise UserError(f"{where}: damaged migration record: {name} (schema version "
                            f"{number}) is not in _migrations, though the schema is at "
                            f"version {max(latest, version)} — a row was deleted outside "
                            "PAW; nothing was changed (restore a copy made with `paw "
                            "backup`)")


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

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


def _run_in_transaction(db: sqlite_utils.Database, migration: Migration) -> None:
    migration(_TransactionalDatabase(db))  # type: ignore[arg-type]
