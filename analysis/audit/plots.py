"""The (AFR_D, AFR_P) plane with the iso-FCS corridor (seed 002 Figure 2a), as a PNG."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from analysis.audit import definitions as d
from analysis.common.document import Figure
from analysis.common.png import png_bytes

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
        fig.tight_layout()
        return png_bytes(fig)
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
    for label, row in summary.iterrows():
        ad, ap = row.get("afr_d"), row.get("afr_p")
        missing = [name for name, value in (("destructive", ad), ("preserving", ap))
                   if value is None or math.isnan(value)]
        if missing:
            # Say which group is missing: destructive edits may have fired while no
            # preserving one did (a battery without F4/F6/F7), which "nothing fired" hid.
            what = " or ".join(missing)
            group = "AFR_D" if missing == ["destructive"] else "AFR_P" if len(missing) == 1 \
                else "AFR_D and AFR_P"
            notes.append(f"{label}: not computable (no {what} edit fired: {group} "
                         f"undefined)")
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


# ---- Figure 2b: per-row joint-table bars ------------------------------------------------

JOINT_COLOURS: dict[str, str] = {"a": "#4c78a8", "b": "#f58518", "c": "#54a24b",
                                 "d": "#b279a2"}
"""Segment colours; cell (c) is green, as the paper's "green segment, cell (c)"."""


def joint_bars(table6: pd.DataFrame) -> list[tuple[str, list[float]]]:
    """Figure 2b's bars from a Table 6 frame: (row label, [a, b, c, d] in %) per row whose
    shares are defined, in the table's order (sorted by cell (c), Panel last)."""
    from analysis.audit.joint import CELL_TITLES, CELLS

    bars = []
    for label, row in table6.iterrows():
        shares = [float(row[CELL_TITLES[c]]) for c in CELLS]
        if not any(math.isnan(v) for v in shares):
            bars.append((str(label), shares))
    return bars


def joint_bars_png(table6: pd.DataFrame, title: str = "") -> bytes:
    """Figure 2b: one horizontal bar per row, stacked (a) (b) (c) (d) to 100 %.

    Args:
        table6: the Table 6 section's frame (rows: arms or models and the Panel row).
        title: figure title.

    Returns:
        PNG bytes.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from analysis.audit.joint import CELL_TITLES, CELLS

    bars = joint_bars(table6)
    fig, ax = plt.subplots(figsize=(6.4, 0.45 * max(len(bars), 2) + 1.9), dpi=120)
    try:
        labels = [label for label, _ in bars][::-1]
        for j, cell in enumerate(CELLS):
            lefts = [sum(shares[:j]) for _, shares in bars][::-1]
            widths = [shares[j] for _, shares in bars][::-1]
            ax.barh(labels, widths, left=lefts, color=JOINT_COLOURS[cell],
                    label=CELL_TITLES[cell], edgecolor="white", linewidth=0.5)
        if not bars:
            ax.text(0.5, 0.5, "no destructive M2/M4/M5 edit was classified", ha="center",
                    va="center", transform=ax.transAxes, color="#a33")
        ax.set_xlim(0, 100)
        ax.set_xlabel("share of destructive M2/M4/M5 edits (%)")
        ax.set_title(title or "Chain update × answer flip")
        fig.legend(*ax.get_legend_handles_labels(), loc="lower center", ncol=4, fontsize=7,
                   frameon=False)
        fig.tight_layout(rect=(0, 0.07, 1, 1))
        return png_bytes(fig)
    finally:
        plt.close(fig)


def joint_bars_figure(table6: pd.DataFrame, name: str) -> Figure:
    """Figure 2b: per-row joint distribution of chain update and answer flip."""

    def render() -> bytes:
        return joint_bars_png(table6, title=f"{name}: chain update × answer flip")

    return Figure("joint_bars", "Per-model chain-update × answer-flip bars (Figure 2b)", render)


# ---- Figure 4: FCS against parameter count ------------------------------------------------

def filled_tier(tier: str | None) -> bool:
    """Figure 4's marker fill: filled for a medical tier ("filled = medical-specialised"),
    open otherwise (general baselines and models without a tier)."""
    return isinstance(tier, str) and "medical" in tier.casefold()


def fcs_params_points(frame: pd.DataFrame) -> list[tuple[str, str, int, float, bool]]:
    """(model, dataset, parameters, FCS, filled) of every cell of a Figure 4 data frame that
    has both a parameter count and an FCS."""
    points = []
    for _, row in frame.iterrows():
        params, fcs = row.get("n_params"), row.get("fcs")
        if params is None or fcs is None or _nan(params) or _nan(fcs):
            continue
        points.append((str(row["model"]), str(row["dataset"]), int(params), float(fcs),
                       filled_tier(row.get("tier"))))
    return points


def _nan(value) -> bool:
    return isinstance(value, float) and math.isnan(value)


def fcs_params_png(frame: pd.DataFrame, title: str = "") -> bytes:
    """Figure 4: per-cell FCS against parameter count (log scale), the corridor shaded, the
    chance line dotted; filled markers = medical tier, open = the rest."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = fcs_params_points(frame)
    fig, ax = plt.subplots(figsize=(5.6, 4.2), dpi=120)
    try:
        low, high = d.FCS_CORRIDOR
        ax.axhspan(low, high, color="#cfd8e3", alpha=0.8,
                   label=f"iso-FCS corridor [{low:.2f}, {high:.2f}]")
        ax.axhline(0.5, color="#7a8797", lw=1, ls=":", label="FCS = 0.5 (chance)")
        markers = "osD^v<>ph"
        datasets = sorted({p[1] for p in points})
        for k, dataset in enumerate(datasets):
            for filled in (False, True):
                group = [p for p in points if p[1] == dataset and p[4] == filled]
                if not group:
                    continue
                ax.scatter([p[2] for p in group], [p[3] for p in group],
                           marker=markers[k % len(markers)], s=36,
                           facecolors=f"C{k}" if filled else "none", edgecolors=f"C{k}",
                           label=f"{dataset} ({'medical' if filled else 'other'})")
        if points:
            ax.set_xscale("log")
        else:
            ax.text(0.5, 0.5, "no cell has both a parameter count and an FCS", ha="center",
                    va="center", transform=ax.transAxes, color="#a33")
        ax.set_ylim(0, 1)
        ax.set_xlabel("parameters (GGUF tensor elements, log scale)")
        ax.set_ylabel("FCS")
        ax.set_title(title or "FCS against parameter count")
        ax.legend(loc="upper left", fontsize=7, frameon=True)
        fig.tight_layout()
        return png_bytes(fig)
    finally:
        plt.close(fig)


def fcs_params_figure(frame: pd.DataFrame, name: str) -> Figure:
    """Figure 4: FCS of every cell against its model's parameter count."""

    def render() -> bytes:
        return fcs_params_png(frame, title=f"{name}: FCS against parameter count")

    return Figure("fcs_params", "FCS against parameter count (Figure 4)", render)
