"""Opening an import file with bounded memory: what kind of file it is, and its lines.

- **Magic.** The first bytes name a binary file at once (GGUF, Parquet, ZIP, gzip, SQLite),
  so a model or a database given to `paw import` by mistake is refused (or, for Parquet,
  read as Parquet) before anything else is read.
- **Lines.** Text is read one line at a time, never whole: a line longer than
  `LINE_LIMIT` bytes stops the import naming the line (a file without newlines, such as
  `/dev/zero`, stops at line 1 after reading `LINE_LIMIT` bytes).
- **One-object files** (PubMedQA's `ori_pqal.json`) are read whole, up to
  `OBJECT_FILE_LIMIT` bytes.
- **Parquet** is read a batch of rows at a time with pyarrow, streamed (no pre-buffered
  row groups, no read-ahead).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from store.errors import UserError

LINE_LIMIT = 8 * 1024 * 1024
"""The longest line (bytes, without its newline) an import reads: 8 MiB. MedQA's and
MedMCQA's longest rows are a few KB; a PubMedQA Hub row with its abstract about 10 KB."""

OBJECT_FILE_LIMIT = 64 * 1024 * 1024
"""The largest one-object JSON file (`ori_pqal.json` is about 2.6 MB) read whole: 64 MiB."""

PARQUET_BATCH_ROWS = 1024
"""Rows converted to Python at a time when reading Parquet."""

PARQUET_MISSING = ("reading Parquet needs pyarrow, which this install lacks: "
                   "pip install pyarrow (or pip install 'paw-workbench[parquet]')")
"""The one line printed when a Parquet file cannot be read for want of pyarrow."""


@dataclass(frozen=True)
class Magic:
    """A kind of binary file, known by its first bytes."""

    prefix: bytes
    name: str
    """What the file is, as a message names it."""
    hint: str
    """What to do instead."""


PARQUET = Magic(b"PAR1", "a Parquet file", "import it with a format that reads Parquet: "
                "medqa, medmcqa, pubmedqa, jsonl or parquet")
MAGICS: tuple[Magic, ...] = (
    Magic(b"GGUF", "a GGUF model file", "a model is registered with `paw models add`, "
          "not imported"),
    PARQUET,
    Magic(b"PK\x03\x04", "a ZIP archive", "unzip it and import the file inside"),
    Magic(b"PK\x05\x06", "a ZIP archive (empty)", "unzip it and import the file inside"),
    Magic(b"\x1f\x8b", "a gzip-compressed file", "decompress it (gunzip) and import the "
          "file inside"),
    Magic(b"SQLite format 3\x00", "a SQLite database", "a PAW store is opened with --db, "
          "not imported"),
)
"""Binary files recognised by their first bytes (checked before any text is read)."""


def sniff(head: bytes) -> Magic | None:
    """The binary kind whose magic `head` starts with, else None."""
    for magic in MAGICS:
        if head.startswith(magic.prefix):
            return magic
    return None


def refuse_binary(path: str, magic: Magic, expected: str) -> UserError:
    """The one-line refusal of a binary file given where text was expected."""
    return UserError(f"{path}: expected {expected}, got {magic.name} (it starts with "
                     f"{magic.prefix!r}); {magic.hint} (nothing imported)")


class LineTooLong(Exception):
    """A line longer than `LINE_LIMIT`: the reader stops there."""

    def __init__(self, line: int):
        super().__init__(line)
        self.line = line

    expected = f"a line of at most {LINE_LIMIT // (1024 * 1024)} MiB"
    got = "a longer one (no newline within the limit: not a file of one row per line?)"


def binary_lines(handle: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    """`(line number, bytes without the newline)` for each physical line, 1-based.

    Only `\\n` ends a line (a `\\r` before it is dropped); a JSON string may hold U+2028
    or a form feed, which `str.splitlines` would wrongly split on.

    Raises:
        LineTooLong: a line longer than `LINE_LIMIT` bytes (nothing after it is read).
    """
    number = 0
    while True:
        raw = handle.readline(LINE_LIMIT + 2)
        if not raw:
            return
        number += 1
        if raw.endswith(b"\n"):
            raw = raw[:-1]
        elif len(raw) > LINE_LIMIT:
            raise LineTooLong(number)
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if len(raw) > LINE_LIMIT:
            raise LineTooLong(number)
        yield number, raw


def decode_line(raw: bytes, first: bool) -> str:
    """One line as text: bad bytes kept as surrogates (reported by field later)."""
    if first and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    return raw.decode("utf-8", errors="surrogateescape")


def read_whole(handle: IO[bytes], path: str) -> bytes:
    """A one-object file's bytes, refused past `OBJECT_FILE_LIMIT`."""
    data = handle.read(OBJECT_FILE_LIMIT + 1)
    if len(data) > OBJECT_FILE_LIMIT:
        raise UserError(f"{path}: expected a JSON file of at most "
                        f"{OBJECT_FILE_LIMIT // (1024 * 1024)} MiB (one object, read whole), "
                        "got a larger one; import PubMedQA's Hub form (Parquet or JSON "
                        "lines), which is read row by row (nothing imported)")
    return data


_ORI_PQAL = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"\d+"\s*:')
"""The start of `ori_pqal.json`: an object keyed by PMIDs (the Hub form is a row per line,
`{"pubid": …` or `{"question": …`)."""


def is_pmid_object(head: bytes) -> bool:
    """Whether a PubMedQA file is the one-object `ori_pqal.json` form (else JSON lines)."""
    return _ORI_PQAL.match(head) is not None


def parquet_rows(handle: IO[bytes], path: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """`(row number, row as a dict)` for each Parquet row, 1-based, a batch at a time.

    Structs become dicts and lists lists (pyarrow's `to_pylist`).

    Raises:
        UserError: pyarrow missing, or a file pyarrow cannot read (naming the file).
    """
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise UserError(f"{path}: {PARQUET_MISSING}") from None
    import pyarrow

    try:
        # Streamed: no pre-buffering of whole row groups, pages read through a 64 KiB
        # buffer, no read-ahead threads (bench/import_memory.py: with pyarrow's defaults a
        # 200 MB file peaked at 1.9x its size).
        reader = pq.ParquetFile(handle, pre_buffer=False, buffer_size=1 << 16)
        number = 0
        for batch in reader.iter_batches(batch_size=PARQUET_BATCH_ROWS, use_threads=False):
            for row in batch.to_pylist():
                number += 1
                yield number, row
    except (pyarrow.ArrowException, OSError) as exc:
        detail = " ".join(str(exc).split())[:160]
        raise UserError(f"{path}: expected a readable Parquet file, got one pyarrow cannot "
                        f"read ({detail}) (nothing imported)") from None
