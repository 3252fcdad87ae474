"""Which formats `paw import` reads, and how a file is opened for one of them.

A format names the layout of a row (MedQA, MedMCQA, PubMedQA, MMLU, or a generic one read
through a mapping); the container is found from the file's first bytes: Parquet by its
magic (read for every JSON-shaped format), other binary files refused at once, text read
a line at a time (`workbench.datasets.sources`).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import IO, Any

from store.errors import UserError
from store.records import Item
from workbench.datasets import formats
from workbench.datasets.mapping import Mapping, check_header
from workbench.datasets.readers import (
    RawRow, foreign_encoding, read_csv, read_json_object, read_jsonl,
)
from workbench.datasets.sources import (
    PARQUET, is_pmid_object, parquet_rows, read_whole, refuse_binary, sniff,
)

Parser = Callable[[Any, int, formats.Source], Item]


@dataclass(frozen=True)
class Format:
    """An importable file format: how its rows are read and turned into items."""

    name: str
    reader: str
    """`jsonl` (JSON lines, or Parquet by its magic), `parquet` (Parquet only), `pubmedqa`
    (ori_pqal.json, or JSON lines / Parquet in the Hub's form), `csv` (no header) or
    `csv-header`."""
    parse: Parser | None
    """Row parser; None for the generic formats, which build one from the mapping."""
    summary: str
    """One line for `paw import --help`."""
    cop_base: int | None = None
    """MedMCQA only: the number of `opa` in `cop` (0 or 1); None detects it from the file."""

    @property
    def expects(self) -> str:
        """What a file of this format is, for messages."""
        return {"csv": "a CSV file", "csv-header": "a CSV file with a header row",
                "parquet": "a Parquet file"}.get(self.reader, "JSON lines or Parquet")


FORMATS: dict[str, Format] = {f.name: f for f in [
    Format("medqa", "jsonl", formats.parse_medqa,
           "MedQA (JSON lines or Parquet): question, options, answer_idx, meta_info"),
    Format("medmcqa", "jsonl", formats.parse_medmcqa,
           "MedMCQA (JSON lines or Parquet): question, opa..opd, cop (0- or 1-based: "
           "detected), id"),
    Format("medmcqa0", "jsonl", formats.parse_medmcqa,
           "MedMCQA with cop 0-based (the Hugging Face Hub's files)", cop_base=0),
    Format("medmcqa1", "jsonl", formats.parse_medmcqa,
           "MedMCQA with cop 1-based (the official release)", cop_base=1),
    Format("pubmedqa", "pubmedqa", formats.parse_pubmedqa,
           "PubMedQA: ori_pqal.json, or the Hub's form (Parquet or JSON lines)"),
    Format("mmlu", "csv", formats.parse_mmlu,
           "MMLU CSV, no header: question, A, B, C, D, answer"),
    Format("jsonl", "jsonl", None, "generic JSON lines (or Parquet) read through --map "
           "(default: PAW's own id/question/options/answer)"),
    Format("parquet", "parquet", None, "generic Parquet read through --map, as jsonl"),
    Format("csv", "csv-header", None, "generic CSV with a header row, read through --map"),
]}
"""Every format `paw import` accepts, by name."""

GENERIC = {"jsonl", "parquet", "csv"}
"""Formats read through a `--map` mapping."""

MEDMCQA = {"medmcqa", "medmcqa0", "medmcqa1"}
"""Formats whose `cop` numbering is decided per file (`cop_base`)."""

def get_format(name: str) -> Format:
    """The format called `name` (case-insensitive).

    Raises:
        UserError: no such format (the message lists the known ones).
    """
    found = FORMATS.get(name.lower())
    if found is None:
        raise UserError(f"format: expected one of {', '.join(FORMATS)}, got {name!r}")
    return found


def prepare(fmt: Format, handle: IO[bytes], source: formats.Source,
             mapping: Mapping) -> tuple[Callable[[], Iterator[RawRow]], formats.Source]:
    """How to read the rows of `handle` (a function, so MedMCQA can read them twice) and
    the source as messages name it. A binary file is refused or routed by its magic here,
    before any row is read.

    Raises:
        UserError: a binary file this format cannot read, a Parquet-only format given
            text, or text in UTF-16/UTF-32.
    """
    head = peek(handle, 256)
    magic = sniff(head)
    if magic is PARQUET and fmt.reader in {"jsonl", "parquet", "pubmedqa"}:
        source = replace(source, unit="row ")

        def parquet() -> Iterator[RawRow]:
            for number, row in parquet_rows(handle, source.path):
                # Arrow strings are valid UTF-8 and its integers 64-bit: nothing to look for.
                yield RawRow(number, value=row, clean=True)

        return rewound(handle, parquet), source
    if magic is not None:
        raise refuse_binary(source.path, magic, fmt.expects)
    if fmt.reader == "parquet":
        raise UserError(f"{source.path}: expected a Parquet file (starting with b'PAR1'), "
                        "got one that is not; import JSON lines as jsonl and CSV as csv "
                        "(nothing imported)")
    foreign = foreign_encoding(head)
    if foreign is not None:
        raise UserError(f"{source.path}: expected UTF-8 text, got {foreign}; save the file "
                        "as UTF-8 and import it again (nothing imported)")
    if fmt.reader == "pubmedqa" and is_pmid_object(head):
        return rewound(handle, lambda: read_json_object(read_whole(handle, source.path))), \
            source
    if fmt.reader in {"jsonl", "pubmedqa"}:
        return rewound(handle, lambda: read_jsonl(handle)), source
    if fmt.reader == "csv":
        return rewound(handle, lambda: read_csv(handle, header=False)), source

    def checked() -> Iterator[RawRow]:
        first = True
        for row in read_csv(handle, header=True):
            if first and row.error is None:
                check_header(mapping, list(row.value), source.path)
            first = False
            yield row

    return rewound(handle, checked), source


def peek(handle: IO[bytes], size: int) -> bytes:
    """The first `size` bytes, the handle rewound."""
    head = handle.read(size)
    seek_start(handle)
    return head


def seek_start(handle: IO[bytes]) -> None:
    """Back to the file's start (a pipe cannot: refused with one line)."""
    try:
        handle.seek(0)
    except (OSError, io.UnsupportedOperation):
        raise UserError(f"{getattr(handle, 'name', 'the file')}: expected a file that can "
                        "be read twice (a regular file), got a pipe or device") from None


def rewound(handle: IO[bytes],
             rows: Callable[[], Iterator[RawRow]]) -> Callable[[], Iterator[RawRow]]:
    """`rows`, reading from the start each time it is called."""
    def read() -> Iterator[RawRow]:
        seek_start(handle)
        return rows()
    return read


def cop_base(fmt: Format, rows: Iterator[RawRow],
              source: formats.Source) -> tuple[int, tuple[str, ...]]:
    """The numbering of MedMCQA's `cop` in a file, and what to tell the user about it.

    A 0 only occurs 0-based and a 4 only 1-based; a file whose answers are all 1-3 could be
    either (a subset with no `opa` or no `opd` answer), so its base must be named:
    `medmcqa0` / `medmcqa1` (then with a warning that the file itself cannot confirm it).
    """
    zero_at = four_at = None
    answered = False
    for row in rows:
        if row.error is not None or not isinstance(row.value, dict):
            continue
        cop = formats.medmcqa_cop(row.value)
        answered = answered or cop in range(0, 5)
        if cop == 0 and zero_at is None:
            zero_at = row.line
        if cop == 4 and four_at is None:
            four_at = row.line
        if zero_at is not None and four_at is not None:
            break
    where = (source.unit or "line ") + "{}"
    if fmt.cop_base is not None:
        if answered and zero_at is None and four_at is None:
            warning = (f"warning: {source.path}: every cop is 1, 2 or 3, so the file could be "
                       f"0- or 1-based; read as {fmt.cop_base}-based because the format is "
                       f"{fmt.name} (check a few rows against their explanations in exp)")
            return fmt.cop_base, (warning,)
        return fmt.cop_base, ()
    if zero_at is not None and four_at is not None:
        raise UserError(f"{source.at(four_at)}: cop: expected one numbering in the file, got "
                        f"0 on {where.format(zero_at)} (0-based) and 4 here (1-based); "
                        "import it as medmcqa0 or medmcqa1 to say which (nothing imported)")
    if zero_at is not None:
        note = (f"{source.path}: cop read as 0-based (0 = opa, as in the Hugging Face "
                f"files): {where.format(zero_at)} has cop 0")
        return 0, (note,)
    if four_at is not None:
        note = (f"{source.path}: cop read as 1-based (1 = opa, as in the official "
                f"release): {where.format(four_at)} has cop 4")
        return 1, (note,)
    if not answered:
        return 1, ()  # no usable cop at all: every row is reported bad by the parser
    raise UserError(f"{source.path}: cop: expected a 0 or a 4 somewhere to tell the "
                    "numbering, got only 1, 2 and 3 (the Hub's files are 0-based, the "
                    "official release 1-based); import it as medmcqa0 or medmcqa1 to say "
                    "which (nothing imported)")


