"""A report as data: titled sections (DataFrames) and figures, rendered to Markdown, HTML, JSON.

Every analysis (the seed-002 audit, the seed-000 study, DBPA, the seed-003 profiles, the
clinician tables) produces `Section`s and `Figure`s; the CLI writes them as files, the UI
shows the same sections as tables. Nothing here knows any paper: `workbench.kinds` picks
the builder for a stored run by its kind.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from analysis.common.plotdata import PlotData

FORMATS: tuple[str, ...] = ("md", "html")
"""Document formats of `Report.write` (JSON is written with `Report.to_json`)."""


@dataclass(frozen=True)
class Section:
    """One titled table of a report.

    Other packages (e.g. `annotate.stats`) build `Section`s too, and the CLI appends them to
    a report's own sections before rendering, so every table reaches every format.

    Attributes:
        title: heading, e.g. "Table 3: per-arm summary".
        frame: the table; a named index is rendered as the first column. Columns `x`,
            `x_low`, `x_high` are shown as one cell "x [low, high]".
        note: one paragraph under the table (definitions, exclusions, n).
        key: machine name used as the JSON key (default: derived from the title).
    """

    title: str
    frame: pd.DataFrame
    note: str = ""
    key: str = ""

    @property
    def json_key(self) -> str:
        """`key` if set, else the title lower-cased with non-alphanumerics as '_'."""
        if self.key:
            return self.key
        return re.sub(r"[^a-z0-9]+", "_", self.title.lower()).strip("_")


@dataclass(frozen=True)
class Figure:
    """A plot of a report, drawn on demand (matplotlib is slow to import).

    Attributes:
        name: file-name suffix: the PNG is written as `<report stem>_<name>.png`.
        caption: alt text / caption.
        render: returns the PNG bytes.
        text: optionally, the same plot drawn with characters (a terminal plot), shown
            under the image in Markdown and HTML.
        after: the JSON key of the section the figure is shown under in Markdown and HTML
            (default "": above the first section).
        plot: the same figure's numbers as series (`analysis.common.plotdata`), which the
            terminal UI draws; a callable so they are computed only when shown. None: the
            figure exists only as a PNG.
        short: a few words that tell this figure from the report's others in a narrow
            list (the Statistics screen's); default: the caption.
    """

    name: str
    caption: str
    render: Callable[[], bytes]
    text: Callable[[], str] | None = None
    after: str = ""
    plot: Callable[[], PlotData] | None = None
    short: str = ""


@dataclass(frozen=True)
class Report:
    """A rendered-on-demand report: metadata, sections and figures.

    `sections` and `figures` are lists so callers may append from elsewhere before writing.
    """

    title: str
    meta: dict[str, Any]
    sections: list[Section] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)

    def section(self, key: str) -> Section | None:
        """The section with this JSON key, if any."""
        return next((s for s in self.sections if s.json_key == key), None)

    def figure_png(self) -> bytes | None:
        """The first figure's PNG (None when the report has no figure)."""
        return self.figures[0].render() if self.figures else None

    def to_markdown(self, figures: str | list[str] | None = None) -> str:
        """Markdown text; `figures` = path(s) of the PNGs relative to the Markdown file,
        in the order of `self.figures` (a single string is the first figure)."""
        from analysis.common.render import render_markdown

        paths = [figures] if isinstance(figures, str) else list(figures or [])
        shown = [(fig.caption, path, fig.text() if fig.text else None, fig.after)
                 for fig, path in zip(self.figures, paths, strict=False)]  # unlisted: unshown
        return render_markdown(self.title, self.meta, self.sections, shown)

    def to_html(self, embed_figures: bool = True) -> str:
        """One self-contained HTML page (the PNGs embedded when `embed_figures`)."""
        from analysis.common.render import render_html

        shown = [(fig.caption, fig.render(), fig.text() if fig.text else None, fig.after)
                 for fig in self.figures] if embed_figures else []
        return render_html(self.title, self.meta, self.sections, shown)

    def to_json(self) -> str:
        """The same numbers as JSON (NaN → null)."""
        from analysis.common.render import render_json

        return render_json(self.meta, self.sections)

    def write(self, out: str | Path, fmt: str = "md") -> tuple[Path, tuple[Path, ...]]:
        """Write the report to `out` and each figure beside it (`<stem>_<name>.png`).

        Returns:
            (report path, PNG paths in figure order).
        """
        from analysis.common.render import render_html

        out = Path(out)
        if fmt not in FORMATS:
            raise ValueError(f"format must be one of {FORMATS}, got {fmt!r}")
        out.parent.mkdir(parents=True, exist_ok=True)
        pngs: list[tuple[Figure, bytes, Path]] = []
        for fig in self.figures:
            data = fig.render()
            path = out.with_name(f"{out.stem}_{fig.name}.png")
            path.write_bytes(data)
            pngs.append((fig, data, path))
        if fmt == "md":
            out.write_text(self.to_markdown([p.name for _, _, p in pngs]), encoding="utf-8")
        else:
            out.write_text(render_html(self.title, self.meta, self.sections,
                                       [(f.caption, data, f.text() if f.text else None, f.after)
                                        for f, data, _ in pngs]),
                           encoding="utf-8")
        return out, tuple(p for _, _, p in pngs)
