"""Reading import files row by row, each row tagged with the line it starts on.

Readers never raise on a bad row: they yield a `RawRow` carrying a `RowError`, so the
importer can either stop at the first one or skip it (`--skip-bad`). Bytes that are not
UTF-8 are decoded with `surrogateescape` and reported on the row that contains them,
which is what lets `--skip-bad` keep the other rows of a file with one bad byte.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from workbench.datasets.sources import LineTooLong, binary_lines, decode_line

# surrogateescape maps each undecodable byte 0xNN to the lone surrogate U+DCNN.
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")
# Any other surrogate comes from a JSON escape such as "\ud800" with no partner: SQLite
# cannot store it as UTF-8 text.
_SURROGATE = re.compile("[\ud800-\udfff]")

_BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"), (b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"),
    (b"\xfe\xff", "UTF-16 (big-endian)"), (b"\xff\xfe", "UTF-16 (little-endian)"),
)
"""Byte-order marks of the encodings a spreadsheet or Windows tool may save instead of
UTF-8 (longest first: the UTF-32 LE mark begins with the UTF-16 LE one)."""


class RowError(Exception):
    """What is wrong with one row: the field, what was expected, what was found.

    `reason` is the short category counted in the `--skip-bad` report. (A plain
    exception, not a frozen dataclass: Python assigns `__traceback__` when re-raising.)
    """

    def __init__(self, field: str, expected: str, got: str, reason: str = "invalid value"):
        super().__init__(field, expected, got, reason)
        self.field = field
        self.expected = expected
        self.got = got
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.field}: expected {self.expected}, got {self.got}"


@dataclass(frozen=True)
class RawRow:
    """One row as read: its 1-based starting line and either its value or its error.

    A `fatal` error means the reader could not go on (the rest of the file cannot be
    located), so even `--skip-bad` must stop rather than silently drop the remainder.
    """

    line: int
    value: Any = None
    error: RowError | None = None
    fatal: bool = False
    clean: bool = False
    """The reader knows the value holds no undecodable byte, lone surrogate or over-long
    number, so `encoding_error` need not walk it."""


def shown(value: Any, limit: int = 40) -> str:
    """A short, quoted rendering of a found value for error messages."""
    if isinstance(value, str):
        value = _ESCAPED_BYTE.sub(lambda m: f"\\x{ord(m.group()) - 0xDC00:02x}", value)
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def foreign_encoding(data: bytes) -> str | None:
    """The name of a UTF-16/UTF-32 encoding the bytes are in, else None.

    Found by the byte-order mark, or without one by NUL bytes in every other position of
    the first line (ASCII text saved as UTF-16); UTF-8 text has no NUL bytes.
    """
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name
    head = data[:200]
    if len(head) >= 4 and head.count(0) * 3 >= len(head):
        evens, odds = head[0::2].count(0), head[1::2].count(0)
        if odds > evens * 3:
            return "UTF-16 (little-endian, no byte-order mark)"
        if evens > odds * 3:
            return "UTF-16 (big-endian, no byte-order mark)"
    return None


def decode(data: bytes) -> str:
    """UTF-8 text (a leading byte-order mark dropped), bad bytes kept as surrogates."""
    return data.decode("utf-8-sig", errors="surrogateescape")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads keeps the last of two equal keys silently; an import must not guess.
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise RowError(key, "each key once in an object", f"key {shown(key)} twice",
                           reason="duplicate key")
        out[key] = value
    return out


MAX_DIGITS = 4300
"""Python's limit on digits when turning text into an integer (`sys.get_int_max_str_digits`);
a longer integer in a JSON file is refused by field, never an internal error."""


class LongNumber(str):
    """An integer literal longer than `MAX_DIGITS`, kept as its text to be refused by field."""


def _parse_int(text: str) -> int | LongNumber:
    return int(text) if len(text.lstrip("-")) <= MAX_DIGITS else LongNumber(text)


def parse_json(text: str) -> Any:
    """`json.loads` that refuses repeated keys and too-deep nesting with a `RowError`.

    Raises:
        json.JSONDecodeError: the text is not JSON (the caller names line and column).
        RowError: an object repeats a key, or the nesting is deeper than Python's
            recursion limit (the C parser recurses once per level).
    """
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_int=_parse_int)
    except RecursionError:
        raise RowError("line", "JSON nested at most a few hundred levels deep",
                       "deeper nesting (Python's recursion limit)",
                       reason="invalid JSON") from None


def encoding_error(value: Any, field: str = "line") -> RowError | None:
    """A `RowError` if any string inside `value` holds a byte that was not UTF-8, or an
    integer is longer than `MAX_DIGITS`."""
    if isinstance(value, LongNumber):
        return RowError(field, f"a number of at most {MAX_DIGITS:,} digits",
                        f"one of {len(value.lstrip('-')):,} digits")
    if isinstance(value, str):
        match = _ESCAPED_BYTE.search(value)
        if match:
            byte = ord(match.group()) - 0xDC00
            return RowError(field, "UTF-8 text", f"byte 0x{byte:02x}", reason="not UTF-8")
        match = _SURROGATE.search(value)
        if match:
            return RowError(field, "text without unpaired surrogates",
                            f"the escape \\u{ord(match.group()):04x} with no partner",
                            reason="not UTF-8")
        return None
    if isinstance(value, dict):
        for key, inner in value.items():
            found = encoding_error(key, field) or encoding_error(inner, str(key))
            if found:
                return found
    if isinstance(value, list | tuple):
        for inner in value:
            found = encoding_error(inner, field)
            if found:
                return found
    return None


_SUSPECT = re.compile(r"[\ud800-\udfff]|\\u[dD][89a-fA-F]|[0-9]{%d}" % (MAX_DIGITS + 1))
"""What `encoding_error` looks for, as it appears in a line of JSON text."""


def _clean_json(line: str) -> bool:
    return _SUSPECT.search(line) is None


def json_error(exc: json.JSONDecodeError, line: bool = False) -> str:
    """`Expecting ',' delimiter at column 6` (json's message ending in "at" read once)."""
    where = f"line {exc.lineno} column {exc.colno}" if line else f"column {exc.colno}"
    return f"{exc.msg} {where}" if exc.msg.endswith(" at") else f"{exc.msg} at {where}"


def json_kind(value: Any) -> str:
    """A JSON value's kind as JSON names it (`null`, `an array`, …), not Python's type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def read_jsonl(handle: IO[bytes]) -> Iterator[RawRow]:
    """One JSON object per non-blank line, read a line at a time (bounded memory).

    Bad bytes are reported later, by field. A line longer than `LINE_LIMIT` is a fatal
    row error: nothing after it is read.
    """
    lines = binary_lines(handle)
    while True:
        try:
            number, raw = next(lines)
        except StopIteration:
            return
        except LineTooLong as exc:
            yield RawRow(exc.line, error=RowError("line", exc.expected, exc.got,
                                                  reason="line too long"), fatal=True)
            return
        line = decode_line(raw, number == 1)
        if not line.strip():
            continue
        try:
            value = parse_json(line)
        except json.JSONDecodeError as exc:
            yield RawRow(number, error=RowError(
                "line", "a JSON object", f"invalid JSON ({json_error(exc)})",
                reason="invalid JSON"))
            continue
        except RowError as exc:
            yield RawRow(number, error=exc)
            continue
        if not isinstance(value, dict):
            hint = (" (a JSON array of rows? write the file as JSON lines, one object per "
                    "line: pandas to_json(orient='records', lines=True))"
                    if isinstance(value, list) and value and isinstance(value[0], dict)
                    else "")
            yield RawRow(number, error=RowError(
                "line", "a JSON object", json_kind(value) + hint, reason="invalid JSON"))
            continue
        yield RawRow(number, value=value, clean=_clean_json(line))


def _text_lines(handle: IO[bytes]) -> Iterator[str]:
    for number, raw in binary_lines(handle):
        yield decode_line(raw, number == 1) + "\n"


def read_csv(handle: IO[bytes], header: bool) -> Iterator[RawRow]:
    """CSV rows; with `header`, each row is a dict keyed by the header's column names.

    Blank lines are skipped. A row's line is where it starts (a quoted cell may span
    several lines). Lines are read one at a time, each at most `LINE_LIMIT` bytes.
    """
    # strict: an unterminated quote is an error (not a row that swallows the rest of the
    # file and then reports a wrong cell count).
    reader = csv.reader(_text_lines(handle), strict=True)
    columns: list[str] | None = None
    previous_end = 0
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except LineTooLong as exc:
            yield RawRow(exc.line, fatal=True, error=RowError(
                "line", exc.expected, exc.got, reason="line too long"))
            return
        except csv.Error as exc:
            what = ("a quote opened on this line is never closed"
                    if "unexpected end of data" in str(exc) else str(exc))
            yield RawRow(previous_end + 1, fatal=True, error=RowError(
                "line", "a CSV row", f"unreadable CSV ({what})", reason="invalid CSV"))
            return  # the csv module cannot resynchronise after a malformed quote
        start, previous_end = previous_end + 1, reader.line_num
        if not any(cell.strip() for cell in cells):
            continue
        if header and columns is None:
            columns = [cell.strip() for cell in cells]
            bad = encoding_error(columns, "header")
            if bad:
                yield RawRow(start, error=bad, fatal=True)
                return
            continue
        if columns is None:
            yield RawRow(start, value=cells)
        elif len(cells) != len(columns):
            yield RawRow(start, error=RowError(
                "line", f"{len(columns)} cells (one per header column)", f"{len(cells)}",
                reason="invalid CSV"))
        else:
            yield RawRow(start, value=dict(zip(columns, cells, strict=True)))


_SPACE = re.compile(r"\s*")


def _past_space(text: str, index: int) -> int:
    """The first position at or after `index` that is not whitespace."""
    found = _SPACE.match(text, index)  # `\s*` always matches, if only the empty string
    return found.end() if found is not None else index

def read_json_object(data: bytes) -> Iterator[RawRow]:
    """Entries of one top-level JSON object (`{"id": {...}, ...}`), as `(key, value)` rows.

    The whole file must be valid JSON (an error there names its line and stops the
    import even with `--skip-bad`: no entry after it can be located reliably). Each
    entry's line is the line of its key.
    """
    text = decode(data)
    try:
        # Parse once up front so a syntax error anywhere is reported with its line.
        json.loads(text, parse_int=_parse_int)
    except RecursionError:
        yield RawRow(1, error=RowError("file", "JSON nested at most a few hundred levels deep",
                                       "deeper nesting (Python's recursion limit)",
                                       reason="invalid JSON"), fatal=True)
        return
    except json.JSONDecodeError as exc:
        yield RawRow(exc.lineno, error=RowError(
            "file", "a JSON object of id -> entry", f"invalid JSON ({json_error(exc)})",
            reason="invalid JSON"), fatal=True)
        return
    # A repeated top-level key is a repeated id (reported per row below); a repeated key
    # inside one entry is that entry's error.
    decoder = json.JSONDecoder(parse_int=_parse_int)
    strict = json.JSONDecoder(object_pairs_hook=_no_duplicate_keys, parse_int=_parse_int)
    index = _past_space(text, 0)
    if not text.startswith("{", index):
        yield RawRow(text.count("\n", 0, index) + 1, error=RowError(
            "file", "a JSON object of id -> entry", shown(text[index:index + 20]),
            reason="invalid JSON"), fatal=True)
        return
    index = _past_space(text, index + 1)
    while text[index] != "}":
        line = text.count("\n", 0, index) + 1
        key, index = decoder.raw_decode(text, index)
        index = _past_space(text, index) + 1  # past ':'
        index = _past_space(text, index)
        try:
            value, end = strict.raw_decode(text, index)
        except RowError as exc:
            _, index = decoder.raw_decode(text, index)
            yield RawRow(line, error=exc)
        else:
            index = end
            yield RawRow(line, value=(key, value))
        index = _past_space(text, index)
        if text[index] == ",":
            index = _past_space(text, index + 1)
