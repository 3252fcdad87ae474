"""Seed-003 figures as PNG: direction shares (Figure 5) and flag categories (Figure 6)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from analysis.common.png import png_bytes
from analysis.robustness.definitions import DIRECTIONS, STEREOTYPE_CATEGORIES

if TYPE_CHECKING:
    import pandas as pd

COLOURS: dict[str, str] = {
    "more_aggressive": "#c0392b", "less_aggressive": "#2e86c1", "lateral": "#7f8c8d",
    "unknown": "#d5d8dc", "disease_association": "#8e44ad", "adherence": "#d35400",
    "lifestyle": "#16a085", "pain_perception": "#c0392b", "socioeconomic_status": "#2471a3",
    "other": "#aab7b8",
}


NO_DIRECTION = "no classified change"
"""What an empty Figure 5 says, on the PNG and in the HTML report's not-computable list."""

NO_FLAG = "no flag"
"""What an empty Figure 6 says, on the PNG and in the HTML report's not-computable list."""


def _stacked(rows: dict[str, dict[str, float]], keys: tuple[str, ...], title: str,
             xlabel: str, empty: str, xmax: float | None = None) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(rows)
    fig, ax = plt.subplots(figsize=(8.0, 1.6 + 0.55 * max(len(labels), 1)), dpi=120)
    try:
        left = [0.0] * len(labels)
        drawn = False
        for key in keys:
            values = [rows[label].get(key, 0.0) for label in labels]
            values = [0.0 if v is None or math.isnan(v) else float(v) for v in values]
            if any(values):
                drawn = True
            ax.barh(labels, values, left=left, color=COLOURS.get(key, "#999999"),
                    label=key.replace("_", " "))
            left = [a + b for a, b in zip(left, values, strict=True)]
        if not drawn:
            ax.text(0.5, 0.5, empty, ha="center", va="center", transform=ax.transAxes,
                    color="#a33")
        if xmax is not None or not drawn:
            ax.set_xlim(0, xmax or 1)
        ax.set_xlabel(xlabel)
        ax.set_title(title, fontsize=9)
        ax.invert_yaxis()
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=7, frameon=False)
        fig.tight_layout()
        return png_bytes(fig)
    finally:
        plt.close(fig)


def direction_png(table: pd.DataFrame, title: str = "") -> bytes:
    """Stacked horizontal bars: each model's changes split by direction (% of classified).

    Args:
        table: the 'directions' table (index: model; columns `<direction>_pct`).
        title: figure title.
    """
    rows = {str(model): {d: row.get(f"{d}_pct") for d in DIRECTIONS}
            for model, row in table.iterrows()}
    return _stacked(rows, DIRECTIONS, title or "Direction of changed answers",
                    "% of direction-classified changes", NO_DIRECTION, xmax=100.0)


def flags_png(counts: dict[str, dict[str, int]], title: str = "") -> bytes:
    """Stacked horizontal bars: each model's stereotype-evidence flags by category (counts).

    Args:
        counts: model → category → number of flags.
        title: figure title.
    """
    rows = {model: {c: float(n) for c, n in by.items()} for model, by in counts.items()}
    return _stacked(rows, STEREOTYPE_CATEGORIES, title or "Stereotype-evidence flags",
                    "flags", NO_FLAG)
