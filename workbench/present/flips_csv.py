"""The flip list as a table for other programs: `paw flips --format csv` and the flip
inspector's export key (`e`) write the same CSV, and its copy key (`y`) the same cells.

Columns are the fields of `analysis.flips.listing.FlipRow`, in order (docs/cli.md, "`paw
flips`"): booleans as `true`/`false`, judge verdicts joined by `,`, a missing value as an
empty cell (what pandas reads as missing).
"""

from __future__ import annotations

import csv
from dataclasses import fields
from typing import Any, TextIO

CHUNK = 500
"""Rows fetched per query while writing (the page query names its job ids)."""


def csv_columns() -> list[str]:
    """The header: every field of a flip-list row, in order."""
    from analysis.flips.listing import FlipRow

    return [f.name for f in fields(FlipRow)]


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(value)
    return value


def csv_cells(row: Any) -> list[Any]:
    """One flip-list row as CSV cells, in `csv_columns()` order."""
    return [_cell(getattr(row, name)) for name in csv_columns()]


def tsv_line(row: Any) -> str:
    """One row as a tab-separated line with its header (what the copy key puts on the
    clipboard: it pastes into a spreadsheet as two rows)."""
    cells = [str(c).replace("\t", " ").replace("\n", " ") for c in csv_cells(row)]
    return "\t".join(csv_columns()) + "\n" + "\t".join(cells)


def write_flips_csv(db: Any, scope: str | int | None, flt: Any, order: str, stream: TextIO,
                    offset: int = 0, limit: int | None = None) -> int:
    """Write the filter's rows (every matching row, or `limit` from `offset`) as CSV with a
    header to `stream`; returns the number of rows written."""
    from analysis.flips.listing import list_flips

    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(csv_columns())
    written, left = 0, limit
    while left is None or left > 0:
        step = CHUNK if left is None else min(CHUNK, left)
        page = list_flips(db, scope, flt, limit=step, offset=offset, order=order)
        writer.writerows(csv_cells(row) for row in page.rows)
        written += len(page.rows)
        offset += len(page.rows)
        left = None if left is None else left - len(page.rows)
        if page.next_offset is None or not page.rows:
            break
    return written
