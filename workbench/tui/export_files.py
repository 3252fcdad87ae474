"""Where the workbench's export keys write: a new file next to the database, never one that
exists (`<stem>.csv`, else `<stem>-2.csv`, …, opened with O_EXCL), so no key overwrites a
file it did not create."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, TextIO


def safe_stem(text: str) -> str:
    """A file-name stem from a run name (anything but letters, digits, '.', '_', '-' → '_')."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_.") or "export"


def new_file(db_path: str, stem: str, ext: str) -> tuple[Path, TextIO]:
    """(path, open text stream) of a file created now beside the database."""
    folder = Path(db_path).resolve().parent
    stem = safe_stem(stem)
    for n in range(1, 10_000):
        path = folder / (f"{stem}.{ext}" if n == 1 else f"{stem}-{n}.{ext}")
        try:
            return path, path.open("x", encoding="utf-8", newline="")
        except FileExistsError:
            continue
    raise FileExistsError(f"{folder}: no free name for {stem}.{ext}")


def new_folder(db_path: str, stem: str) -> Path:
    """A folder created now beside the database (`<stem>`, else `<stem>-2`, …)."""
    folder = Path(db_path).resolve().parent
    stem = safe_stem(stem)
    for n in range(1, 10_000):
        path = folder / (stem if n == 1 else f"{stem}-{n}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"{folder}: no free name for {stem}")


def export_flips(db: Any, db_path: str, scope: str, audit_id: int | None, flt: Any,
                 order: str) -> tuple[Path, int]:
    """The flip inspector's `e`: every row the filter matches as CSV (what `paw flips
    --format csv` prints) in a new file `<scope>-flips.csv` beside the database."""
    from workbench.present.flips_csv import write_flips_csv

    path, stream = new_file(db_path, f"{scope}-flips", "csv")
    with stream:
        return path, write_flips_csv(db, audit_id, flt, order, stream)
