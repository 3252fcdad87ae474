"""Opening the one SQLite file: pragmas (WAL, busy timeout, foreign keys) and migrations."""

from __future__ import annotations

import functools
import itertools
import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import sqlite_utils

from store.errors import UserError, is_link_loop, no_such
from store.integrity import check_integrity
from store.migrations import MIGRATIONS, migrate

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


LAST_OPENED: str | None = None
"""The database file this process opened last (named in messages about SQLite errors)."""

SCHEMA_VERSION = len(MIGRATIONS)
"""This PAW's schema version: the number of migrations it knows (stored as user_version)."""


def inserted_id(cursor: sqlite3.Cursor) -> int:
    """The rowid of the row an INSERT just added (the driver types it as possibly None,
    which it is only for a statement that inserted nothing)."""
    if cursor.lastrowid is None:
        raise sqlite3.InterfaceError("no row was inserted")
    return int(cursor.lastrowid)


def check_schema_version(conn: sqlite3.Connection, where: str) -> None:
    """Refuse a database written by a newer PAW, before anything is written to it.

    Raises:
        UserError: its user_version is above `SCHEMA_VERSION`, or it records a migration
            this PAW does not know.
    """
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    unknown: list[str] = []
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_migrations'"
                    ).fetchone():
        known = {m.__name__ for m in MIGRATIONS}
        unknown = [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY id")
                   if r[0] not in known]
    if version > SCHEMA_VERSION or unknown:
        theirs = max(version, SCHEMA_VERSION + len(unknown))
        extra = f", migration {unknown[0]}" if unknown else ""
        raise UserError(f"{where}: written by a newer PAW (schema version {theirs}{extra}); "
                        f"this PAW knows schema version {SCHEMA_VERSION}: upgrade PAW "
                        "(the file was not changed)")


RECORD_COLUMNS = frozenset({"content_json", "prev_hash", "hash", "kind", "ref_table",
                            "created_at", "signature", "value_sealed", "field", "value"})
"""Text columns of the signed record and the label events: bytes that are not UTF-8 in
them mean the record is damaged."""


def describe_sqlite_error(exc: sqlite3.Error, where: str | None = None) -> str:
    """One line naming the real cause of a SQLite failure (lock, read-only, full, missing).

    Args:
        exc: the error SQLite raised.
        where: the database file (default: the one opened last).
    """
    where = where or LAST_OPENED or "database"
    text = str(exc)
    folder = Path(where).expanduser().resolve().parent
    if "database is locked" in text or "database table is locked" in text:
        return (f"{where}: another process held the write lock longer than the "
                f"{BUSY_TIMEOUT_MS / 1000:g} s busy timeout; nothing was written by this "
                "step (try again when the other write has finished)")
    if "readonly database" in text or "unable to open database file" in text:
        if Path(where).exists() and not os.access(where, os.W_OK):
            return f"{where}: the database file is read-only (SQLite said: {text})"
        if folder.is_dir() and not os.access(folder, os.W_OK):
            return (f"{where}: folder {folder} is read-only; SQLite must create "
                    f"{Path(where).name}-wal and -shm beside the database (SQLite said: "
                    f"{text})")
        return f"{where}: cannot write the database (SQLite said: {text})"
    if "disk is full" in text or "database or disk is full" in text:
        return (f"{where}: the disk is full; nothing from the failed step was stored "
                "(free space and try again)")
    if text.startswith("no such table"):
        return (f"{where}: {text} — the file is damaged or was edited outside PAW (restore "
                "a copy made with `paw backup`)")
    if "disk I/O error" in text:
        # Opening needs room for the -wal and -shm files; with none left SQLite reports an
        # I/O error, not SQLITE_FULL.
        free = free_bytes(folder)
        if free is not None and free < LOW_DISK_BYTES:
            return (f"{where}: the disk is full ({free // 1024} KiB free in {folder}); "
                    "nothing was stored (free space and try again)")
        return f"{where}: disk I/O error (SQLite said: {text})"
    if text.startswith("Could not decode to UTF-8 column"):
        # Bytes that are not UTF-8 in a text column: written outside PAW (PAW stores text).
        column = text.split("'")[1] if text.count("'") >= 2 else "?"
        what = ("the annotation record is damaged" if column in RECORD_COLUMNS
                else "the database is damaged")
        return (f"{where}: {what}: a value of column {column!r} is not UTF-8 text (it was "
                "written outside PAW); nothing was changed (restore a copy made with `paw "
                "backup`)")
    if "file is not a database" in text or "malformed" in text:
        return f"{where}: not a PAW database or damaged (SQLite said: {text})"
    return f"{where}: SQLite error: {text}"


LOW_DISK_BYTES = 1 << 20
"""Below this much free space an I/O error at open is reported as a full disk."""


def free_bytes(folder: Path) -> int | None:
    """Free bytes on the file system of `folder` (None when it cannot be asked)."""
    import shutil

    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def connect(path: str | Path) -> sqlite3.Connection:
    """A raw connection with the project's pragmas; autocommit mode (isolation_level=None).

    Autocommit means every statement outside an explicit `BEGIN` is its own
    transaction, which is what makes each stored generation or label durable at once.

    Raises:
        UserError: the file was written by a newer PAW (checked before any write).
    """
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                           check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if str(path) != ":memory:":
        try:
            check_schema_version(conn, str(path))
            check_integrity(conn, str(path))
        except BaseException:
            conn.close()
            raise
    conn.execute("PRAGMA foreign_keys = ON")
    if str(path) != ":memory:":
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode.lower() != "wal":
            raise UserError(f"{path}: could not switch the database to WAL mode (got {mode!r})")
        # NORMAL is durable across application crashes in WAL mode (only an OS crash or
        # power cut can lose the last transactions); FULL also survives those.
        conn.execute("PRAGMA synchronous = FULL")
    return conn


@functools.cache
def expected_tables() -> frozenset[str]:
    """Tables a fully migrated store has (found by migrating an empty in-memory database)."""
    db = sqlite_utils.Database(sqlite3.connect(":memory:", isolation_level=None))
    migrate(db)
    return frozenset(db.table_names())


def _empty_file(where: str) -> bool:
    """A 0-byte file with no `-wal` holding its content (a store's first commits can sit in
    its `-wal` while the main file is still empty)."""
    file = Path(where).expanduser()
    wal = file.with_name(file.name + "-wal")
    try:
        return file.stat().st_size == 0 and not (wal.exists() and wal.stat().st_size > 0)
    except OSError:
        return False


def open_db(path: str | Path | None = None, *, memory: bool = False,
            create: bool = True) -> sqlite_utils.Database:
    """Open the store (creating it if `create`) and bring its schema up to date.

    Args:
        path: the SQLite file; `None` means `PAW_DB` or `./paw.db`.
        memory: an in-memory database, for fast tests.
        create: create the file if it does not exist; when False a missing file is an
            error (the CLI's rule: only the commands that create a database pass True).

    Returns:
        A `sqlite_utils.Database` whose connection has WAL, a busy timeout and foreign
        keys on, with every migration applied.

    Raises:
        UserError: a missing file (with `create=False`) or folder, a file that is not a
            SQLite database, one written by a newer PAW, one missing a table, or any
            SQLite failure (read-only, locked, disk full), each with its cause named.
    """
    global LAST_OPENED
    if memory:
        conn = connect(":memory:")
        where = ":memory:"
    else:
        where = str(path if path is not None else default_db_path())
        if is_link_loop(where):
            raise UserError(no_such(where, "database"))
        parent = Path(where).expanduser().resolve().parent
        if not parent.is_dir():
            raise UserError(f"{where}: folder {parent} does not exist")
        if not create and not Path(where).expanduser().exists():
            raise UserError(f"{where}: no such database (check --db or PAW_DB; only `paw "
                            "import`, `paw demo`, `paw models add` and `paw raters add` "
                            "create one)")
        if not create and _empty_file(where):
            raise UserError(f"{where}: an empty file (0 bytes), not a PAW database; nothing "
                            "was written to it (only `paw import`, `paw demo`, `paw models "
                            "add` and `paw raters add` make a new store)")
        LAST_OPENED = where
        try:
            conn = connect(where)
        except sqlite3.Error as exc:
            raise UserError(describe_sqlite_error(exc, where)) from None
    db = sqlite_utils.Database(conn)
    try:
        migrate(db, where)
        if not memory:
            missing = sorted(expected_tables() - set(db.table_names()))
            if missing:
                raise UserError(f"{where}: table {', '.join(missing)} missing — the file is "
                                "damaged or was edited outside PAW (restore a copy made "
                                "with `paw backup`)")
    except sqlite3.Error as exc:
        conn.close()
        raise UserError(describe_sqlite_error(exc, where)) from None
    except UserError:
        conn.close()
        raise
    return db


def open_readonly(path: str | Path, *, schema: bool = True) -> sqlite_utils.Database:
    """Open a store for reading only; nothing is ever written to it (verifying archives).

    A file with no pending `-wal` (a `paw backup` copy, a closed store) is opened
    `immutable`: SQLite then takes no lock and creates no `-wal`/`-shm`, so it works on a
    read-only file, folder or mount and the file's bytes never change. A WAL file whose
    newest commits are still in its `-wal` is opened `mode=ro`, which reads them (SQLite
    needs to create or use `-shm` beside it for that). No migration is applied; with
    `schema=False` the file need not be a PAW store at all (a rater file).

    Raises:
        UserError: a missing file, not a SQLite database, a schema other than this PAW's
            (a newer one, or an older one that would need a migration), or pending commits
            in a `-wal` that a read-only folder keeps SQLite from reading.
    """
    global LAST_OPENED
    where = str(path)
    file = Path(where).expanduser()
    if not file.is_file():
        if file.is_symlink():
            raise UserError(no_such(where, "database"))
        raise UserError(f"{where}: no such database (check --db or PAW_DB)")
    # The file is not opened with open(): closing such a handle would drop the POSIX locks
    # of any SQLite connection this process holds on it (store/integrity.py `file_state`).
    # SQLite itself says "not a database" on the first read below.
    wal = file.with_name(file.name + "-wal")
    pending = wal.is_file() and wal.stat().st_size > 0
    uri = file.resolve().as_uri() + ("?mode=ro" if pending else "?mode=ro&immutable=1")
    LAST_OPENED = where
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000,
                               isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise UserError(describe_sqlite_error(exc, where)) from None
    try:
        if schema:
            check_schema_version(conn, where)
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        conn.execute("PRAGMA query_only = ON")
    except sqlite3.Error as exc:
        conn.close()
        if "file is not a database" in str(exc):
            raise UserError(f"{where}: not a SQLite database") from None
        if pending:
            raise UserError(f"{where}: its newest commits are still in {wal.name}, which "
                            "SQLite cannot read without writing the -shm file beside it, and "
                            "the folder is read-only: copy both files to a writable folder "
                            f"and verify the copy (SQLite said: {exc})") from None
        raise UserError(describe_sqlite_error(exc, where)) from None
    except UserError:
        conn.close()
        raise
    if schema and version != SCHEMA_VERSION:
        conn.close()
        raise UserError(f"{where}: schema version {version}, this PAW's is {SCHEMA_VERSION}; "
                        "a read-only file cannot be upgraded: make a copy (`paw backup COPY`), "
                        "open it once with this PAW, and verify the copy")
    return sqlite_utils.Database(conn)


_savepoints = itertools.count(1)


@contextmanager
def transaction(db: sqlite_utils.Database) -> Iterator[sqlite3.Connection]:
    """`BEGIN IMMEDIATE` … `COMMIT` on the database's connection (rollback on error).

    IMMEDIATE takes the write lock up front, so two processes never both read and
    then fail to upgrade (the usual source of "database is locked"). Inside an open
    transaction this is a SAVEPOINT instead, so a caller can make several steps (e.g. a
    dataset row and its items) one all-or-nothing unit.
    """
    conn = db.conn
    if conn.in_transaction:
        name = f"paw_{next(_savepoints)}"
        conn.execute(f"SAVEPOINT {name}")
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:  # SQLite may already have rolled back (e.g. disk full)
                conn.execute(f"ROLLBACK TO {name}")
                conn.execute(f"RELEASE {name}")
            raise
        else:
            conn.execute(f"RELEASE {name}")
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        # On SQLITE_FULL, IOERR and some others SQLite has rolled back already; a second
        # ROLLBACK would replace the real cause with "no transaction is active".
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


@contextmanager
def snapshot(db: sqlite_utils.Database) -> Iterator[sqlite3.Connection]:
    """A read transaction: every query inside sees one consistent state of the file.

    In WAL mode other processes keep writing meanwhile; what is read here (e.g. an export
    and the record head printed on it) all comes from the same moment.
    """
    conn = db.conn
    if conn.in_transaction:
        yield conn
        return
    conn.execute("BEGIN")
    try:
        yield conn
    finally:
        conn.execute("COMMIT")
