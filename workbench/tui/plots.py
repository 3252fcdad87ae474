"""Terminal plots drawn as text (no textual here): the (AFR_D, AFR_P) plane of seed 002.

A character grid keeps the plot exact at any terminal size and stable in snapshot tests;
each arm is a numbered marker, the iso-FCS corridor is shaded where
FCS = 0.5·AFR_D + 0.5·(1 − AFR_P) lies in the corridor.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

CORRIDOR_MARK = "·"
"""Cells inside the iso-FCS corridor."""


def fcs_plane_text(points: Sequence[tuple[str, float, float]], corridor: tuple[float, float],
                   width: int = 41, height: int = 15) -> list[str]:
    """The plane as lines of text.

    Args:
        points: (label, AFR_D, AFR_P) per arm; NaN coordinates are listed, not drawn.
        corridor: (low, high) FCS bounds of the corridor.
        width, height: plot area in cells (x: AFR_D 0→1 left to right; y: AFR_P 0→1
            bottom to top).

    Returns:
        The plot lines, the axis, then a legend line per arm ("1 smol/cot (0.42, 0.10)").
    """
    lo, hi = corridor
    grid = [[" "] * width for _ in range(height)]
    for row in range(height):
        afr_p = 1.0 - row / (height - 1)
        for col in range(width):
            afr_d = col / (width - 1)
            fcs = 0.5 * afr_d + 0.5 * (1.0 - afr_p)
            if lo <= fcs <= hi:
                grid[row][col] = CORRIDOR_MARK
    legend = []
    for number, (label, afr_d, afr_p) in enumerate(points, start=1):
        marker = str(number) if number < 10 else chr(ord("a") + number - 10)
        if math.isnan(afr_d) or math.isnan(afr_p):
            legend.append(f"{marker} {label} (not computable: nothing fired)")
            continue
        col = min(width - 1, max(0, round(afr_d * (width - 1))))
        row = min(height - 1, max(0, round((1.0 - afr_p) * (height - 1))))
        grid[row][col] = marker
        fcs = 0.5 * afr_d + 0.5 * (1.0 - afr_p)
        legend.append(f"{marker} {label} (AFR_D {afr_d:.2f}, AFR_P {afr_p:.2f}, "
                      f"FCS {fcs:.2f})")
    lines = []
    for row, cells in enumerate(grid):
        tick = "1.0" if row == 0 else "0.0" if row == height - 1 else "   "
        lines.append(f"{tick} │{''.join(cells)}")
    lines.append("    └" + "─" * width)
    lines.append("     0.0" + " " * (width - 14) + "AFR_D 1.0")
    lines.append(f"AFR_P ↑   {CORRIDOR_MARK} iso-FCS corridor [{lo:.2f}, {hi:.2f}]")
    return lines + legend
