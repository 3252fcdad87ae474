"""Integrity on open: `PRAGMA quick_check` on a file whose header or size changed since last seen."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from store.errors import UserError

_SEEN: dict[str, tuple[int, str]] = {}
"""This process's copy of the integrity memo: real path -> (size, header sha256)."""


def state_dir() -> Path:
    """Where PAW keeps per-user state: `PAW_STATE_DIR`, else `~/.cache/paw`."""
    base = os.environ.get("PAW_STATE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "paw")
    return Path(base)


def file_state(path: str | Path) -> tuple[str, int, str] | None:
    """(real path, size, sha256 of the 100-byte header) of a database file, None if absent.

    In WAL mode SQLite leaves the header's change counter alone on commits, so the header
    changes when the file is rewritten (another tool, a restore, a new schema) and the size
    when pages are added; either sends the file through `quick_check` again.
    """
    import hashlib

    where = Path(path).expanduser()
    try:
        size = where.stat().st_size
        with open(where, "rb") as handle:
            header = handle.read(100)
    except OSError:
        return None
    return str(where.resolve()), size, hashlib.sha256(header).hexdigest()


def _memo_path() -> Path:
    return state_dir() / "integrity.json"


def read_memo() -> dict[str, list]:
    """The integrity memo on disk: real path -> [size, header sha256] ({} if none)."""
    try:
        found = json.loads(_memo_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _remember(real: str, size: int, digest: str) -> None:
    # Best effort: a memo that cannot be written only means the next open checks again.
    _SEEN[real] = (size, digest)
    memo = read_memo()
    memo[real] = [size, digest]
    target = _memo_path()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
        partial.write_text(json.dumps(memo), encoding="utf-8")
        partial.replace(target)
    except OSError:
        pass


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
    state = file_state(where)
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
