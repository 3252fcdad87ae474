"""The panel report: seed 002's model-level tables (Tables 3, 4, 5, 6, 11, §6) over a `Panel`,
then the Appendix G sections, and the panel's FCS plane."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from analysis.audit import definitions as d
from analysis.audit import joint, metrics
from analysis.audit.arm import Stat, mean_stat, pooled_stat
from analysis.audit.panel import Panel, compute_panel, model_mean, model_pooled_cell, units_of_panel
from analysis.audit.tables import mixed_values, stat_columns, table_frame
from analysis.common.bootstrap import DEFAULT_SEED, N_BOOT

if TYPE_CHECKING:
    import pandas as pd
    import sqlite_utils

    from analysis.common.document import Report, Section

PANEL_KEYS: tuple[str, ...] = (
    "panel_summary", "panel_fcs_cells", "panel_fblock", "panel_joint", "panel_families",
    "panel_cot_direct", "panel_shuffle", "panel_overview",
)
"""Keys of the panel's own sections, in report order."""


def _value(stat: Stat | None) -> float:
    return math.nan if stat is None else stat.point


def _half_width(stat: Stat | None) -> float:
    if stat is None or math.isnan(stat.point):
        return math.nan
    est = stat.estimate()
    return (est.high - est.low) / 2 if not math.isnan(est.low) else math.nan


# ---- tables -------------------------------------------------------------------------------

_MEAN_STATS = ("acc", "afr_d", "afr_p", "fcs", "ecr", "chs", "dfg", "mfc")


def summary_table(panel: Panel) -> pd.DataFrame:
    """Table 3 over the panel: per model, the k-dataset mean of each cell metric (CDR pooled
    over the datasets, as Table 6)."""
    rows = []
    for model in panel.models:
        cells = panel.cells_of(model)
        row: dict[str, Any] = {"model": model, "n_datasets": len(cells),
                               "n_items": sum(c.arm.n_items for c in cells)}
        stat_columns(row, "acc", model_mean(panel, model, "acc"))
        stat_columns(row, "cdr", model_pooled_cell(panel, model, "c"))
        for name in _MEAN_STATS[1:]:
            stat_columns(row, name, model_mean(panel, model, name))
        row["fcs_in_corridor"] = metrics.in_corridor(row["fcs"])
        rows.append(row)
    return table_frame(rows, "model")


def fcs_cells_table(panel: Panel) -> pd.DataFrame:
    """Table 5: FCS per cell, model × dataset, and the row mean (over defined cells)."""
    rows = []
    for model in panel.models:
        row: dict[str, Any] = {"model": model}
        values = []
        for dataset in panel.datasets:
            cell = panel.cell(model, dataset)
            value = _value(cell.arm.stats.get("fcs")) if cell else math.nan
            row[dataset] = value
            values.append(value)
        defined = [v for v in values if not math.isnan(v)]
        row["Mean"] = float(np.mean(defined)) if defined else math.nan
        rows.append(row)
    return table_frame(rows, "model", ["model", *panel.datasets, "Mean"])


def _mean_percent_table(panel: Panel, columns: list[tuple[str, str]],
                        n_stat: str) -> pd.DataFrame:
    rows = []
    for model in panel.models:
        row: dict[str, Any] = {"model": model}
        for column, stat in columns:
            stat_columns(row, column, model_mean(panel, model, stat), 100)
        row["n_datasets"] = sum(1 for c in panel.cells_of(model)
                                if not math.isnan(_value(c.arm.stats.get(n_stat))))
        row["n_items"] = sum(c.arm.stats[n_stat].n for c in panel.cells_of(model)
                             if c.arm.stats.get(n_stat) is not None)
        rows.append(row)
    return table_frame(rows, "model")


def fblock_table(panel: Panel) -> pd.DataFrame:
    """Table 4 over the panel: k-dataset averages of Acc. base, Acc. F-pert and ΔAcc (pp),
    the CI of Δ from the cells' averaged paired replicates."""
    return _mean_percent_table(panel, [("acc_base_pct", "acc_base"),
                                       ("acc_fpert_pct", "acc_fpert"),
                                       ("delta_pp", "delta_f")], "delta_f")


def cot_direct_table(panel: Panel) -> pd.DataFrame:
    """CoT vs direct accuracy and the gap (pp), k-dataset averages per model."""
    return _mean_percent_table(panel, [("acc_cot_pct", "acc_cot"),
                                       ("acc_direct_pct", "acc_direct"),
                                       ("gap_pp", "gap_cot_direct")], "gap_cot_direct")


def joint_table(panel: Panel) -> pd.DataFrame:
    """Table 6 pooled over the datasets: per model, row % of the four cells, n; 'Panel'
    pools every model (its CI is stratified by cell as well)."""
    rows = []
    every: dict[str, list[Stat]] = {cell: [] for cell in joint.CELLS}
    for model in panel.models:
        cells = [c.arm.joint_token for c in panel.cells_of(model) if c.arm.joint_token]
        row: dict[str, Any] = {"model": model, "n": sum(t.n for t in cells)}
        for cell in joint.CELLS:
            shares = [t.shares[cell] for t in cells]
            every[cell] += shares
            stat_columns(row, joint.CELL_TITLES[cell], pooled_stat(shares), 100)
        row["n_unscored"] = sum(t.n_unscored for t in cells)
        rows.append(row)
    all_tables = [c.arm.joint_token for c in panel.cells if c.arm.joint_token]
    total: dict[str, Any] = {"model": "Panel", "n": sum(t.n for t in all_tables)}
    for cell in joint.CELLS:
        stat_columns(total, joint.CELL_TITLES[cell], pooled_stat(every[cell]), 100)
    total["n_unscored"] = sum(t.n_unscored for t in all_tables)
    rows.append(total)
    return table_frame(rows, "model")


def families_table(panel: Panel) -> pd.DataFrame:
    """Table 11: per-family flip rate by model, pooled over datasets and variants."""
    rows = []
    for family in d.F_FAMILIES + d.M_FAMILIES:
        row: dict[str, Any] = {"family": f"{family} {d.FAMILY_NAMES[family]}"}
        for model in panel.models:
            pooled = pooled_stat([c.arm.families.get(family)
                                          for c in panel.cells_of(model)])
            row[model] = _value(pooled)
        rows.append(row)
    return table_frame(rows, "family", ["family", *panel.models])


def shuffle_table(panel: Panel) -> pd.DataFrame:
    """Table 8 per model and dataset, with each model's Mean row over its datasets."""
    columns = [("acc_orig_pct", "acc_orig"), ("acc_shuffled_pct", "acc_shuffled"),
               ("delta_pp", "delta_shuffle"), ("same_content_pct", "same_content")]
    rows = []
    for model in panel.models:
        cells = [c for c in panel.cells_of(model)
                 if not math.isnan(_value(c.arm.stats.get("delta_shuffle")))]
        for c in cells:
            row: dict[str, Any] = {"row": f"{model} · {c.dataset}"}
            for column, stat in columns:
                stat_columns(row, column, c.arm.stats[stat], 100)
            row["n_items"] = c.arm.stats["delta_shuffle"].n
            rows.append(row)
        if len(cells) > 1:
            row = {"row": f"{model} · Mean"}
            for column, stat in columns:
                stat_columns(row, column,
                             mean_stat([c.arm.stats[stat] for c in cells]), 100)
            row["n_items"] = sum(c.arm.stats["delta_shuffle"].n for c in cells)
            rows.append(row)
    return table_frame(rows, "row")


def _median(values: list[float]) -> float:
    defined = [v for v in values if not math.isnan(v)]
    return float(np.median(defined)) if defined else math.nan


def overview_table(panel: Panel) -> pd.DataFrame:
    """§6 panel summaries: CDR, ΔAcc band and significance, CoT − direct, FCS corridor,
    median per-cell CI half-widths; `value` is the figure, `detail` its k/n or unit."""
    fblock = fblock_table(panel)
    deltas = fblock["delta_pp"].tolist()
    lows, highs = fblock["delta_pp_low"].tolist(), fblock["delta_pp_high"].tolist()
    defined = [(v, lo, hi) for v, lo, hi in zip(deltas, lows, highs) if not math.isnan(v)]
    band = d.DELTA_BAND_PP
    within = sum(abs(v) <= band for v, _, _ in defined)
    negative = [(v, lo, hi) for v, lo, hi in defined if v < 0]
    significant = sum(hi < 0 for _, _, hi in negative if not math.isnan(hi))
    gaps = cot_direct_table(panel)["gap_pp"].tolist()
    defined_gaps = [g for g in gaps if not math.isnan(g)]
    cell_fcs = [_value(c.arm.stats.get("fcs")) for c in panel.cells]
    cell_fcs = [v for v in cell_fcs if not math.isnan(v)]
    low, high = d.FCS_CORRIDOR
    panel_cdr = pooled_stat([c.arm.joint_token.shares["c"] for c in panel.cells
                                     if c.arm.joint_token is not None])
    rows = [
        ("models × datasets", len(panel.models),
         f"{len(panel.models)} models, {len(panel.datasets)} datasets, "
         f"{len(panel.cells)} cells"),
        ("CDR, panel-wide (%)", 100 * _value(panel_cdr),
         f"{panel_cdr.n if panel_cdr else 0} destructive M2/M4/M5 edits (paper: 72.9)"),
        ("median ΔAcc over models (pp)", _median(deltas), "paper: ≈ 0"),
        (f"models with |ΔAcc| ≤ {band} pp", int(within),
         f"{within}/{len(defined)} (paper: 11/14)"),
        ("models with ΔAcc < 0", len(negative),
         f"{significant} of them with a 95% CI excluding 0 (paper: 7, 2)"),
        ("median CoT − direct gap (pp)", _median(gaps),
         f"{len(defined_gaps)} models (paper: −0.4)"),
        ("mean CoT − direct gap (pp)",
         float(np.mean(defined_gaps)) if defined_gaps else math.nan, "paper: −4.1"),
        ("median FCS over models", _median(summary_table(panel)["fcs"].tolist()), ""),
        (f"cells with FCS in [{low:.2f}, {high:.2f}]",
         sum(low <= v <= high for v in cell_fcs),
         f"{sum(low <= v <= high for v in cell_fcs)}/{len(cell_fcs)} cells"),
        (f"cells with |FCS − 0.50| ≤ {d.FCS_NEAR_CHANCE}",
         sum(abs(v - 0.5) <= d.FCS_NEAR_CHANCE + 1e-12 for v in cell_fcs),
         f"{sum(abs(v - 0.5) <= d.FCS_NEAR_CHANCE + 1e-12 for v in cell_fcs)}/"
         f"{len(cell_fcs)} cells (paper: 29/36)"),
    ]
    for name, paper in (("fcs", "0.013"), ("afr_d", "0.024"), ("chs", "0.034")):
        widths = [_half_width(c.arm.stats.get(name)) for c in panel.cells]
        n_defined = sum(not math.isnan(w) for w in widths)
        rows.append((f"median per-cell 95% CI half-width, {name.upper()}", _median(widths),
                     f"{n_defined} cells (paper: {paper})"))
    return mixed_values(table_frame(
        [{"statistic": s, "value": v, "detail": t} for s, v, t in rows], "statistic"),
        [v for _, v, _ in rows])



_NOTES: dict[str, tuple[str, str]] = {
    "panel_summary": (
        "Table 3 (panel): per-model summary, mean over datasets",
        "Each metric is the unweighted mean of the model's per-dataset cells (Table 3: "
        "\"4-dataset mean\"), its 95% CI from the cells' averaged bootstrap replicates "
        "(stratified by dataset); a cell where the metric is undefined is left out. CDR is "
        "pooled over the datasets (cell (c) of Table 6, whose rows pool the datasets). "
        "MFC = mean of the cells' MFC where ECR ≥ {gate:.2f}. Definitions as in each "
        "audit's Table 3."),
    "panel_fcs_cells": (
        "Table 5: per-cell FCS (model × dataset)",
        "FCS of each model on each dataset; Mean = mean over the defined cells (Table 3's "
        "FCS). '–' = the model was not audited on that dataset, or FCS is undefined."),
    "panel_fblock": (
        "Table 4 (panel): accuracy vs F-block chain perturbation, mean over datasets",
        "Per model, the mean over its datasets of Acc. base, Acc. F-pert (five named "
        "perturbations, 1/5 each) and Δ = base − F-pert (pp); the CI of Δ averages the "
        "cells' paired replicates."),
    "panel_joint": (
        "Table 6 (panel): chain-update × answer-flip, pooled over datasets",
        "Destructive M2/M4/M5 edits of every dataset pooled per model (row %); Panel pools "
        "every model. CIs add the cells' replicate counts (bootstrap stratified by cell)."),
    "panel_families": (
        "Table 11 (panel): per-family flip rate, pooled over datasets",
        "Flips / fired, parsed edits of the family, pooled over the datasets and the "
        "family's variants. '–' = the family never fired for that model."),
    "panel_cot_direct": (
        "CoT − direct accuracy gap (panel), mean over datasets",
        "Per model, the mean over its datasets of CoT and direct accuracy and of the paired "
        "gap (pp)."),
    "panel_shuffle": (
        "Table 8 (panel): option-shuffle check by dataset",
        "Per model and dataset; Δ = shuffled − original (pp); Mean = the model's mean over "
        "its datasets (Table 8's Mean row)."),
    "panel_overview": (
        "§6 panel summary",
        "Figures the paper's §6 quotes, computed on this panel; 'paper:' gives the seed-002 "
        "value for orientation (its panel is 14 models × 4 datasets, 200 items per cell)."),
}

_BUILDERS = {
    "panel_summary": summary_table, "panel_fcs_cells": fcs_cells_table,
    "panel_fblock": fblock_table, "panel_joint": joint_table,
    "panel_families": families_table, "panel_cot_direct": cot_direct_table,
    "panel_shuffle": shuffle_table, "panel_overview": overview_table,
}


def panel_sections(panel: Panel) -> list[Section]:
    """The panel's sections (PANEL_KEYS order), then the Appendix G robustness sections."""
    from analysis.common.document import Section
    from analysis.audit.appendix_g import appendix_g_sections

    sections = []
    for key in PANEL_KEYS:
        title, note = _NOTES[key]
        sections.append(Section(title, _BUILDERS[key](panel), note.format(gate=d.MFC_MIN_ECR),
                                key=key))
    return sections + appendix_g_sections(units_of_panel(panel), unit_name="models")


def build_panel_report(db: sqlite_utils.Database, refs: str | Sequence[str | int],
                       n_boot: int = N_BOOT, seed: int = DEFAULT_SEED) -> Report:
    """The cross-dataset panel report of several audits.

    Args:
        db: the store.
        refs: audit names/ids (comma-separated string or a list), or 'all'.
        n_boot: bootstrap replicates per CI.
        seed: bootstrap seed.

    Returns:
        A `Report` whose meta names the audits (`audit_ids` lists their ids, so the caller
        can append each audit's clinician sections) and whose figure is the panel's FCS
        plane, one point per model.
    """
    from analysis.common.document import Report
    from analysis.audit.plots import fcs_plane_figure

    panel = compute_panel(db, refs, n_boot, seed)
    names = [str(r.frames.audit["name"]) for r in panel.results]
    meta = {"audit": "panel-" + "+".join(names), "audit_id": None,
            "audit_ids": [int(r.frames.audit["id"]) for r in panel.results],
            "kind": "panel", "audits": ", ".join(names), "datasets": ", ".join(panel.datasets),
            "models": ", ".join(panel.models), "cells": len(panel.cells),
            "n_boot": n_boot, "seed": seed}
    sections = panel_sections(panel)
    summary = next(s.frame for s in sections if s.key == "panel_summary")
    return Report(f"PAW panel report: {len(panel.models)} models × "
                  f"{len(panel.datasets)} datasets", meta, sections,
                  [fcs_plane_figure(summary, "panel")])
