"""A figure as data: the series a report's figure draws, for renderers other than matplotlib.

`Figure.render` draws a PNG for the files; `Figure.plot` (a `PlotData`) carries the same
numbers as plain series so the terminal UI can draw the figure with plotext, and any later
figure that sets it reaches the Statistics screen with no change there. Nothing here
imports a plotting library.
"""

from __future__ import annotations

from dataclasses import dataclass, field

KINDS: tuple[str, ...] = ("line", "scatter", "bar")
"""How a series is drawn: joined points, markers only, or bars (x holds category names)."""


@dataclass(frozen=True)
class Series:
    """One named series of a plot.

    Attributes:
        label: the legend entry.
        x: x values (numbers; for `bar`, the category names as strings).
        y: y values, one per x (NaN or None: not drawn).
        kind: one of `KINDS`.
    """

    label: str
    x: tuple
    y: tuple
    kind: str = "line"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if len(self.x) != len(self.y):
            raise ValueError(f"{self.label}: {len(self.x)} x values but {len(self.y)} y values")


@dataclass(frozen=True)
class PlotData:
    """The numbers of one figure: axes, limits, series, and notes listed under it.

    Attributes:
        title: the plot's title.
        xlabel, ylabel: axis labels.
        series: what is drawn, in legend order.
        xlim, ylim: axis ranges (None: from the data).
        notes: lines shown under the plot (e.g. each point's exact coordinates).
        stacked: for bar series, stack them (Figures 5/6) instead of side by side.
    """

    title: str
    xlabel: str
    ylabel: str
    series: tuple[Series, ...]
    xlim: tuple[float, float] | None = None
    ylim: tuple[float, float] | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    stacked: bool = False
