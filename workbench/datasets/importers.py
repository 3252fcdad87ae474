"""Importing a file: rows read one at a time, validated, and stored in one transaction.

A file either imports whole or not at all: the first bad row stops the import with
`<path>:<line>: <field>: expected ..., got ...` (nothing after it is read) and the
transaction is rolled back, so nothing from the file is stored. With `skip_bad`, the good
rows are stored and the bad ones reported by reason. Re-importing adds nothing: items are
unique by (dataset, source id). Memory stays bounded whatever the file: see
`workbench.datasets.sources` (line limit, magic, Parquet batches) and docs/importing.md.
"""

from __future__ import annotations

import hashlib
import io
import stat
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO

import sqlite_utils

from store.datasets import add_items, ensure_dataset
from store.db import transaction
from store.errors import UserError, no_such
from store.records import Item
from workbench.datasets import formats
from workbench.datasets.mapping import Mapping, parse_generic
from workbench.datasets.opening import (
    GENERIC, MEDMCQA, Parser, cop_base, get_format, prepare,
)
from workbench.datasets.readers import RawRow, RowError, encoding_error, shown

BATCH = 500
"""Items inserted per statement batch inside an import's transaction."""

SKIP_EXAMPLES = 100
"""Skipped rows kept (with their messages) by `--skip-bad`; the rest are only counted."""


def plural(n: int, noun: str) -> str:
    """`1 bad row`, `2 bad rows`."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


@dataclass(frozen=True)
class BadRow:
    """A row that failed validation, located in its file."""

    path: str
    line: int
    error: RowError

    @property
    def reason(self) -> str:
        """The category counted in reports (e.g. 'missing field', 'duplicate id')."""
        return self.error.reason

    unit: str = ""
    """`"row "` for Parquet rows (see `formats.Source.unit`)."""

    def __str__(self) -> str:
        return f"{self.path}:{self.unit}{self.line}: {self.error}"


@dataclass(frozen=True)
class ParsedFile:
    """A whole file read and validated: its good items and its bad rows."""

    path: str
    items: tuple[Item, ...]
    bad: tuple[BadRow, ...]
    notes: tuple[str, ...] = ()
    """What the reader decided and the user should know (e.g. MedMCQA's `cop` base)."""


def _reading(format_name: str, handle: IO[bytes], source: formats.Source,
             mapping: Mapping | None) -> tuple[Iterator[RawRow], Parser, formats.Source,
                                               tuple[str, ...]]:
    """Rows, row parser, the source as named and notes for a file of `format_name`."""
    fmt = get_format(format_name)
    if mapping is not None and fmt.name not in GENERIC:
        raise UserError(f"--map: expected no mapping for format {fmt.name!r} (mappings "
                        "apply to jsonl, parquet and csv), got one")
    mapping = mapping or Mapping()
    rows, source = prepare(fmt, handle, source, mapping)
    notes: tuple[str, ...] = ()
    parse: Parser
    if fmt.name in MEDMCQA:
        base, notes = cop_base(fmt, rows(), source)
        parse = partial(formats.parse_medmcqa, first_index=base)
    else:
        parse = fmt.parse or partial(parse_generic, mapping,
                                     from_csv=fmt.reader == "csv-header")
    return rows(), parse, source, notes


def _validated(rows: Iterator[RawRow], parse: Parser, source: formats.Source,
               on_row: Callable[[int], None] | None) -> Iterator[Item | BadRow]:
    """Each row as an item or a bad row, in file order; a repeated id is a bad row.

    Raises:
        UserError: a fault that stops reading (a fatal row error).
    """
    first_line: dict[str, int] = {}
    for row in rows:
        if on_row is not None:
            on_row(row.line)
        if row.error is not None:
            if row.fatal:
                raise UserError(f"{source.at(row.line)}: {row.error} (nothing imported)")
            yield BadRow(source.path, row.line, row.error, source.unit)
            continue
        try:
            undecodable = None if row.clean else encoding_error(row.value)
            if undecodable:
                raise undecodable
            item = parse(row.value, row.line, source)
        except RowError as exc:
            yield BadRow(source.path, row.line, exc, source.unit)
            continue
        if item.source_id in first_line:
            yield BadRow(source.path, row.line, RowError(
                "id", f"an id not used before (first used on {source.unit or 'line '}"
                f"{first_line[item.source_id]})", shown(item.source_id),
                reason="duplicate id"), source.unit)
            continue
        first_line[item.source_id] = row.line
        yield item


def parse_bytes(format_name: str, data: bytes, source: formats.Source,
                mapping: Mapping | None = None,
                on_row: Callable[[int], None] | None = None) -> ParsedFile:
    """Read and validate every row of a file's bytes (nothing is stored).

    For bytes already in memory (the packaged demo set, tests); `import_file` reads a
    file from disk row by row instead.

    Returns:
        The valid items in file order and the bad rows; a repeated id is a bad row
        (the first occurrence is kept).

    Raises:
        UserError: an unknown format, a mapping given to a benchmark format, or a fault
            that stops reading (invalid JSON in a one-object file, a CSV header missing a
            mapped column, unreadable CSV, a line over the limit, a binary file).
    """
    handle = io.BytesIO(data)
    rows, parse, source, notes = _reading(format_name, handle, source, mapping)
    items: list[Item] = []
    bad: list[BadRow] = []
    for result in _validated(rows, parse, source, on_row):
        (bad if isinstance(result, BadRow) else items).append(result)  # type: ignore[arg-type]
    return ParsedFile(source.path, tuple(items), tuple(sorted(bad, key=lambda b: b.line)),
                      notes)


def check_file(path: str | Path) -> None:
    """Fail with one line if `path` is missing (a dangling or looping link named as one), a
    directory, or not a regular file."""
    where = Path(path)
    try:
        exists = where.exists()
    except OSError as exc:  # e.g. a name too long
        raise UserError(f"{path}: cannot read ({exc.strerror})") from None
    if not exists:
        raise UserError(no_such(path))
    if where.is_dir():
        raise UserError(f"{path}: expected a file, got a directory")
    if not where.is_file():
        mode = where.stat().st_mode
        kind = ("a character device" if stat.S_ISCHR(mode) else "a block device"
                if stat.S_ISBLK(mode) else "a pipe" if stat.S_ISFIFO(mode) else "a socket"
                if stat.S_ISSOCK(mode) else "something else")
        raise UserError(f"{path}: expected a regular file, got {kind} (an import reads its "
                        "file more than once; save the data to a file first)")


def parse_file(format_name: str, path: str | Path,
               mapping: Mapping | None = None) -> ParsedFile:
    """Read and validate a file from disk (see `parse_bytes`), nothing stored; the items
    are held in memory, so for large files prefer `import_file`."""
    check_file(path)
    with _open(path) as handle:
        rows, parse, source, notes = _reading(
            format_name, handle, formats.Source(str(path), Path(path).stem), mapping)
        items: list[Item] = []
        bad: list[BadRow] = []
        for result in _validated(rows, parse, source, None):
            (bad if isinstance(result, BadRow) else items).append(result)  # type: ignore[arg-type]
    return ParsedFile(str(path), tuple(items), tuple(bad), notes)


def _open(path: str | Path) -> IO[bytes]:
    try:
        return open(path, "rb")  # noqa: SIM115 (the caller closes it)
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror})") from None


def _sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with _open(path) as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class ImportReport:
    """What an import did: items read, new items stored, rows skipped."""

    dataset: str
    dataset_id: int
    path: str
    n_valid: int
    n_new: int
    skipped: tuple[BadRow, ...] = ()
    """The first `SKIP_EXAMPLES` skipped rows (all of them are counted in `reasons`)."""
    reasons: tuple[tuple[str, int], ...] = ()
    """Skipped rows per reason, most frequent first."""
    notes: tuple[str, ...] = ()

    @property
    def n_skipped(self) -> int:
        """How many rows were skipped in all."""
        return sum(n for _, n in self.reasons)

    def skipped_by_reason(self) -> dict[str, int]:
        """How many rows were skipped for each reason, most frequent first."""
        return dict(self.reasons)

    def lines(self, examples: int = 5) -> list[str]:
        """Human-readable summary: one line of counts, notes, then skipped rows if any."""
        out = [(f"{self.path}: {plural(self.n_new, 'new item')} in dataset {self.dataset!r} "
               f"({plural(self.n_valid, 'valid row')}, {self.n_valid - self.n_new} "
               "already present)")]
        out.extend(self.notes)
        if self.reasons:
            reasons = ", ".join(f"{n} {r}" for r, n in self.reasons)
            out.append(f"skipped {plural(self.n_skipped, 'bad row')}: {reasons}")
            out.extend(f"  {bad}" for bad in self.skipped[:examples])
            if self.n_skipped > examples:
                out.append(f"  ... and {self.n_skipped - examples} more")
        return out


def _first_bad(bad: BadRow) -> UserError:
    return UserError(f"{bad} (nothing imported: the import stops at the first bad row; "
                     "--skip-bad imports the valid rows and lists the bad ones)")


def _none_valid(path: str, n_bad: int, first: BadRow | None) -> UserError:
    detail = f" (all {plural(n_bad, 'row')} bad; first: {first})" if first else ""
    return UserError(f"{path}: expected at least one item, got none{detail}")


def store_parsed(db: sqlite_utils.Database, parsed: ParsedFile, *, name: str,
                 format_name: str, skip_bad: bool = False, source_sha256: str | None = None,
                 source_path: str | None = None) -> ImportReport:
    """Store a validated file's items under dataset `name`, all or nothing.

    `source_path` (default: the path as given) is recorded on a new dataset.

    Raises:
        UserError: a bad row without `skip_bad` (naming the first), or no valid rows.
    """
    if parsed.bad and not skip_bad:
        raise _first_bad(parsed.bad[0])
    if not parsed.items:
        raise _none_valid(parsed.path, len(parsed.bad), parsed.bad[0] if parsed.bad else None)
    # One transaction for the dataset row and its items: an import that fails or is
    # killed midway leaves no empty dataset behind.
    with transaction(db):
        dataset = ensure_dataset(db, name, format_name, source_path or parsed.path,
                                 source_sha256)
        added = add_items(db, dataset, list(parsed.items))
    reasons = tuple(Counter(b.reason for b in parsed.bad).most_common())
    return ImportReport(name, dataset, parsed.path, len(parsed.items), added,
                        parsed.bad[:SKIP_EXAMPLES], reasons, parsed.notes)


def import_file(db: sqlite_utils.Database, format_name: str, path: str | Path, *,
                name: str | None = None, skip_bad: bool = False,
                mapping: Mapping | None = None,
                on_row: Callable[[int], None] | None = None) -> ImportReport:
    """Import one file into the store, reading it a row at a time.

    Rows are validated and inserted inside one transaction, in batches; the first bad row
    (without `skip_bad`) raises, nothing after it is read and the transaction is rolled
    back. Memory holds one batch of items and the ids seen so far, whatever the file's
    size.

    Args:
        db: the open store.
        format_name: one of `FORMATS` (e.g. 'medqa', 'jsonl').
        path: the file.
        name: the dataset name; defaults to the file's stem.
        skip_bad: store the valid rows and report the bad ones instead of stopping.
        mapping: column mapping for the generic formats.
        on_row: called with each row's line number while the file is read.

    Returns:
        Counts of valid, new and skipped rows.

    Raises:
        UserError: missing file, unknown format, or a bad row (without `skip_bad`);
            in every case nothing from the file is stored.
    """
    check_file(path)
    fmt = get_format(format_name)
    with _open(path) as handle:
        rows, parse, source, notes = _reading(
            fmt.name, handle, formats.Source(str(path), Path(path).stem), mapping)
        tally: Counter[str] = Counter()
        examples: list[BadRow] = []
        batch: list[Item] = []
        n_valid = added = 0
        with transaction(db):
            dataset = ensure_dataset(db, name or Path(path).stem, fmt.name,
                                     str(Path(path).resolve()))
            for result in _validated(rows, parse, source, on_row):
                if isinstance(result, BadRow):
                    if not skip_bad:
                        raise _first_bad(result)
                    tally[result.reason] += 1
                    if len(examples) < SKIP_EXAMPLES:
                        examples.append(result)
                    continue
                batch.append(result)
                n_valid += 1
                if len(batch) >= BATCH:
                    added += add_items(db, dataset, batch)
                    batch = []
            added += add_items(db, dataset, batch)
            if n_valid == 0:
                raise _none_valid(str(path), sum(tally.values()),
                                  examples[0] if examples else None)
            # Hashed last, so a bad first line is reported without reading the whole file;
            # a dataset made by an earlier import keeps its first file's hash.
            db.execute("UPDATE datasets SET source_sha256 = ? WHERE id = ? AND "
                       "source_sha256 IS NULL", [_sha256(path), dataset])
    return ImportReport(name or Path(path).stem, dataset, str(path), n_valid, added,
                        tuple(examples), tuple(tally.most_common()), notes)
