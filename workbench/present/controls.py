"""Control characters in text PAW shows: stored as typed, shown escaped.

A rater's note, a set, dataset or rater name, a model's answer or an imported question may
hold terminal control sequences (OSC 52 writes the reader's clipboard, CSI 2J clears the
screen, a lone carriage return hides what came before it on the line). `escape_controls`
shows every C0 and C1 control character and DEL as a visible escape (`\\x1b`, `\\x9b`,
`\\x7f`), keeping only newline, tab and a CR-LF line end. `paw` writes all of its output
through `EscapingStream` (installed by `workbench.cli.main`), so no command can print one
raw; the two Rich consoles that colour their output on purpose (a case's panes, progress
bars) write through `EscapingStream(..., keep_sgr=True)` or the raw stream with only PAW's
own text. In the UI (`workbench.tui.controls`), every Rich `Text` and Textual `Content`
built from a string shows them the same way (`ESCAPE_TABLE`).
"""

from __future__ import annotations

import re
from typing import Any

_CONTROL = re.compile(r"\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_KEEP_SGR = re.compile(r"\x1b\[[0-9;]*m|\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_NAMES = {"\r": "\\r", "\x1b": "\\x1b"}


def _shown(match: re.Match[str]) -> str:
    found = match.group(0)
    if found == "\r\n" or len(found) > 1:
        return found  # a line end, or (keep_sgr) a colour sequence
    return _NAMES.get(found) or f"\\x{ord(found):02x}"


def escape_controls(text: str, *, keep_sgr: bool = False) -> str:
    """`text` with every C0/C1 control and DEL shown as `\\xNN` (newline, tab and CR-LF
    kept; with `keep_sgr`, SGR colour sequences `ESC [ … m` kept too)."""
    pattern = _CONTROL_KEEP_SGR if keep_sgr else _CONTROL
    return pattern.sub(_shown, text)


ESCAPE_TABLE: dict[int, str] = {
    code: f"\\x{code:02x}" for code in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0))
    if code not in (0x09, 0x0A, 0x08, 0x0B, 0x0C, 0x0D)}
"""`str.translate` table of the UI: each C0/C1 control and DEL shown as `\\xNN`, except
tab and newline (kept) and backspace, vertical tab, form feed and carriage return, which
Rich and Textual already drop."""


class EscapingStream:
    """A text stream that escapes control characters in everything written to it (see the
    module docstring); every other attribute is the wrapped stream's."""

    def __init__(self, stream: Any, *, keep_sgr: bool = False) -> None:
        self.raw = stream
        self.keep_sgr = keep_sgr

    def write(self, text: str) -> int:
        self.raw.write(escape_controls(text, keep_sgr=self.keep_sgr))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def raw_stream(stream: Any) -> Any:
    """The stream under an `EscapingStream` (itself otherwise)."""
    return stream.raw if isinstance(stream, EscapingStream) else stream
