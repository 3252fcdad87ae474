"""Seed 000's figures: Figures 2 and 3 (flip rate and MI against the token-change level) as PNG
and as a terminal plot, and the paraphrase agreement scatter."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from analysis.common.document import Figure
from analysis.common.plotdata import PlotData, Series
from analysis.common.png import png_bytes

if TYPE_CHECKING:
    import pandas as pd

MARKERS = "●■▲◆★✚"
"""One marker per line of a terminal plot (then letters)."""


def text_plot(series: Mapping[str, Sequence[tuple[float, float]]], *, title: str,
              x_label: str, y_label: str, width: int = 48, height: int = 12) -> str:
    """A line plot drawn with characters: each series a marker at its points.

    Args:
        series: name → (x, y) points; NaN points are left out.
        title, x_label, y_label: labels.
        width, height: plot area in cells.

    Returns:
        The plot as lines of text (axes with their ranges, a legend line per series).
    """
    points = [(x, y) for pts in series.values() for x, y in pts
              if math.isfinite(x) and math.isfinite(y)]
    if not points:
        return f"{title}\n(nothing to plot)"
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x_lo, x_hi = min(0.0, min(xs)), max(xs) if max(xs) > 0 else 1.0
    y_lo, y_hi = min(0.0, min(ys)), max(ys) if max(ys) > 0 else 1.0
    grid = [[" "] * width for _ in range(height)]
    legend = []
    for number, (name, pts) in enumerate(series.items()):
        mark = MARKERS[number] if number < len(MARKERS) else chr(ord("a") + number)
        shown = [(x, y) for x, y in sorted(pts) if math.isfinite(x) and math.isfinite(y)]
        for x, y in shown:
            col = round((x - x_lo) / (x_hi - x_lo) * (width - 1)) if x_hi > x_lo else 0
            row = round((y_hi - y) / (y_hi - y_lo) * (height - 1)) if y_hi > y_lo else 0
            grid[row][col] = mark
        values = ", ".join(f"{x:.2f}→{y:.3f}" for x, y in shown)
        legend.append(f"{mark} {name}: {values}")
    lines = [title]
    for row, cells in enumerate(grid):
        tick = f"{y_hi:6.3f}" if row == 0 else f"{y_lo:6.3f}" if row == height - 1 else " " * 6
        lines.append(f"{tick} │{''.join(cells)}")
    lines.append(" " * 7 + "└" + "─" * width)
    left, right = f"{x_lo:.2f}", f"{x_hi:.2f}"
    lines.append(" " * 8 + left + " " * max(1, width - len(left) - len(right)) + right)
    lines.append(f"{' ' * 8}x: {x_label}; y: {y_label}")
    return "\n".join(lines + legend)


def _series(frame: pd.DataFrame, model: str, metric: str) -> dict[str, list[tuple[float, float]]]:
    part = frame[frame["model"] == model]
    return {task: list(zip(g["achieved_mean"].astype(float), g[metric].astype(float), strict=True))
            for task, g in part.groupby("task", sort=False)}


def dose_png(frame: pd.DataFrame, metric: str, title: str, y_label: str) -> bytes:
    """One panel per model: `metric` against the achieved token-change fraction, a line
    per task (Figure 2 for the flip rate, Figure 3 for MI)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = list(dict.fromkeys(frame["model"]))
    fig, axes = plt.subplots(1, max(1, len(models)), figsize=(4.2 * max(1, len(models)), 3.6),
                             dpi=110, squeeze=False)
    try:
        for ax, model in zip(axes[0], models, strict=False):  # one empty axis if no model
            for task, pts in _series(frame, model, metric).items():
                pts = sorted(p for p in pts if np.isfinite(p).all())
                if pts:
                    ax.plot([100 * x for x, _ in pts], [y for _, y in pts], marker="o",
                            label=task)
            ax.set_title(model, fontsize=9)
            ax.set_xlabel("tokens changed by the paraphrase (%)")
            ax.set_ylabel(y_label)
            ax.set_ylim(bottom=0)
            ax.legend(fontsize=7)
        fig.suptitle(title, fontsize=10)
        fig.tight_layout()
        return png_bytes(fig)
    finally:
        plt.close(fig)


def dose_figures(frame: pd.DataFrame) -> list[Figure]:
    """Figures 2 (flip rate) and 3 (MI), each as PNG with its terminal plot."""
    figures = []
    for name, metric, title, y_label in (
            ("figure2_flip_rate", "flip_rate", "Figure 2: flip rate against tokens changed",
             "flip rate"),
            ("figure3_mi", "mi", "Figure 3: MI (bits) against tokens changed", "MI (bits)")):
        def render(metric=metric, title=title, y_label=y_label) -> bytes:
            return dose_png(frame, metric, title, y_label)

        def text(metric=metric, title=title, y_label=y_label) -> str:
            blocks = []
            for model in dict.fromkeys(frame["model"]):
                part = frame[frame["model"] == model]
                levels = "\n".join(
                    f"  {r.task}: level {r.level:g} → achieved {r.achieved_mean:.3f}, "
                    f"{y_label} {getattr(r, metric):.3f} (n = {r.n_pairs})"
                    for r in part.itertuples(index=False))
                blocks.append(text_plot(_series(frame, model, metric),
                                        title=f"{title} — {model}",
                                        x_label="achieved token-change fraction",
                                        y_label=y_label) + "\n" + levels)
            return "\n\n".join(blocks)

        figures.append(Figure(name, title, render, text,
                              plot=functools.partial(dose_data, frame, metric, title, y_label)))
    return figures


def dose_data(frame: pd.DataFrame, metric: str, title: str, y_label: str) -> PlotData:
    """Figure 2 or 3 as series for the Statistics screen's plotext plot: a line per
    (model, task) against the achieved fraction; the notes give every point's numbers."""
    series, notes = [], []
    for model in dict.fromkeys(frame["model"]):
        for task, pts in _series(frame, model, metric).items():
            shown = sorted(p for p in pts if math.isfinite(p[0]) and math.isfinite(p[1]))
            if shown:
                series.append(Series(f"{model} · {task}", tuple(x for x, _ in shown),
                                     tuple(y for _, y in shown)))
        part = frame[frame["model"] == model]
        notes += [f"{model} · {r.task}: level {r.level:g} → achieved {r.achieved_mean:.3f}, "
                  f"{y_label} {getattr(r, metric):.3f} (n = {r.n_pairs})"
                  for r in part.itertuples(index=False)]
    return PlotData(title, "achieved token-change fraction", y_label, tuple(series),
                    notes=tuple(notes))


def paraphrase_figure(paraphrases: pd.DataFrame, name: str) -> Figure:
    """Achieved against target token-change fraction, one point per unit."""

    def render() -> bytes:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5.0, 4.6), dpi=120)
        try:
            fired = paraphrases[paraphrases["fired"]] if len(paraphrases) else paraphrases
            top = max(0.1, float(np.nanmax(fired[["target_fraction", "achieved_fraction"]]
                                           .to_numpy())) * 1.1) if len(fired) else 0.1
            tol = float(paraphrases["tolerance"].iloc[0]) if len(paraphrases) else 0.0
            x = np.linspace(0, top, 50)
            ax.fill_between(x, x - tol, x + tol, color="#dde6f0", label=f"± {tol:g}")
            ax.plot(x, x, color="#7a8797", lw=1, ls="--")
            for source, marker in (("llm", "o"), ("fallback", "s"), ("llm_closest", "^")):
                part = fired[fired["source"] == source] if len(fired) else fired
                if len(part):
                    ax.scatter(part["target_fraction"], part["achieved_fraction"], s=18,
                               marker=marker, label=source)
            ax.set_xlim(0, top)
            ax.set_ylim(0, top)
            ax.set_xlabel("target fraction (targeted edit)")
            ax.set_ylabel("achieved fraction (paraphrase)")
            ax.set_title(f"{name}: token-change agreement")
            ax.legend(fontsize=7)
            fig.tight_layout()
            return png_bytes(fig)
        finally:
            plt.close(fig)

    return Figure("paraphrase_fractions", "paraphrase: achieved vs target token-change fraction",
                  render)
