"""The (AFR_D, AFR_P) plane with the iso-FCS corridor (seed 002 Figure 2a), as a PNG."""

from __future__ import annotations

import io
import math
from typing import TYPE_CHECKING

from analysis.audit import definitions as d
from analysis.common.document import Figure

if TYPE_CHECKING:
    import pandas as pd

    from analysis.common.plotdata import PlotData


def fcs_plane_png(summary: pd.DataFrame, title: str = "") -> bytes:
    """Draw each arm at (AFR_D, AFR_P) with its CIs over the shaded iso-FCS corridor.

    FCS = 0.5·AFR_D + 0.5·(1 − AFR_P) is constant along lines AFR_P = AFR_D + 1 − 2·FCS,
    so the corridor FCS ∈ [0.45, 0.55] is the band between AFR_P = AFR_D ± 0.1 and the
    chance line FCS = 0.5 is the diagonal.

    Args:
        summary: the 'summary' table (index: arm; columns afr_d, afr_p and their _low/_high).
        title: figure title.

    Returns:
        PNG bytes.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    w = d.FCS_WEIGHT_DESTRUCTIVE
    fig, ax = plt.subplots(figsize=(5.2, 5.0), dpi=120)
    try:
        x = np.linspace(0.0, 1.0, 101)

        def iso(fcs: float) -> np.ndarray:
            # w·x + (1 − w)·(1 − y) = fcs  →  y = 1 − (fcs − w·x) / (1 − w)
            return 1.0 - (fcs - w * x) / (1.0 - w)

        low, high = d.FCS_CORRIDOR
        ax.fill_between(x, np.clip(iso(high), 0, 1), np.clip(iso(low), 0, 1), color="#cfd8e3",
                        alpha=0.8, label=f"iso-FCS corridor [{low:.2f}, {high:.2f}]")
        ax.plot(x, np.clip(iso(0.5), 0, 1), color="#7a8797", lw=1, ls="--",
                label="FCS = 0.5 (chance)")
        plotted = 0
        for label, row in summary.iterrows():
            ad, ap = row.get("afr_d"), row.get("afr_p")
            if ad is None or ap is None or math.isnan(ad) or math.isnan(ap):
                continue
            xerr = _err(ad, row.get("afr_d_low"), row.get("afr_d_high"))
            yerr = _err(ap, row.get("afr_p_low"), row.get("afr_p_high"))
            ax.errorbar([ad], [ap], xerr=xerr, yerr=yerr, fmt="o", ms=6, capsize=3,
                        label=str(label))
            plotted += 1
        if plotted == 0:
            ax.text(0.5, 0.5, "no arm has both AFR_D and AFR_P", ha="center", va="center",
                    transform=ax.transAxes, color="#a33")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        ax.set_xlabel("AFR_D (flip rate on destructive edits)")
        ax.set_ylabel("AFR_P (flip rate on preserving edits)")
        ax.set_title(title or "Answer-flip plane")
        ax.legend(loc="upper left", fontsize=7, frameon=True)
        buffer = io.BytesIO()
        fig.tight_layout()
        fig.savefig(buffer, format="png")
        return buffer.getvalue()
    finally:
        plt.close(fig)


def _err(value: float, low: float | None, high: float | None):
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return None
    return [[max(value - low, 0.0)], [max(high - value, 0.0)]]


def fcs_plane_data(summary: pd.DataFrame, title: str = "Answer-flip plane") -> PlotData:
    """The plane's numbers: the corridor's two edges, the chance line, one point per arm.

    The edges are the iso-FCS lines AFR_P = 1 − (FCS − w·AFR_D)/(1 − w) for FCS at the
    corridor's bounds (w = 0.5: AFR_P = AFR_D ± 0.1), cut to the unit square.
    """
    from analysis.common.plotdata import PlotData, Series

    w = d.FCS_WEIGHT_DESTRUCTIVE
    xs = tuple(i / 50 for i in range(51))

    def iso(fcs: float) -> tuple[tuple, tuple]:
        pts = [(x, 1.0 - (fcs - w * x) / (1.0 - w)) for x in xs]
        kept = [(x, y) for x, y in pts if -1e-9 <= y <= 1.0 + 1e-9]
        return tuple(x for x, _ in kept), tuple(y for _, y in kept)

    low, high = d.FCS_CORRIDOR
    series = [Series(f"corridor edge FCS = {low:.2f}", *iso(low)),
              Series(f"corridor edge FCS = {high:.2f}", *iso(high)),
              Series("FCS = 0.5 (chance)", *iso(0.5))]
    notes = []
    for number, (label, row) in enumerate(summary.iterrows(), start=1):
        ad, ap = row.get("afr_d"), row.get("afr_p")
        if ad is None or ap is None or math.isnan(ad) or math.isnan(ap):
            notes.append(f"{label}: not computable (nothing fired)")
            continue
        series.append(Series(str(label), (float(ad),), (float(ap),), kind="scatter"))
        fcs = w * ad + (1 - w) * (1 - ap)
        notes.append(f"{label}: AFR_D {ad:.2f}, AFR_P {ap:.2f}, FCS {fcs:.2f}")
    return PlotData(title, "AFR_D (destructive edits)", "AFR_P (preserving edits)",
                    tuple(series), xlim=(0.0, 1.0), ylim=(0.0, 1.0), notes=tuple(notes))


def fcs_plane_figure(summary: pd.DataFrame, name: str) -> Figure:
    """Figure 2a: the (AFR_D, AFR_P) plane with the iso-FCS corridor, one point per arm."""

    def render() -> bytes:
        return fcs_plane_png(summary, title=f"{name}: answer-flip plane")

    return Figure("fcs_plane", "AFR_D vs AFR_P with the iso-FCS corridor", render,
                  plot=lambda: fcs_plane_data(summary, f"{name}: answer-flip plane"))
