"""`paw backup`: a consistent copy of the store with SQLite's online backup API."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from store.db import BUSY_TIMEOUT_MS, check_schema_version, describe_sqlite_error
from store.errors import UserError, no_such


def _same_path(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def backup(source: str | Path, dest: str | Path, *, replace: bool = False) -> int:
    """Copy a store with SQLite's online backup API: consistent while others write.

    The copy is written to `<dest>.partial` and renamed into place only when complete and
    checked (`PRAGMA integrity_check`), so a failed backup leaves no half-written DEST.

    Args:
        source: the store file (read only; no migration is applied).
        dest: the new file; must not exist unless `replace` (never the source or the
            files beside it).
        replace: replace an existing DEST (`paw backup --force`), once the copy is complete.

    Returns:
        The number of pages copied.

    Raises:
        UserError: no source, DEST exists, or SQLite failed (cause named).
    """
    source, dest = Path(source).expanduser(), Path(dest).expanduser()
    if not source.is_file():
        raise UserError(no_such(source, "database"))
    if any(_same_path(dest, source.with_name(source.name + s))
           for s in ("", "-wal", "-shm", "-journal")):
        raise UserError(f"{dest}: is the database being backed up or one of its files; "
                        "choose another file name for the backup")
    if dest.exists() and not replace:
        raise UserError(f"{dest}: already exists; choose a new file name for the backup")
    if not dest.resolve().parent.is_dir():
        raise UserError(f"{dest}: folder {dest.resolve().parent} does not exist")
    partial = dest.with_name(dest.name + ".partial")
    partial.unlink(missing_ok=True)
    src = sqlite3.connect(str(source), timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        check_schema_version(src, str(source))
        try:
            out = sqlite3.connect(str(partial))
            out.execute("PRAGMA user_version").fetchone()  # opens (creates) the file
        except sqlite3.Error as exc:
            raise UserError(f"{dest}: cannot create the backup there (folder "
                            f"{dest.resolve().parent} not writable? SQLite said: {exc})"
                            ) from None
        try:
            started = time.monotonic()
            try:
                src.backup(out)
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                # The backup API does not wait on the busy timeout: another process holding
                # an exclusive lock fails it at once. Say how long it waited, not 30 s.
                raise UserError(f"{source}: another process held a lock on the database "
                                f"(waited {time.monotonic() - started:.1f} s); nothing was "
                                f"written to {dest}; try again when it has finished"
                                ) from None
            pages = out.execute("PRAGMA page_count").fetchone()[0]
            # A single self-contained file: the copy needs no -wal beside it.
            out.execute("PRAGMA journal_mode = DELETE")
            check = out.execute("PRAGMA integrity_check").fetchone()[0]
            if check != "ok":
                raise UserError(f"{dest}: the copy failed its integrity check ({check})")
        finally:
            out.close()
        partial.replace(dest)
    except sqlite3.Error as exc:
        partial.unlink(missing_ok=True)
        text = str(exc)
        if "full" in text or "disk I/O error" in text:
            # Writing is the copy's side: a full or failing disk is DEST's, not the source's.
            raise UserError(f"{dest}: cannot write the backup: the disk holding it is full "
                            f"or failing (SQLite said: {text}); nothing was written and "
                            f"{source} is unchanged") from None
        raise UserError(describe_sqlite_error(exc, str(source))) from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    finally:
        src.close()
    return int(pages)
