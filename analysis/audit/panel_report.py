"""The panel report: seed 002's model-level tables (Tables 3–8, 11, §6, tiers, Figure 4 data,
Appendix H, the firing matrix) over a `Panel`, then the Appendix G sections, and the
panel's figures (2a, 2b, 4)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from analysis.audit import definitions as d
from analysis.audit import panel_tables as pt
from analysis.audit.panel import Panel, compute_panel, medical_panel, units_of_panel
from analysis.audit.panel_overview import overview_table
from analysis.common.bootstrap import DEFAULT_SEED, N_BOOT

if TYPE_CHECKING:
    import pandas as pd
    import sqlite_utils

    from analysis.common.document import Report, Section

PANEL_KEYS: tuple[str, ...] = (
    "panel_summary", "panel_fcs_cells", "panel_fblock", "panel_joint", "panel_cdr_rules",
    "panel_families", "panel_cot_direct", "panel_shuffle", "panel_overview", "panel_tiers",
    "panel_fcs_params", "panel_ood", "panel_firing",
)
"""Keys of the panel's own sections, in report order."""

_NOTES: dict[str, tuple[str, str]] = {
    "panel_summary": (
        "Table 3 (panel): per-model summary, mean over datasets",
        ("Each metric is the unweighted mean of the model's per-dataset cells (Table 3: "
         "\"4-dataset mean\"), its 95% CI from the cells' averaged bootstrap replicates "
         "(stratified by dataset); a cell where the metric is undefined is left out. CDR is "
         "pooled over the datasets (cell (c) of Table 6, whose rows pool the datasets), by "
         "the token rule and by each LLM judge with stored verdicts. AFR_D, AFR_P, FCS, the "
         "corridor and MFC are given under both AFR readings: (F) pools the chain edits F1–F7 "
         "(the default: it reproduces the paper's Table 3), (F+M) every operator, as §4's "
         "text (docs/metrics.md). MFC = mean of the cells' MFC where ECR ≥ {gate:.2f}. "
         "ⁿ⁼ = the edits or items each value rests on, summed over the cells. Bold = each "
         "column's extremum over the models (highest Acc., CDR, ECR; lowest AFR_D, CHS, "
         "DFG; ties all), decided on the printed values. Definitions as in each audit's "
         "Table 3.")),
    "panel_fcs_cells": (
        "Table 5: per-cell FCS (model × dataset)",
        ("FCS of each model on each dataset (default AFR reading); Mean = mean over the "
         "defined cells (Table 3's FCS). '–' = the model was not audited on that dataset, or "
         "FCS is undefined. ⁿ⁼ = edits behind each FCS.")),
    "panel_fblock": (
        "Table 4 (panel): accuracy vs F-block chain perturbation, mean over datasets",
        ("Per model, the mean over its datasets of Acc. base, Acc. F-pert (five named "
         "perturbations, 1/5 each) and Δ = base − F-pert (pp); the CI of Δ averages the "
         "cells' paired replicates. ∗ = Δ < 0 with a 95% CI that excludes 0 (Table 4: "
         "\"only the two marked ∗ have a paired-bootstrap 95% CI on the gain that excludes "
         "zero\"); CI excludes 0 in either direction is its own column. Signs as printed.")),
    "panel_joint": (
        "Table 6 (panel): chain-update × answer-flip, pooled over datasets",
        ("Destructive M2/M4/M5 edits of every dataset pooled per model (row %), rows sorted "
         "by cell (c) as the paper's; Panel pools every model. CIs add the cells' replicate "
         "counts (bootstrap stratified by cell).")),
    "panel_cdr_rules": (
        "Table 7 (panel): CDR under the token rule and the LLM judge",
        ("CDR (%) = cell (c) of Table 6 pooled over each model's datasets, by the token rule "
         "and by each LLM-judge method over the edits it judged; Panel pools every model "
         "(paper: 72.9 token, 74.3 judge). No judge column = no verdicts stored.")),
    "panel_families": (
        "Table 11 (panel): per-family flip rate, pooled over datasets",
        ("Flips / fired, parsed edits of the family, pooled over the datasets and the "
         "family's variants; ⁿ⁼ = those edits. Bold = the row's lowest value (Table 11: "
         "\"lowest per row is bolded (lower is better)\"). '–' = the family never fired for "
         "that model.")),
    "panel_cot_direct": (
        "CoT − direct accuracy gap (panel), mean over datasets",
        ("Per model, the mean over its datasets of CoT and direct accuracy and of the paired "
         "gap (pp).")),
    "panel_shuffle": (
        "Table 8 (panel): option-shuffle check by dataset",
        ("Per model and dataset; Δ = shuffled − original (pp); Mean = the model's mean over "
         "its datasets (Table 8's Mean row).")),
    "panel_overview": (
        "§6 panel summary",
        ("Figures the paper's §6 quotes, computed on this panel; 'paper:' gives the seed-002 "
         "value for orientation (its panel is 14 models × 4 datasets, 200 items per cell). "
         "Chain-compressed = a model whose ECR prints 0.00 on every cell (§6.1). Counts of "
         "signs and bands are taken on the printed values, corridor cells on the exact "
         "FCS.")),
    "panel_tiers": ("§6.2 tier means", ""),
    "panel_fcs_params": ("Figure 4 data: FCS against parameter count (per cell)", ""),
    "panel_ood": ("Appendix H: out-of-domain ΔFCS", ""),
    "panel_firing": (
        "Appendix G firing matrix (model × dataset × operator)",
        ("Planned edits, edits whose operator fired, and the fire rate (%) for every "
         "operator on every cell: the matrix Appendix G says \"is available from the "
         "corresponding author on request\".")),
}


def _tiers(panel: Panel) -> tuple[pd.DataFrame, str]:
    from analysis.audit.tiers import TierUnit, tier_table, tiers_note

    units = []
    for model in panel.models:
        cells = panel.cells_of(model)
        tier = next((c.arm.tier for c in cells if c.arm.tier), None)
        stats = pt.model_stats(panel, model)
        stats["cdr"] = pt.pooled_share([c.arm.joint_token for c in cells
                                        if c.arm.joint_token is not None], ("c",))
        units.append(TierUnit(model, tier, stats))
    return tier_table(units), tiers_note(units, "models")


def _params(panel: Panel) -> tuple[pd.DataFrame, str]:
    from analysis.audit.tiers import fcs_params_table, params_note

    frame = fcs_params_table([(c.model, c.dataset, c.arm) for c in panel.cells])
    return frame, params_note(frame)


_BUILDERS: dict[str, Callable[[Panel], pd.DataFrame]] = {
    "panel_summary": pt.summary_table, "panel_fcs_cells": pt.fcs_cells_table,
    "panel_fblock": pt.fblock_table, "panel_joint": pt.joint_table,
    "panel_cdr_rules": pt.cdr_rules_table, "panel_families": pt.families_table,
    "panel_cot_direct": pt.cot_direct_table, "panel_shuffle": pt.shuffle_table,
    "panel_overview": overview_table, "panel_firing": pt.firing_matrix,
}


def panel_sections(panel: Panel, ood: str | Sequence[str] | None = None) -> list[Section]:
    """The panel's sections (PANEL_KEYS order), then the Appendix G robustness sections.

    Args:
        panel: the computed panel.
        ood: the out-of-domain datasets for Appendix H (names, comma-separated or a list).

    Raises:
        UserError: `ood` names a dataset the panel does not have.
    """
    from analysis.audit.appendix_g import appendix_g_sections
    from analysis.audit.appendix_h import ood_note, ood_table, parse_ood
    from analysis.common.document import Section

    out_of_domain = parse_ood(panel, ood)
    medical = medical_panel(panel, out_of_domain)  # every pool but Appendix H's
    left_out = (f" Out-of-domain datasets left out of this pool (Appendix H only): "
                f"{', '.join(out_of_domain)}." if out_of_domain else "")
    sections = []
    for key in PANEL_KEYS:
        title, note = _NOTES[key]
        note = note.format(gate=d.MFC_MIN_ECR)
        if key == "panel_tiers":
            frame, note = _tiers(medical)
        elif key == "panel_fcs_params":
            frame, note = _params(medical)
        elif key == "panel_ood":
            frame, note = ood_table(panel, out_of_domain), ood_note(panel, out_of_domain)
        else:
            frame = _BUILDERS[key](medical)
        if key != "panel_ood":
            note = (note + left_out).strip()
        sections.append(Section(title, frame, note, key=key))
    return sections + appendix_g_sections(units_of_panel(medical), unit_name="models")


def build_panel_report(db: sqlite_utils.Database, refs: str | Sequence[str | int],
                       n_boot: int = N_BOOT, seed: int = DEFAULT_SEED,
                       ood: str | Sequence[str] | None = None) -> Report:
    """The cross-dataset panel report of several audits.

    Args:
        db: the store.
        refs: audit names/ids (comma-separated string or a list), or 'all'.
        n_boot: bootstrap replicates per CI.
        seed: bootstrap seed.
        ood: the out-of-domain datasets of Appendix H (e.g. 'gsm8k,strategyqa'); every
            other dataset is medical.

    Returns:
        A `Report` whose meta names the audits (`audit_ids` lists their ids, so the caller
        can append each audit's clinician sections) and whose figures are the panel's FCS
        plane (one point per model), the per-model joint bars and FCS against parameter
        count.

    Raises:
        UserError: `ood` names a dataset the panel does not have.
    """
    from analysis.audit.plots import fcs_params_figure, fcs_plane_figure, joint_bars_figure
    from analysis.common.document import Report

    from analysis.audit.appendix_h import parse_ood

    panel = compute_panel(db, refs, n_boot, seed)
    names = [str(r.frames.audit["name"]) for r in panel.results]
    out_of_domain = parse_ood(panel, ood)
    medical = medical_panel(panel, out_of_domain)
    meta = {"audit": "panel-" + "+".join(names), "audit_id": None,
            "audit_ids": [int(r.frames.audit["id"]) for r in panel.results],
            "kind": "panel", "audits": ", ".join(names), "datasets": ", ".join(panel.datasets),
            "models": ", ".join(panel.models), "cells": len(panel.cells),
            "afr_reading": d.AFR_READINGS[d.AFR_READING][0], "n_boot": n_boot, "seed": seed}
    if out_of_domain:
        meta["ood_datasets"] = ", ".join(out_of_domain)
    # Each audit's arms' unparsed shares beside the paper's ≤ 3 %, as every report's header.
    from dataclasses import replace

    from analysis.common.unparsed import unparsed_meta
    from store.runs import unparsed_by_arm

    meta.update(unparsed_meta([replace(arm, label=f"{r.frames.audit['name']} {arm.label}")
                               for r in panel.results
                               for arm in unparsed_by_arm(db, int(r.frames.audit["id"]))]))
    sections = panel_sections(panel, ood)
    frames = {s.key: s.frame for s in sections}
    shape = (f"{len(medical.datasets)} medical datasets (+ {len(out_of_domain)} "
             "out-of-domain)" if out_of_domain else f"{len(panel.datasets)} datasets")
    return Report(f"PAW panel report: {len(medical.models)} models × {shape}",
                  meta, sections,
                  [fcs_plane_figure(frames["panel_summary"], "panel"),
                   joint_bars_figure(frames["panel_joint"], "panel"),
                   fcs_params_figure(frames["panel_fcs_params"], "panel")])
