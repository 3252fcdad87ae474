"""A run's analysis frames as files: `paw export` and the Runs screen's export key (`e`)
write through here (the frames are `analysis.exports`; columns: docs/schema.md, "Exported
frames")."""

from __future__ import annotations

import re
from pathlib import Path

from store.errors import UserError

DEFAULT_TABLES: dict[str, str] = {"robustness": "edits,wide,generations"}
"""`--tables` when not given, by kind of run (others: edits,generations)."""

PARQUET_MISSING = ("Parquet needs pyarrow, which this install lacks: pip install "
                   "'paw-workbench[parquet]' (or export --format csv)")
"""The one line printed when `--format parquet` cannot be written."""


def safe_name(name: str) -> str:
    """A file-name stem from a run or set name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "audit"


FORMATS: tuple[str, ...] = ("parquet", "csv", "jsonl")
"""What `--format` can name (the file's extension is the format's name)."""


def write_frame(frame, path: Path, fmt: str) -> Path:
    """Write a DataFrame as Parquet (pyarrow), CSV (header row, UTF-8) or JSON lines (one
    object per row, UTF-8, missing values as null, the column order kept); returns the path."""
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise UserError(PARQUET_MISSING) from None
        frame.to_parquet(path, index=False)
    elif fmt == "jsonl":
        text = frame.to_json(orient="records", lines=True, force_ascii=False,
                             date_format="iso")
        # pandas escapes every '/' as '\/' (valid JSON, but 'fake\/neutral_cot@1' reads
        # badly): undone; an escaped backslash before a slash stays '\\/'.
        path.write_text(text.replace("\\/", "/") + ("" if text.endswith("\n") else "\n"),
                        encoding="utf-8")
    else:
        frame.to_csv(path, index=False)
    return path


def run_frame_paths(info: dict, wanted: list[str], fmt: str,
                    folder: Path) -> dict[str, Path]:
    """Where `write_run_frames` writes each wanted table: `<folder>/<run>-<table>.<fmt>`
    (the CLI checks them all with its output guard before the first is written)."""
    stem = safe_name(info["name"])
    tables = [t for t in ("edits", "wide", "generations") if t in wanted
              and (t != "wide" or info["kind"] == "robustness")]
    return {t: folder / f"{stem}-{t}.{fmt}" for t in tables}


def write_run_frames(db, info: dict, wanted: list[str], fmt: str,
                     folder: Path) -> list[tuple[Path, int]]:
    """Write a run's `edits`, `wide` and `generations` frames (those in `wanted`) into
    `folder` as `<run>-<table>.<fmt>`; [(path, rows)]. `paw export` and the Runs screen's
    export key (`e`) both write through here."""
    from analysis.exports import (
        edits_frame,
        generations_frame,
        robustness_edits_frame,
        robustness_wide_frame,
    )

    robustness = info["kind"] == "robustness"
    paths = run_frame_paths(info, wanted, fmt, folder)
    written = []
    if "edits" in wanted:
        frame = (robustness_edits_frame(db, info["id"]) if robustness
                 else edits_frame(db, info["id"]))
        written.append((write_frame(frame, paths["edits"], fmt), len(frame)))
    if "wide" in wanted and robustness:
        frame = robustness_wide_frame(db, info["id"])
        written.append((write_frame(frame, paths["wide"], fmt), len(frame)))
    if "generations" in wanted:
        frame = generations_frame(db, info["id"])
        written.append((write_frame(frame, paths["generations"], fmt),
                        len(frame)))
    return written
