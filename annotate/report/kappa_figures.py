"""κ over paired labels as report figures: the coordinator's plot, also on the Statistics
screen and in `paw report` (issue 22, criterion 3).

One `Figure` per annotation set drawn from the run and per agreement table (each field in
full, and its binary form where it has one), the same series as the coordinator screen's
`k` plot (`annotate.agreement.kappa_series`: κ after the first n paired labels, from
`annotate.agreement.kappa.cohen_kappa`). The PNG is drawn from the same `PlotData` the
terminal draws, so the file and the screen cannot disagree. Like every clinician section
they show both raters' labels: the callers add them only for a signed-in coordinator.
"""

from __future__ import annotations

from functools import partial

import sqlite_utils

from analysis.common.document import Figure
from analysis.common.plotdata import PlotData
from analysis.common.png import png_bytes
from annotate.agreement.kappa import table_label
from annotate.agreement.kappa_series import kappa_series, series_plot
from annotate.agreement.label_log import LabelLog, table_categories, table_keys
from annotate.agreement.tables import rater_pair


def kappa_figures(db: sqlite_utils.Database, audit_id: int) -> list[Figure]:
    """The κ-over-labels figures of every set drawn from `audit_id` that has two raters."""
    out: list[Figure] = []
    sets = list(db.execute(
        "SELECT id, name FROM annotation_sets WHERE audit_id = ? ORDER BY id", [audit_id]))
    for set_id, name in sets:
        pair = rater_pair(db, set_id)
        if pair is None:
            continue
        log = LabelLog(set_id)
        log.refresh(db)
        asked = _asked_fields(db, set_id)
        keys = [key for key in table_keys(log.fields or ()) if key[0] in asked]
        for key, kappas in kappa_series(db, log, pair, keys).items():
            label = table_label(key[0], key[1], len(table_categories(key)))
            data = series_plot(f"{label}, set {name}", kappas)
            out.append(Figure(
                name=f"kappa_{_safe(name)}_{key[0]}{'_binary' if key[1] else ''}",
                caption=f"κ over paired labels: {label} (set {name})",
                render=partial(plot_png, data), after=f"agreement_{name}",
                plot=partial(_same, data), short=short_label(key[0], key[1], name,
                                                             len(sets) > 1)))
    return out


def short_label(field: str, binary: bool, set_name: str, several_sets: bool) -> str:
    """The figure's entry in a narrow list: 'κ gold_shift' for the full field, 'κ₂ harm' for
    its binary form (the distinguishing mark first, so a cut keeps it), the set's name
    after it when the run has several sets."""
    return f"κ{'₂' if binary else ''} {field}{f' · {set_name}' if several_sets else ''}"


def _asked_fields(db: sqlite_utils.Database, set_id: int) -> set[str]:
    """Fields some case of the set asks (harm only where a case was drawn with it, …): a
    field no case asks gets no plot (an empty κ plot for harm said nothing)."""
    from annotate.codebook import applicable_fields

    asked: set[str] = set()
    every = {"gold_shift": "shifted", "stereotype": "clinically_dangerous"}
    for row in db.query("SELECT stratum, ask_harm, ask_chain_registration FROM "
                        "annotation_cases WHERE set_id = ?", [set_id]):
        asked.update(applicable_fields(row, every))
    return asked


def _same(data: PlotData) -> PlotData:
    return data


def plot_png(data: PlotData) -> bytes:
    """A line/scatter `PlotData` as a PNG (matplotlib, imported here: it is slow)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(6, 3.2), dpi=110)
    try:
        for series in data.series:
            xs = [x for x, y in zip(series.x, series.y, strict=True) if y is not None]
            ys = [y for y in series.y if y is not None]
            style = "o" if series.kind == "scatter" else ".-"
            ax.plot(xs, ys, style, label=series.label)
        ax.set_title(data.title, fontsize=9)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # n counts labels
        ax.set_xlabel(data.xlabel)
        ax.set_ylabel(data.ylabel)
        if data.xlim:
            ax.set_xlim(*data.xlim)
        if data.ylim:
            ax.set_ylim(*data.ylim)
        ax.axhline(0.0, color="grey", linewidth=0.5)
        if data.notes:
            fig.text(0.01, 0.01, " · ".join(data.notes), fontsize=7)
        fig.tight_layout(rect=(0, 0.05, 1, 1))
        return png_bytes(fig)
    finally:
        plt.close(fig)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)
