"""A report figure drawn in the terminal with plotext (through `textual-plotext`).

Draws any `analysis.common.plotdata.PlotData`, so each figure a report builder gives a
`plot` (the FCS plane, the DBPA ROC, seed 003's Figures 5 and 6, seed 000's power curves,
and whatever later papers add) appears on the Statistics screen with no code here.

Why plotext: it is maintained, pure Python with no dependencies, draws lines, scatter and
stacked bars with axes, ticks and a legend in braille/block characters, and
`textual-plotext` (Textualize's own wrapper) redraws it at the widget's size on every
resize, so one figure fits 80×24 and 120×36 alike. The hand-drawn character grid it
replaces had none of that (no ticks, no legend, no bars).
"""

from __future__ import annotations

import math

import plotext._utility as plotext_utility
from textual_plotext import PlotextPlot

from analysis.common.plotdata import PlotData


def _no_duplicates(data) -> list:
    """`data` without repeats, in first-seen order."""
    return list(dict.fromkeys(data))


# plotext removes repeated points and ticks with `list(set(...))`: the order of (tick, label)
# pairs then follows Python's per-process string hashing, and so does where a bar chart's
# category names land under the bars (seed 003's Figures 5 and 6 moved by a column from
# one run to the next). Its own commented-out alternative keeps the first-seen order.
plotext_utility.no_duplicates = _no_duplicates

MARKER = "braille"
"""Line and scatter marker: braille cells give 2×4 dots per character."""


class FigurePlot(PlotextPlot):
    """Shows one `PlotData` (None: an empty plot saying so)."""

    DEFAULT_CSS = "FigurePlot { height: 1fr; min-height: 12; }"

    def __init__(self, data: PlotData | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.data = data
        """The figure drawn."""

    def show(self, data: PlotData | None) -> None:
        """Draw another figure."""
        self.data = data
        self.refresh()

    def render(self):
        plt = self.plt
        data = self.data
        if data is None:
            plt.clear_data()
            plt.clear_figure()
            plt.title("no figure")
            return super().render()
        # plotext drops a title or an axis name that does not fit its line (at 80 columns
        # a long run name is enough): draw, and cut what went missing until it is shown
        texts = {"title": data.title, "xlabel": _axis("x", data.xlabel),
                 "ylabel": _axis("y", data.ylabel)}
        for _ in range(FIT_TRIES):
            plt.clear_data()
            plt.clear_figure()
            draw(plt, data, rows=self.size.height, **texts)
            shown = super().render()
            missing = [k for k, text in texts.items() if text and text not in shown.plain]
            if not missing:
                break
            for key in missing:
                # the x name shares its line with the y name: cut the longer of the two
                if key == "xlabel" and len(texts["ylabel"]) > len(texts["xlabel"]):
                    key = "ylabel"
                texts[key] = _cut(texts[key])
        return shown


FIT_TRIES = 12
"""Draws of one render at most while cutting a title or axis name to fit."""


def _axis(name: str, label: str) -> str:
    # plotext prints both axis names on one line under the plot (y's on the left), so each
    # says which axis it names
    return f"{name}: {label}" if label else ""


def _cut(text: str) -> str:
    """`text` about an eighth shorter, '…' marking the cut ('' once nothing is left)."""
    keep = len(text.removesuffix("…")) - max(2, len(text) // 8)
    return text[:keep].rstrip() + "…" if keep >= 4 else ""


def _finite(xs: tuple, ys: tuple) -> tuple[list, list]:
    kept = [(x, y) for x, y in zip(xs, ys, strict=True) if y is not None and not
            (isinstance(y, float) and math.isnan(y))]
    return [x for x, _ in kept], [y for _, y in kept]


def draw(plt, data: PlotData, *, rows: int | None = None, title: str | None = None,
         xlabel: str | None = None, ylabel: str | None = None) -> None:
    """Issue the plotext calls for `data` on the plot object `plt`.

    `title`, `xlabel` and `ylabel` replace the figure's (e.g. cut to the width); `rows`,
    the plot's height, leaves room above bars for the legend (see `_headroom`).
    """
    plt.title(data.title if title is None else title)
    plt.xlabel(_axis("x", data.xlabel) if xlabel is None else xlabel)
    plt.ylabel(_axis("y", data.ylabel) if ylabel is None else ylabel)
    bars = [s for s in data.series if s.kind == "bar"]
    if bars:
        labels = [str(x) for x in bars[0].x]
        values = [[0.0 if v is None else float(v) for v in s.y] for s in bars]
        names = [s.label for s in bars]
        if data.stacked:
            plt.stacked_bar(labels, values, labels=names)
        else:
            plt.multiple_bar(labels, values, labels=names)
    for series in data.series:
        if series.kind == "bar":
            continue
        xs, ys = _finite(series.x, series.y)
        if not xs:
            continue
        if series.kind == "scatter":
            plt.scatter(xs, ys, label=series.label, marker="●" if len(xs) == 1 else MARKER)
        else:
            plt.plot(xs, ys, label=series.label, marker=MARKER)
    if data.xlim is not None and not bars:
        plt.xlim(*data.xlim)
    top = _headroom(data, bars, rows)
    if top is not None:
        plt.ylim(data.ylim[0] if data.ylim is not None else 0.0, top)
    elif data.ylim is not None:
        plt.ylim(*data.ylim)


LEGEND_ROWS_FREE = 5
"""Plot rows outside the canvas: title, x ticks, axis names and the two axes."""


def _headroom(data: PlotData, bars: list, rows: int | None) -> float | None:
    """The y top that keeps bars below the legend, or None (no bars, or no room).

    plotext draws the legend over the canvas' top left rows, one a series, and a bar under
    it is hidden there (at 80 columns seed 003's Figure 6 legend covered the first model's
    bar top, which then read 4 flags, not 6): the axis is raised so the tallest bar ends
    below the legend's last row, unless that leaves the bars under a third of the canvas.
    """
    if not bars or rows is None:
        return None
    canvas = rows - LEGEND_ROWS_FREE
    free = canvas - len(bars) - 1
    if free < max(3, canvas / 3):
        return None
    values = [[0.0 if v is None else float(v) for v in s.y] for s in bars]
    tallest = max((sum(col) for col in zip(*values, strict=True)) if data.stacked else
                  (v for col in values for v in col), default=0.0)
    top = max(tallest, data.ylim[1] if data.ylim is not None else 0.0)
    return top * canvas / free if top > 0 else None
