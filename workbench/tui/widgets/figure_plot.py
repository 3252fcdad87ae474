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

from textual_plotext import PlotextPlot

from analysis.common.plotdata import PlotData

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
        plt.clear_data()
        plt.clear_figure()
        data = self.data
        if data is None:
            plt.title("no figure")
            return super().render()
        draw(plt, data)
        return super().render()


def _finite(xs: tuple, ys: tuple) -> tuple[list, list]:
    kept = [(x, y) for x, y in zip(xs, ys) if y is not None and not
            (isinstance(y, float) and math.isnan(y))]
    return [x for x, _ in kept], [y for _, y in kept]


def draw(plt, data: PlotData) -> None:
    """Issue the plotext calls for `data` on the plot object `plt`."""
    plt.title(data.title)
    # plotext prints both axis names on one line under the plot (y's on the left), so each
    # says which axis it names
    plt.xlabel(f"x: {data.xlabel}" if data.xlabel else "")
    plt.ylabel(f"y: {data.ylabel}" if data.ylabel else "")
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
    if data.ylim is not None:
        plt.ylim(*data.ylim)
