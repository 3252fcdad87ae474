"""Opening the one SQLite file: pragmas (WAL, busy timeout, foreign keys) and migrations."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import sqlite_utils

from store.errors import UserError
from store.migrations import migrate

DEFAULT_DB = "paw.db"
"""Database file used when neither `--db` nor `PAW_DB` is given."""

BUSY_TIMEOUT_MS = 30_000
"""How long a writer waits for another process's write lock before failing."""


def default_db_path() -> str:
    """The database path from `PAW_DB`, else `./paw.db`."""
    return os.environ.get("PAW_DB") or DEFAULT_DB


def utcnow() -> str:
    """Current UTC time as ISO-8601 with microseconds (sortable text)."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def dumps(value: Any) -> str:
    """Canonical JSON for storage and hashing: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def dumps_ordered(value: Any) -> str:
    """Compact JSON that keeps mapping order (answer options are shown in stored order)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def loads(text: str | None) -> Any:
    """Inverse of `dumps`; `None` stays `None`."""
    return None if text is None else json.loads(text)


def connect(path: str | Path) -> sqlite3.Connection:
    """A raw connection with the project's pragmas; autocommit mode (isolation_level=None).

    Autocommit means every statement outside an explicit `BEGIN` is its own
    transaction, which is what makes each stored generation or label durable at once.
    """
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                           check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    if str(path) != ":memory:":
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode.lower() != "wal":
            raise UserError(f"{path}: could not switch the database to WAL mode (got {mode!r})")
        # NORMAL is durable across application crashes in WAL mode (only an OS crash or
        # power cut can lose the last transactions); FULL also survives those.
        conn.execute("PRAGMA synchronous = FULL")
    return conn


def open_db(path: str | Path | None = None, *, memory: bool = False) -> sqlite_utils.Database:
    """Open (creating if needed) the store and bring its schema up to date.

    Args:
        path: the SQLite file; `None` means `PAW_DB` or `./paw.db`.
        memory: an in-memory database, for fast tests.

    Returns:
        A `sqlite_utils.Database` whose connection has WAL, a busy timeout and foreign
        keys on, with every migration applied.

    Raises:
        UserError: the file exists but is not a SQLite database.
    """
    if memory:
        conn = connect(":memory:")
        where = ":memory:"
    else:
        where = str(path if path is not None else default_db_path())
        parent = Path(where).expanduser().resolve().parent
        if not parent.is_dir():
            raise UserError(f"{where}: folder {parent} does not exist")
        try:
            conn = connect(where)
        except sqlite3.DatabaseError as exc:
            raise UserError(f"{where}: not a PAW database (SQLite said: {exc})") from None
    db = sqlite_utils.Database(conn)
    try:
        migrate(db)
    except sqlite3.DatabaseError as exc:
        raise UserError(f"{where}: not a PAW database (SQLite said: {exc})") from None
    return db


@contextmanager
def transaction(db: sqlite_utils.Database) -> Iterator[sqlite3.Connection]:
    """`BEGIN IMMEDIATE` … `COMMIT` on the database's connection (rollback on error).

    IMMEDIATE takes the write lock up front, so two processes never both read and
    then fail to upgrade (the usual source of "database is locked").
    """
    conn = db.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")
