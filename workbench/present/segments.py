"""Styled runs of text, drawn two ways: a Rich `Text` (a terminal, the UI's panes) or plain text
with wdiff's [-removed-] / {+inserted+} markers (a pipe).

A run's style is a name (`STYLES`), not a Rich style, so the plain rendering knows which
runs are the edit's and the tests can compare what two front ends were given.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text

Segment = tuple[str, str | None]
"""A run of text and its style name (None: unstyled)."""

STYLES: dict[str, str] = {
    "removed": "bold strike red",
    "inserted": "bold black on green",
    "heading": "bold underline",
    "title": "bold",
    "flip": "bold red",
    "kept": "bold green",
    "dim": "dim",
    "gold": "bold green",
    "chosen": "bold yellow",
    "before": "cyan",
    "after": "magenta",
}
"""Rich style of each style name."""

MARKERS: dict[str, tuple[str, str]] = {"removed": ("[-", "-]"), "inserted": ("{+", "+}")}
"""How a highlighted run is marked in plain text (wdiff's notation)."""

BAR_WIDTH = 20
"""Cells of a probability bar at p = 1."""

_EIGHTHS = " ▏▎▍▌▋▊▉"


def bar(p: float, plain: bool = False, width: int = BAR_WIDTH) -> str:
    """A fixed-width bar for probability `p`: eighth-blocks, or '#' in plain text.

    Args:
        p: the probability (clipped to [0, 1]).
        plain: '#' per cell (a pipe, where block characters may not survive).
        width: cells at p = 1.
    """
    p = max(0.0, min(1.0, float(p)))
    if plain:
        return ("#" * round(p * width)).ljust(width)
    full, part = divmod(round(p * width * 8), 8)
    return ("█" * full + (_EIGHTHS[part] if part else "")).ljust(width)


def marked(text: str, spans: Sequence[tuple[int, int]], style: str) -> list[Segment]:
    """`text` cut into runs, the `spans` (half-open character ranges) in `style`."""
    out: list[Segment] = []
    at = 0
    for start, end in sorted(spans):
        start, end = max(start, at), min(end, len(text))
        if start >= end:
            continue
        if start > at:
            out.append((text[at:start], None))
        out.append((text[start:end], style))
        at = end
    if at < len(text):
        out.append((text[at:], None))
    return out


def lines(rows: Iterable[Sequence[str | Segment]]) -> list[Segment]:
    """Rows of runs (a bare string is unstyled) joined by newlines into one run list."""
    out: list[Segment] = []
    for n, row in enumerate(rows):
        if n:
            out.append(("\n", None))
        out += [(run, None) if isinstance(run, str) else run for run in row]
    return out


def plain_text(segments: Iterable[Segment]) -> str:
    """The runs as plain text, the edit's runs between wdiff's markers."""
    parts = []
    for text, style in segments:
        left, right = MARKERS.get(style or "", ("", ""))
        parts.append(f"{left}{text}{right}")
    return "".join(parts)


def styled(segments: Iterable[Segment]) -> Text:
    """The runs as a Rich `Text` (every style name resolved through `STYLES`)."""
    from rich.text import Text

    out = Text()
    for text, style in segments:
        out.append(text, style=STYLES.get(style or "", ""))
    return out
