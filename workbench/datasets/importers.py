"""Importing a file: read every row, validate all of them, then store in one transaction.

A file either imports whole or not at all: the first bad row stops the import with
`<path>:<line>: <field>: expected ..., got ...` and nothing from the file is stored.
With `skip_bad`, the good rows are stored and the bad ones reported by reason.
Re-importing adds nothing: items are unique by (dataset, source id).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import sqlite_utils

from store.datasets import add_items, ensure_dataset
from store.db import transaction
from store.errors import UserError, no_such
from store.records import Item
from workbench.datasets import formats
from workbench.datasets.mapping import Mapping, check_header, parse_generic
from workbench.datasets.readers import (
    RawRow, RowError, encoding_error, foreign_encoding, read_csv, read_json_object,
    read_jsonl, shown,
)

Parser = Callable[[Any, int, formats.Source], Item]


@dataclass(frozen=True)
class Format:
    """An importable file format: how its rows are read and turned into items."""

    name: str
    reader: str
    """`jsonl`, `csv` (no header), `csv-header`, or `json-object` (id -> entry)."""
    parse: Parser | None
    """Row parser; None for the generic formats, which build one from the mapping."""
    summary: str
    """One line for `paw import --help`."""


FORMATS: dict[str, Format] = {f.name: f for f in [
    Format("medqa", "jsonl", formats.parse_medqa,
           "MedQA JSONL: question, options {A..D}, answer_idx, meta_info"),
    Format("medmcqa", "jsonl", formats.parse_medmcqa,
           "MedMCQA JSON lines: question, opa..opd, cop (1-based, as released), id"),
    Format("medmcqa0", "jsonl", formats.parse_medmcqa0,
           "MedMCQA JSON lines with 0-based cop (Hugging Face exports)"),
    Format("pubmedqa", "json-object", formats.parse_pubmedqa,
           "PubMedQA ori_pqal.json: {pmid: {QUESTION, CONTEXTS, final_decision}}"),
    Format("mmlu", "csv", formats.parse_mmlu,
           "MMLU CSV, no header: question, A, B, C, D, answer"),
    Format("jsonl", "jsonl", None, "generic JSON lines read through --map (default: PAW's "
           "own id/question/options/answer)"),
    Format("csv", "csv-header", None, "generic CSV with a header row, read through --map"),
]}
"""Every format `paw import` accepts, by name."""

GENERIC = {"jsonl", "csv"}


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

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.error}"


@dataclass(frozen=True)
class ParsedFile:
    """A whole file read and validated: its good items and its bad rows."""

    path: str
    items: tuple[Item, ...]
    bad: tuple[BadRow, ...]


def get_format(name: str) -> Format:
    """The format called `name` (case-insensitive).

    Raises:
        UserError: no such format (the message lists the known ones).
    """
    found = FORMATS.get(name.lower())
    if found is None:
        raise UserError(f"format: expected one of {', '.join(FORMATS)}, got {name!r}")
    return found


def _rows(fmt: Format, data: bytes, source: formats.Source,
          mapping: Mapping) -> Iterator[RawRow]:
    if fmt.reader == "jsonl":
        return read_jsonl(data)
    if fmt.reader == "csv":
        return read_csv(data, header=False)
    if fmt.reader == "json-object":
        return read_json_object(data)
    rows = read_csv(data, header=True)

    def checked() -> Iterator[RawRow]:
        first = True
        for row in rows:
            if first and row.error is None:
                check_header(mapping, list(row.value), source.path)
            first = False
            yield row

    return checked()


def parse_bytes(format_name: str, data: bytes, source: formats.Source,
                mapping: Mapping | None = None,
                on_row: Callable[[int], None] | None = None) -> ParsedFile:
    """Read and validate every row of a file's bytes (nothing is stored).

    Args:
        format_name: one of `FORMATS`.
        data: the file's contents.
        source: the path to name in messages and the file stem (for line-based ids).
        mapping: the column mapping for the generic `jsonl`/`csv` formats.
        on_row: called with each row's line number as it is read (progress of large files).

    Returns:
        The valid items in file order and the bad rows; a repeated id is a bad row
        (the first occurrence is kept).

    Raises:
        UserError: an unknown format, a mapping given to a benchmark format, or a fault
            that stops reading (invalid JSON in a one-object file, a CSV header missing a
            mapped column, unreadable CSV).
    """
    fmt = get_format(format_name)
    if mapping is not None and fmt.name not in GENERIC:
        raise UserError(f"--map: expected no mapping for format {fmt.name!r} (mappings "
                        "apply to jsonl and csv), got one")
    mapping = mapping or Mapping()
    foreign = foreign_encoding(data)
    if foreign is not None:
        raise UserError(f"{source.path}: expected UTF-8 text, got {foreign}; save the file "
                        "as UTF-8 and import it again (nothing imported)")
    parse: Parser = fmt.parse or partial(parse_generic, mapping,
                                         from_csv=fmt.reader == "csv-header")
    items: list[Item] = []
    bad: list[BadRow] = []
    first_line: dict[str, int] = {}
    for row in _rows(fmt, data, source, mapping):
        if on_row is not None:
            on_row(row.line)
        if row.error is not None:
            if row.fatal:
                raise UserError(f"{source.path}:{row.line}: {row.error} (nothing imported)")
            bad.append(BadRow(source.path, row.line, row.error))
            continue
        try:
            undecodable = encoding_error(row.value)
            if undecodable:
                raise undecodable
            item = parse(row.value, row.line, source)
        except RowError as exc:
            bad.append(BadRow(source.path, row.line, exc))
            continue
        if item.source_id in first_line:
            bad.append(BadRow(source.path, row.line, RowError(
                "id", f"an id not used before (first used on line "
                f"{first_line[item.source_id]})", shown(item.source_id),
                reason="duplicate id")))
            continue
        first_line[item.source_id] = row.line
        items.append(item)
    return ParsedFile(source.path, tuple(items), tuple(sorted(bad, key=lambda b: b.line)))


def check_file(path: str | Path) -> None:
    """Fail with one line if `path` is missing or a directory."""
    where = Path(path)
    if not where.exists():
        raise UserError(no_such(path))
    if where.is_dir():
        raise UserError(f"{path}: expected a file, got a directory")


def read_file(path: str | Path) -> bytes:
    """A file's bytes, with one-line errors for the usual mistakes."""
    check_file(path)
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror})") from None


def parse_file(format_name: str, path: str | Path,
               mapping: Mapping | None = None) -> ParsedFile:
    """Read and validate a file from disk (see `parse_bytes`)."""
    data = read_file(path)
    return parse_bytes(format_name, data, formats.Source(str(path), Path(path).stem),
                       mapping)


@dataclass(frozen=True)
class ImportReport:
    """What an import did: items read, new items stored, rows skipped."""

    dataset: str
    dataset_id: int
    path: str
    n_valid: int
    n_new: int
    skipped: tuple[BadRow, ...] = ()

    def skipped_by_reason(self) -> dict[str, int]:
        """How many rows were skipped for each reason, most frequent first."""
        return dict(Counter(b.reason for b in self.skipped).most_common())

    def lines(self, examples: int = 5) -> list[str]:
        """Human-readable summary: one line of counts, then skipped rows if any."""
        out = [(f"{self.path}: {plural(self.n_new, 'new item')} in dataset {self.dataset!r} "
               f"({plural(self.n_valid, 'valid row')}, {self.n_valid - self.n_new} "
               "already present)")]
        if self.skipped:
            reasons = ", ".join(f"{n} {r}" for r, n in self.skipped_by_reason().items())
            out.append(f"skipped {plural(len(self.skipped), 'bad row')}: {reasons}")
            out.extend(f"  {bad}" for bad in self.skipped[:examples])
            if len(self.skipped) > examples:
                out.append(f"  ... and {len(self.skipped) - examples} more")
        return out


def store_parsed(db: sqlite_utils.Database, parsed: ParsedFile, *, name: str,
                 format_name: str, skip_bad: bool = False, source_sha256: str | None = None,
                 source_path: str | None = None) -> ImportReport:
    """Store a validated file's items under dataset `name`, all or nothing.

    `source_path` (default: the path as given) is recorded on a new dataset.

    Raises:
        UserError: a bad row without `skip_bad` (naming the first), or no valid rows.
    """
    if parsed.bad and not skip_bad:
        first = parsed.bad[0]
        others = len(parsed.bad) - 1
        more = f"; {plural(others, 'more bad row')}" if others else ""
        raise UserError(f"{first} (nothing imported{more}; --skip-bad imports the "
                        f"{plural(len(parsed.items), 'valid row')})")
    if not parsed.items:
        detail = f" (all {len(parsed.bad)} rows bad; first: {parsed.bad[0]})" \
            if parsed.bad else ""
        raise UserError(f"{parsed.path}: expected at least one item, got none{detail}")
    # One transaction for the dataset row and its items: an import that fails or is
    # killed midway leaves no empty dataset behind.
    with transaction(db):
        dataset = ensure_dataset(db, name, format_name, source_path or parsed.path,
                                 source_sha256)
        added = add_items(db, dataset, list(parsed.items))
    return ImportReport(name, dataset, parsed.path, len(parsed.items), added, parsed.bad)


def import_file(db: sqlite_utils.Database, format_name: str, path: str | Path, *,
                name: str | None = None, skip_bad: bool = False,
                mapping: Mapping | None = None,
                on_row: Callable[[int], None] | None = None) -> ImportReport:
    """Import one file into the store.

    Args:
        db: the open store.
        format_name: one of `FORMATS` (e.g. 'medqa', 'jsonl').
        path: the file.
        name: the dataset name; defaults to the file's stem.
        skip_bad: store the valid rows and report the bad ones instead of stopping.
        mapping: column mapping for the generic formats.
        on_row: called with each row's line number while the file is validated.

    Returns:
        Counts of valid, new and skipped rows.

    Raises:
        UserError: missing file, unknown format, or a bad row (without `skip_bad`);
            in every case nothing from the file is stored.
    """
    data = read_file(path)
    parsed = parse_bytes(format_name, data, formats.Source(str(path), Path(path).stem),
                         mapping, on_row)
    return store_parsed(db, parsed, name=name or Path(path).stem,
                        format_name=get_format(format_name).name, skip_bad=skip_bad,
                        source_sha256=hashlib.sha256(data).hexdigest(),
                        source_path=str(Path(path).resolve()))
