"""Integrity on open: `PRAGMA quick_check` on a file whose header or size changed since seen."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from store.errors import UserError
from store.memo import read_json_memo, write_json_memo

_SEEN: dict[str, tuple[int, str]] = {}
"""This process's copy of the integrity memo: real path -> (size, header sha256)."""


def state_dir() -> Path:
    """Where PAW keeps per-user state: `PAW_STATE_DIR`, else `~/.cache/paw`."""
    base = os.environ.get("PAW_STATE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "paw")
    return Path(base)


HEADER_PRAGMAS: tuple[str, ...] = ("page_size", "schema_version", "user_version",
                                   "application_id", "auto_vacuum", "encoding")
"""Header fields read through SQLite (offsets 16, 40, 60, 68, 52, 56 of the header)."""


def file_state(path: str | Path, conn: sqlite3.Connection | None = None
               ) -> tuple[str, int, str] | None:
    """(real path, size, sha256 of the header fields and the file's identity), None if absent.

    The file itself is never opened here: a process that opens and closes a database file
    with plain `open()` while it holds a SQLite connection to it drops every POSIX lock
    that connection holds (the locks belong to the process and die with any close of the
    file), so another process closing its own connection then deletes the `-wal` file
    that this one is still writing to — its commits become invisible to everyone else and
    two writers can corrupt the file (SQLite's "How To Corrupt", §2.2). Measured here
    before this rule: `paw run` wrote six generations that no other process could see
    until it exited. So the size and identity come from `stat` and the header fields from
    the connection (`HEADER_PRAGMAS`); with no connection, only the stat part is hashed.
    In WAL mode commits leave these alone, so they change when the file is rewritten
    (another tool, a restore, a new schema) and the size when checkpointed pages are
    added; either sends the file through `quick_check` again.
    """
    import hashlib

    where = Path(path).expanduser()
    try:
        info = where.stat()
    except OSError:
        return None
    fields = [info.st_dev, info.st_ino]
    if conn is not None:
        fields += [conn.execute(f"PRAGMA {name}").fetchone()[0] for name in HEADER_PRAGMAS]
    digest = hashlib.sha256(repr(fields).encode()).hexdigest()
    return str(where.resolve()), info.st_size, digest


def _memo_path() -> Path:
    return state_dir() / "integrity.json"


def read_memo() -> dict[str, list]:
    """The integrity memo on disk: real path -> [size, header sha256] ({} if none)."""
    return read_json_memo(_memo_path())


def _remember(real: str, size: int, digest: str) -> None:
    # Best effort: a memo that cannot be written only means the next open checks again.
    _SEEN[real] = (size, digest)
    memo = read_memo()
    memo[real] = [size, digest]
    write_json_memo(_memo_path(), memo)


def check_integrity(conn: sqlite3.Connection, where: str) -> None:
    """`PRAGMA quick_check` on a file whose header or size changed since PAW last saw it.

    Run before any migration or write, so a file with corrupted pages is refused rather
    than written into. "Last seen" is a memo of (size, header hash) per file, in this
    process and in `state_dir()/integrity.json` for the next command; a file never seen
    is checked. quick_check reads every page: 388 ms on a 279 MB store of 50,000 edits
    (docs/schema.md, "Integrity on open"), which is why it is not run on every open.

    Raises:
        UserError: quick_check found a problem (its first message is named).
    """
    state = file_state(where, conn)
    if state is None or state[1] == 0:
        return
    real, size, digest = state
    if _SEEN.get(real) == (size, digest):
        return
    recorded = read_memo().get(real)
    if recorded == [size, digest]:
        _SEEN[real] = (size, digest)
        return
    rows = [r[0] for r in conn.execute("PRAGMA quick_check(3)")]
    if rows != ["ok"]:
        lines = [line for row in rows for line in str(row).splitlines()
                 if line and not line.startswith("***")]
        more = f" and {len(lines) - 1} more" if len(lines) > 1 else ""
        raise UserError(f"{where}: the file is damaged (PRAGMA quick_check: "
                        f"{lines[0] if lines else rows[0]}{more}); nothing was written to it "
                        "— restore a copy made with `paw backup`")
    _remember(real, size, digest)
