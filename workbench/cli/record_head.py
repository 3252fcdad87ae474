"""The one line that tells a user where to keep the annotation record head and how to use it.

A head kept inside the database folder is lost, restored or deleted with the database; kept
elsewhere (a notebook, a mail, a second disk), it is what shows later that newest entries
went missing: a `-wal` deleted after a crash, an older backup restored over a newer store
(docs/annotation.md, "Keeping the record head"). `paw verify`, `paw annotate merge`,
`paw report --coordinator` and `paw backup` print it.
"""

from __future__ import annotations

from pathlib import Path


def keep_head_line(head: str, db_path: str) -> str:
    """'record head H: keep it outside FOLDER; later `paw verify --head H --db DB` …'."""
    folder = Path(db_path).expanduser().resolve().parent
    return (f"record head {head}: keep it outside {folder} (notebook, mail, another disk); "
            f"later `paw verify --head {head} --db {db_path}` shows whether the record "
            "still holds it (a deleted -wal or an older backup restored does not)")


def stored_head(path: str) -> str | None:
    """The record head of the store file at `path`, read-only; None when it holds no
    signed record (a store with no annotation yet, or of an older schema)."""
    import sqlite3

    from store.db import open_readonly
    from store.errors import UserError

    try:
        db = open_readonly(path)
    except (UserError, sqlite3.Error):  # the line is extra: never a new failure
        return None
    try:
        row = db.execute("SELECT hash FROM record_log ORDER BY id DESC LIMIT 1").fetchone()
    except sqlite3.Error:
        return None
    finally:
        db.conn.close()
    return str(row[0]) if row else None
