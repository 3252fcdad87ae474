"""What seed 002 reads off a model's attributes: tier means (§6.2) and FCS vs size (Figure 4).

**Tier means.** Table 3's rows averaged over the models of each tier.

§6.2 compares "General vs. medical tiers. Mean fcs matches (0.52 each); medical chs (0.11) is
slightly worse than general (0.09); medical loses on accuracy (0.44 vs 0.58)" — unweighted
means of the per-model Table 3 values over the tier's models (the printed rows give 0.516
and 0.5175, 0.088 and 0.11, 0.584 and 0.445; tests/audit/test_tiers.py). A model's tier is
`tier` in its stored metadata (`paw models add --tier`, `paw models tier`); models without
one are grouped as "(no tier)".

**Figure 4** (Appendix J) "plots per-cell fcs against parameter count": the data of every
cell — model, dataset, tier, the parameter count read from the model's GGUF header (the sum
of its tensors' elements, stored as `n_params` in the model's metadata when it is
registered) and FCS — is a section, and `plots.fcs_params_figure` draws it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from analysis.audit.arm import Stat, mean_stat
from analysis.audit.columns import reading_headers, stat_columns, table_frame
from analysis.audit.tables import ArmResult

if TYPE_CHECKING:
    import pandas as pd

TIER_STATS: tuple[str, ...] = ("acc", "cdr", "afr_d", "afr_p", "fcs", "ecr", "chs", "dfg",
                               "afr_d_fm", "fcs_fm")
"""The Table 3 statistics averaged per tier (AFR and FCS under both readings)."""

NO_TIER = "(no tier)"
"""The group of the models whose tier is not recorded."""


@dataclass(frozen=True)
class TierUnit:
    """One Table 3 row: an arm (audit report) or a model (panel report), its tier, and its
    statistics by name (as in `ArmResult.stats`, plus 'cdr')."""

    label: str
    tier: str | None
    stats: dict[str, Stat | None]


def tier_table(units: list[TierUnit]) -> pd.DataFrame:
    """Per tier (first-seen order, "(no tier)" last): the number of models, their names
    and the unweighted mean of each `TIER_STATS` over them, with the CI of the mean from the
    models' averaged bootstrap replicates and n = the edits or items summed over them."""
    groups: dict[str, list[TierUnit]] = {}
    for unit in units:
        groups.setdefault(unit.tier or NO_TIER, []).append(unit)
    order = [t for t in groups if t != NO_TIER] + ([NO_TIER] if NO_TIER in groups else [])
    rows = []
    for tier in order:
        members = groups[tier]
        row: dict[str, Any] = {"tier": tier, "n_models": len(members),
                               "models": ", ".join(u.label for u in members)}
        for name in TIER_STATS:
            stat_columns(row, name, mean_stat([u.stats.get(name) for u in members]))
        rows.append(row)
    frame = table_frame(rows, "tier")
    frame.attrs["headers"] = reading_headers(frame)
    return frame


def tiers_note(units: list[TierUnit], unit_name: str) -> str:
    """The tier section's note: what is averaged, and how to record tiers when none is."""
    note = (f"Unweighted mean over each tier's {unit_name} of their Table 3 values (§6.2: "
            "general vs medical, \"Mean fcs matches (0.52 each); medical chs (0.11) is "
            "slightly worse than general (0.09); medical loses on accuracy (0.44 vs "
            "0.58)\"); CI from the averaged bootstrap replicates, n summed over the "
            f"{unit_name}. A model's tier is `tier` in its stored metadata.")
    if all(u.tier is None for u in units):
        note += (" No model here has a tier: record one with `paw models tier NAME TIER` "
                 "(e.g. general, medical, reasoning) and recompute.")
    return note


def fcs_params_table(cells: list[tuple[str, str, ArmResult]]) -> pd.DataFrame:
    """Figure 4's data: per cell (row label, dataset, arm), its model's tier and parameter
    count and its FCS under both AFR readings."""
    rows = []
    for label, dataset, arm in cells:
        row: dict[str, Any] = {"model": label, "dataset": dataset, "tier": arm.tier,
                               "n_params": arm.n_params}
        stat_columns(row, "fcs", arm.stats.get("fcs"))
        stat_columns(row, "fcs_fm", arm.stats.get("fcs_fm"))
        rows.append(row)
    frame = table_frame(rows, None, ["model", "dataset", "tier", "n_params", "fcs", "fcs_low",
                                     "fcs_high", "fcs_n", "fcs_fm", "fcs_fm_low",
                                     "fcs_fm_high", "fcs_fm_n"])
    frame.attrs["headers"] = {**reading_headers(frame), "n_params": "parameters"}
    return frame


def params_note(frame: pd.DataFrame) -> str:
    """Figure 4's note, saying what to do when no model has a parameter count."""
    note = ("Per cell: the model's parameter count (the sum of the tensor elements in its "
            "GGUF header, recorded when the model is registered) and FCS; the PNG plots FCS "
            "against it (log scale) over the corridor, filled markers for a medical tier, "
            "open for the rest (Figure 4: \"open markers = general baselines, filled = "
            "medical-specialised\").")
    if frame.empty or frame["n_params"].isna().all():
        note += (" No model here has a parameter count: models registered before PAW "
                 "recorded it get one when registered again (`paw models add PATH --name "
                 "NAME`).")
    return note
