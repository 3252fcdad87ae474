"""Seed 002 Appendix G robustness analyses and Table 9 (prompt templates), as report sections.

The paper checks that its rankings and conclusions survive its own choices:

- Table 10: CHS under six hazard-weight schemes, Kendall τ of the model ranking vs the
  default (the paper: τ = 1.00 on every scheme);
- the MFC weight sweep over six triples, the minimum τ (paper: 0.91);
- F-only vs M-only FCS, Pearson r across models (paper: +0.17);
- Pearson r of the mean baseline-chain length with FCS, ECR and CHS across cells (paper:
  −0.12, +0.19, +0.80);
- F4 left out of Table 4's Δ (paper: the median moves ≈ 0.1 pp, no model changes sign) and
  M6 left out of the flip rates (paper: no ranking changes; M6 fires on 1.25% of stems);
- Table 9: FCS / AFR / ECR per prompt template, against the model's reference template.

A *unit* is what gets ranked: an arm in an audit's report, a model (its cells averaged
over datasets) in a panel report. Correlations and τ need `APPENDIX_G_MIN_UNITS` units
with the values defined; below that a section says so instead of printing a ±1 that
two points always give.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from analysis.audit import definitions as d
from analysis.audit.arm import Stat
from analysis.audit import metrics
from analysis.common.rounding import sign_at

if TYPE_CHECKING:
    import pandas as pd

    from analysis.common.document import Section
    from analysis.audit.tables import ArmResult, AuditResult


APPENDIX_G_KEYS: tuple[str, ...] = (
    "robust_chs_weights", "robust_mfc_weights", "robust_summary", "robust_inputs",
    "robust_templates")
"""Keys of the sections `appendix_g_sections` returns, in order."""


@dataclass(frozen=True)
class Unit:
    """A ranked unit: an arm (one cell) or a model (its cells on several datasets)."""

    label: str
    cells: tuple[ArmResult, ...]


def units_of_audit(result: AuditResult) -> list[Unit]:
    """One unit per arm of an audit."""
    return [Unit(r.label, (r,)) for r in result.arms]


# ---- values --------------------------------------------------------------------------------

def _point(stat: Stat | None) -> float:
    return math.nan if stat is None else float(stat.point)


def _under(value: Callable[[ArmResult, Any], float], weights: Any
           ) -> Callable[[ArmResult], float]:
    """`value(cell, weights)` as a function of the cell alone."""
    return lambda cell: value(cell, weights)


def _stat_point(name: str) -> Callable[[ArmResult], float]:
    """The point of a cell's statistic `name` (NaN where undefined)."""
    return lambda cell: _point(cell.stats.get(name))


def unit_value(unit: Unit, value: Callable[[ArmResult], float]) -> float:
    """Mean of `value(cell)` over the unit's cells where it is defined (NaN if none)."""
    values = [value(cell) for cell in unit.cells]
    values = [v for v in values if not math.isnan(v)]
    return float(np.mean(values)) if values else math.nan


def chs_under(counts: dict[str, int], weights: tuple[float, float, float]) -> float:
    """CHS of one cell recomputed from its flip-class counts under (w_miss, w_fa, w_nf)."""
    n = counts.get("n", 0)
    if not n:
        return math.nan
    w_miss, w_fa, w_nf = weights
    total = (w_miss * counts["miss"] + w_fa * counts["false_alarm"]
             + w_nf * (counts["benign"] + counts["high_to_high"]))
    return total / n


def mfc_under(cell: ArmResult, weights: tuple[float, float, float]) -> float:
    """MFC of one cell under weights (w1, w2, w3), gated on ECR ≥ 0.30 as the default."""
    s = cell.stats
    ecr, fcs, chs, dfg = (s.get(k) for k in ("ecr", "fcs", "chs", "dfg"))
    if ecr is None or fcs is None or chs is None or dfg is None:
        return math.nan
    return _point(metrics.mfc(ecr, fcs, chs, dfg, weights))


def _pairs(a: list[float], b: list[float]) -> tuple[np.ndarray, np.ndarray]:
    keep = [i for i, (x, y) in enumerate(zip(a, b, strict=True))
            if not (math.isnan(x) or math.isnan(y))]
    return np.array([a[i] for i in keep]), np.array([b[i] for i in keep])


def kendall(a: list[float], b: list[float]) -> tuple[float, int]:
    """Kendall τ-b (scipy) over the units where both are defined; NaN below the minimum
    or when one side is constant (no ranking to compare)."""
    from scipy.stats import kendalltau

    x, y = _pairs(a, b)
    if len(x) < d.APPENDIX_G_MIN_UNITS:
        return math.nan, len(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tau = kendalltau(x, y).statistic
    return float(tau), len(x)


def pearson(a: list[float], b: list[float]) -> tuple[float, float, int]:
    """(Pearson r, two-sided p, n) from scipy over the units where both are defined."""
    from scipy.stats import pearsonr

    x, y = _pairs(a, b)
    if len(x) < d.APPENDIX_G_MIN_UNITS or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan, math.nan, len(x)
    result = pearsonr(x, y)
    return float(result.statistic), float(result.pvalue), len(x)


# ---- tables --------------------------------------------------------------------------------

def _scheme_table(units: list[Unit], schemes, value) -> tuple[pd.DataFrame, int]:
    """Per scheme: its weights, Kendall τ of the units' ranking vs the first (default)."""
    from analysis.audit.columns import table_frame

    by_scheme = {name: [unit_value(u, _under(value, w)) for u in units]
                 for name, w in schemes}
    default = by_scheme[schemes[0][0]]
    rows, n_units = [], 0
    for name, weights in schemes:
        tau, n = kendall(default, by_scheme[name])
        n_units = max(n_units, n)
        rows.append({"scheme": name, "w1": weights[0], "w2": weights[1], "w3": weights[2],
                     "kendall_tau": tau, "n": n})
    return table_frame(rows, "scheme"), n_units


def chs_sensitivity_table(units: list[Unit]) -> tuple[pd.DataFrame, int]:
    """Table 10: Kendall τ of the CHS ranking under each hazard-weight scheme vs default.

    Columns w1, w2, w3 are (w_miss, w_fa, w_nf)."""
    frame, n = _scheme_table(units, d.CHS_WEIGHT_SCHEMES,
                             lambda cell, w: chs_under(cell.chs_counts, w))
    return frame.rename(columns={"w1": "w_miss", "w2": "w_fa", "w3": "w_nf"}), n


def mfc_sensitivity_table(units: list[Unit]) -> tuple[pd.DataFrame, int]:
    """Kendall τ of the MFC ranking under each weight triple (w_FCS, w_CHS, w_DFG)."""
    frame, n = _scheme_table(units, d.MFC_WEIGHT_SCHEMES, mfc_under)
    return frame.rename(columns={"w1": "w_fcs", "w2": "w_chs", "w3": "w_dfg"}), n


INPUT_COLUMNS: tuple[str, ...] = (
    "unit", "n_cells", "chain_words", "fcs", "fcs_macro", "fcs_f", "fcs_fm", "fcs_m",
    "fcs_no_m6",
    "delta_pp", "delta_no_f4_pp", "ecr", "chs", "m6_fire_pct")
"""Columns of `inputs_table`."""


def inputs_table(units: list[Unit]) -> pd.DataFrame:
    """Per unit: the values the Appendix G analyses compare."""
    from analysis.audit.columns import table_frame

    def mean(u: Unit, name: str, scale: float = 1.0) -> float:
        return unit_value(u, lambda cell: scale * _point(cell.stats.get(name)))

    rows = []
    for u in units:
        m6 = [cell.firing.get("M6", (0, 0)) for cell in u.cells]
        planned = sum(p for _, p in m6)
        rows.append({
            "unit": u.label, "n_cells": len(u.cells),
            "chain_words": unit_value(u, lambda cell: cell.chain_words),
            "fcs": mean(u, "fcs"), "fcs_macro": mean(u, "fcs_macro"),
            "fcs_f": mean(u, "fcs_f"), "fcs_fm": mean(u, "fcs_fm"), "fcs_m": mean(u, "fcs_m"),
            "fcs_no_m6": mean(u, "fcs_no_m6"), "delta_pp": mean(u, "delta_f", 100),
            "delta_no_f4_pp": mean(u, "delta_f_no_f4", 100),
            "ecr": mean(u, "ecr"), "chs": mean(u, "chs"),
            "m6_fire_pct": 100 * sum(f for f, _ in m6) / planned if planned else math.nan,
        })
    return table_frame(rows, "unit", list(INPUT_COLUMNS))


def _sign(x: float) -> int:
    # Δ in pp, signed as Table 4 prints it: a Δ of 0 computed as −5.55e-15 is 0.
    return sign_at(x, d.PP_DECIMALS)


def summary_table(units: list[Unit], chs_table: pd.DataFrame,
                  mfc_table: pd.DataFrame) -> pd.DataFrame:
    """One row per Appendix G claim: the figure here, its n, p where a test applies, and
    the paper's value."""
    from analysis.audit.columns import mixed_values, table_frame

    inputs = inputs_table(units)
    col = {c: inputs[c].tolist() for c in inputs.columns}
    cells = [cell for u in units for cell in u.cells]
    rows: list[dict[str, Any]] = []

    def add(name: str, value: float, n: int, paper: str, p: float = math.nan) -> None:
        rows.append({"analysis": name, "value": value, "n": n, "p_value": p, "paper": paper})

    alternatives = chs_table.iloc[1:]
    add("CHS weights: min Kendall τ over the 5 other schemes",
        float(alternatives["kendall_tau"].min()) if len(alternatives) else math.nan,
        int(chs_table["n"].max()) if len(chs_table) else 0, "1.00 (Table 10)")
    alternatives = mfc_table.iloc[1:]
    add("MFC weights: min Kendall τ over the 5 other triples",
        float(alternatives["kendall_tau"].min()) if len(alternatives) else math.nan,
        int(mfc_table["n"].max()) if len(mfc_table) else 0, "0.91")
    r, p, n = pearson(col["fcs_f"], col["fcs_m"])
    add("F-only vs M-only FCS: Pearson r", r, n, "+0.17 (9 models)", p)
    for name, paper in (("fcs", "−0.12"), ("ecr", "+0.19"), ("chs", "+0.80")):
        r, p, n = pearson([c.chain_words for c in cells],
                          [_point(c.stats.get(name)) for c in cells])
        add(f"chain length vs {name.upper()} across cells: Pearson r", r, n,
            f"{paper} (36 cells)", p)
    deltas, no_f4 = _pairs(col["delta_pp"], col["delta_no_f4_pp"])
    shift = float(np.median(no_f4) - np.median(deltas)) if len(deltas) else math.nan
    add("F4 left out of Δ: shift of the median Δ (pp)", shift, len(deltas), "≈ 0.1")
    add("F4 left out of Δ: units whose Δ changes sign",
        int(sum(_sign(a) != _sign(b) for a, b in zip(deltas, no_f4, strict=True))) if len(deltas)
        else math.nan, len(deltas), "0")
    tau, n = kendall(col["fcs_fm"], col["fcs_no_m6"])
    add("M6 left out (F+M reading, the only one M6 enters): Kendall τ of the FCS ranking",
        tau, n, "1.00 (no ranking changes)")
    fired = sum(c.firing.get("M6", (0, 0))[0] for c in cells)
    planned = sum(c.firing.get("M6", (0, 0))[1] for c in cells)
    add("M6 fire rate (%)", 100 * fired / planned if planned else math.nan, planned, "1.25")
    tau, n = kendall(col["fcs"], col["fcs_macro"])
    add("AFR pooled vs per-operator mean: Kendall τ of the FCS ranking", tau, n,
        "– (PAW: the paper pools)")
    tau, n = kendall(col["fcs_f"], col["fcs_fm"])
    add("AFR readings F vs F+M: Kendall τ of the FCS ranking", tau, n,
        "– (the paper prints one reading)")
    return mixed_values(table_frame(rows, "analysis"), [row["value"] for row in rows])


def template_table(cells: list[ArmResult]) -> pd.DataFrame:
    """Table 9: per model × prompt template, FCS, AFR_D, AFR_P, ECR (means over the cells
    of that model and template) and ΔFCS, ΔECR against the model's reference template
    (neutral CoT when audited, else its first template). Only models with ≥ 2 templates."""
    from analysis.audit.columns import table_frame

    groups: dict[str, dict[str, list[ArmResult]]] = {}
    for cell in cells:
        groups.setdefault(cell.model, {}).setdefault(cell.template, []).append(cell)
    rows = []
    for model, templates in groups.items():
        if len(templates) < 2:
            continue
        names = list(templates)
        reference = next((t for t in names if t.startswith("neutral_cot")), names[0])
        means = {}
        for template in names:
            unit = Unit(f"{model}/{template}", tuple(templates[template]))
            means[template] = {k: unit_value(unit, _stat_point(k))
                               for k in ("fcs", "afr_d", "afr_p", "ecr", "chs", "dfg")}
        for template in sorted(names, key=lambda t: (t != reference, t)):
            m = means[template]
            rows.append({"model · template": f"{model} · {template}",
                         "reference": template == reference, **m,
                         "delta_fcs": m["fcs"] - means[reference]["fcs"],
                         "delta_ecr": m["ecr"] - means[reference]["ecr"],
                         "n_cells": len(templates[template])})
    return table_frame(rows, "model · template")


# ---- sections ------------------------------------------------------------------------------

def _needs(n: int, what: str, unit_name: str) -> str:
    return (f" Needs ≥ {d.APPENDIX_G_MIN_UNITS} {unit_name} with {what} defined; this "
            f"report has {n}, so τ and r are not shown ('–').")


def appendix_g_sections(units: list[Unit], unit_name: str = "arms") -> list[Section]:
    """Table 10, the MFC sweep, the Appendix G summary and its per-unit inputs, Table 9.

    Args:
        units: the ranked units (`units_of_audit` or `units_of_panel`).
        unit_name: what a unit is called in the notes ('arms' or 'models').
    """
    from analysis.common.document import Section
    from analysis.audit.columns import table_frame

    chs_table, n_chs = chs_sensitivity_table(units)
    mfc_table, n_mfc = mfc_sensitivity_table(units)
    enough = d.APPENDIX_G_MIN_UNITS
    chs_note = ("Kendall τ-b (scipy) of the " + unit_name + "' CHS ranking under each "
                "hazard-weight scheme (w_miss, w_fa, w_nf) against the default (1.0, 0.3, "
                "0.5); schemes verbatim from the paper, which finds τ = 1.00 on every one."
                + ("" if n_chs >= enough else _needs(n_chs, "a CHS", unit_name)))
    mfc_note = ("Kendall τ-b of the MFC ranking under each (w_FCS, w_CHS, w_DFG) against "
                "(0.5, 0.3, 0.2); MFC only where ECR ≥ 0.30. The paper names the range "
                "(0.34, 0.33, 0.33) to (0.6, 0.2, 0.2); the four triples between are PAW's "
                "(docs/metrics.md). Paper: minimum τ = 0.91."
                + ("" if n_mfc >= enough else _needs(n_mfc, "an MFC", unit_name)))
    sections = [
        Section("Table 10: CHS hazard-weight sensitivity", chs_table, chs_note,
                key="robust_chs_weights"),
        Section("MFC weight sensitivity", mfc_table, mfc_note, key="robust_mfc_weights"),
        Section("Appendix G: robustness summary", summary_table(units, chs_table, mfc_table),
                "One row per robustness claim of seed 002 Appendix G, computed here; r and "
                "p from scipy.stats.pearsonr, τ from scipy.stats.kendalltau (τ-b). Ranks "
                f"and correlations need ≥ {enough} {unit_name} (cells for chain length) "
                "with both values defined ('–' otherwise). F4 leave-one-out recomputes "
                "Table 4's F-pert without F4; M6 leave-one-out recomputes AFR_D/AFR_P and "
                "FCS of the F+M reading without M6 edits (M6 is a question edit, so it "
                "never enters the default F reading). A sign is the sign as printed.",
                key="robust_summary"),
        Section("Appendix G: per-unit inputs", inputs_table(units),
                f"Per {unit_name[:-1]} (mean over its cells): mean baseline-chain length in "
                "words, FCS under the default reading pooled and as a per-operator mean, FCS "
                "under the F (chain edits, Table 3), F+M (§4's text) and M-only pools, F+M "
                "FCS without M6, Table 4 Δ with and without F4 (pp), ECR, CHS, and the "
                "share of M6 edits that fired.", key="robust_inputs"),
    ]
    cells = [cell for u in units for cell in u.cells]
    templates = template_table(cells)
    note = ("FCS, AFR_D, AFR_P, ECR, CHS, DFG per prompt template (mean over the model's "
            "datasets for that template); ΔFCS and ΔECR against the reference template "
            "(neutral CoT when audited, else the first). Paper (Table 9): fcs moves by ≤ "
            "0.005, ecr by ≤ 0.025.")
    if templates.empty:
        note += (" Needs ≥ 2 prompt templates for one model (e.g. `paw audit --templates "
                 "neutral_cot,self_grounding`); no model here has two.")
        templates = table_frame([], None)
    sections.append(Section("Table 9: prompt-template robustness", templates, note,
                            key="robust_templates"))
    return sections
