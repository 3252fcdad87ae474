"""The §6 panel summary of seed 002: the figures its text quotes, computed on a panel.

Every count of signs and bands here ("models with ΔAcc < 0", "within ±1.6 pp") is taken on
the values as the tables print them (`analysis.common.rounding`): a Δ of exactly 0 is not
negative. "Cells in the corridor" is taken on the exact FCS (`metrics.in_corridor`), as
Table 3 and the FCS-plane figure decide it.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import TYPE_CHECKING

import numpy as np

from analysis.audit import definitions as d
from analysis.audit import metrics
from analysis.audit.columns import mixed_values, significant_gain, table_frame
from analysis.audit.joint_tables import pooled_share
from analysis.audit.panel import Panel
from analysis.audit.panel_tables import (
    cot_direct_table,
    fblock_table,
    judge_methods,
    summary_table,
    value_of,
)
from analysis.common.rounding import rounded, sign_at

if TYPE_CHECKING:
    import pandas as pd

    from analysis.audit.arm import Stat


def _median(values: list[float]) -> float:
    defined = [v for v in values if not math.isnan(v)]
    return float(np.median(defined)) if defined else math.nan


def _half_width(stat: Stat | None) -> float:
    if stat is None or math.isnan(stat.point):
        return math.nan
    est = stat.estimate()
    return (est.high - est.low) / 2 if not math.isnan(est.low) else math.nan


def chain_compressed(panel: Panel) -> list[str]:
    """Models whose ECR prints 0.00 on every cell where it is defined (§6.1: "BioMistral-7B
    and OpenBioLLM-8B emit ecr=0 on every medical cell"; §6.2 excludes exactly these two
    as "the two chain-compressed models")."""
    found = []
    for model in panel.models:
        ecrs = [c.arm.stats.get("ecr") for c in panel.cells_of(model)]
        shown = [rounded(s.value, d.RATE_DECIMALS) for s in ecrs
                 if s is not None and not math.isnan(s.point)]
        if shown and all(v == 0 for v in shown):
            found.append(model)
    return found


def _column(frame: pd.DataFrame, name: str) -> list[float]:
    """A column's values ([] when the frame has no rows, hence no columns)."""
    return frame[name].tolist() if name in frame.columns else []


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _pct(stat: Stat | None) -> float:
    return 100 * value_of(stat)


def overview_table(panel: Panel) -> pd.DataFrame:
    """§6 panel summaries: CDR (token, judge, without the chain-compressed models), the
    share of chains that mention the new token, the ΔAcc band and significance, CoT −
    direct, FCS corridor, median per-cell CI half-widths; `value` is the figure, `detail`
    its k/n or unit."""
    fblock = fblock_table(panel)
    triples = [(v, lo, hi) for v, lo, hi in zip(_column(fblock, "delta_pp"),
                                                 _column(fblock, "delta_pp_low"),
                                                 _column(fblock, "delta_pp_high"), strict=True)
               if not math.isnan(v)]
    band = Decimal(repr(d.DELTA_BAND_PP))
    within = sum(abs(rounded(v, d.PP_DECIMALS)) <= band for v, _, _ in triples)
    negative = [t for t in triples if sign_at(t[0], d.PP_DECIMALS) < 0]
    significant = sum(significant_gain(*t) for t in negative)
    gaps = _column(cot_direct_table(panel), "gap_pp")
    defined_gaps = [g for g in gaps if not math.isnan(g)]
    cell_fcs = [s for c in panel.cells
                if (s := c.arm.stats.get("fcs")) is not None and not math.isnan(s.point)]
    low, high = d.FCS_CORRIDOR
    in_band = sum(bool(metrics.in_corridor(s)) for s in cell_fcs)
    near = Decimal(repr(d.FCS_NEAR_CHANCE))
    near_chance = sum(abs(rounded(s.value, d.RATE_DECIMALS) - Decimal("0.50")) <= near
                      for s in cell_fcs)
    tokens = [c.arm.joint_token for c in panel.cells if c.arm.joint_token is not None]
    panel_cdr = pooled_share(tokens, ("c",))
    compressed = chain_compressed(panel)
    kept = [c.arm.joint_token for c in panel.cells
            if c.arm.joint_token is not None and c.model not in compressed]
    cdr_kept = pooled_share(kept, ("c",))
    mention = pooled_share(tokens, ("a", "b"))
    n_edits = panel_cdr.n if panel_cdr else 0
    rows = [
        ("models × datasets", len(panel.models),
         (f"{_count(len(panel.models), 'model')}, "
          f"{_count(len(panel.datasets), 'dataset')}, {_count(len(panel.cells), 'cell')}")),
        ("CDR, panel-wide (%)", _pct(panel_cdr),
         f"{n_edits} destructive M2/M4/M5 edits (paper: 72.9)"),
    ]
    for method in judge_methods(panel):
        judged = pooled_share([c.arm.joint_judge[method] for c in panel.cells
                               if method in c.arm.joint_judge], ("c",))
        rows.append((f"CDR, panel-wide, judge {method} (%)", _pct(judged),
                     f"{judged.n if judged else 0} judged edits (paper: 74.3)"))
    rows += [
        ("CDR without the chain-compressed models (%)", _pct(cdr_kept),
         (f"{cdr_kept.n if cdr_kept else 0} edits; left out (ECR 0.00 on every cell): "
          f"{', '.join(compressed) or 'none'} (paper: 68.5, BioMistral-7B and "
          "OpenBioLLM-8B)")),
        ("chains that mention the new token (%)", _pct(mention),
         f"cells (a) + (b) of {n_edits} edits (paper: 10.5)"),
        ("median ΔAcc over models (pp)", _median([t[0] for t in triples]), "paper: ≈ 0"),
        (f"models with |ΔAcc| ≤ {d.DELTA_BAND_PP} pp", int(within),
         f"{within}/{len(triples)} (paper: 11/14)"),
        ("models with ΔAcc < 0", len(negative),
         f"{significant} of them with a 95% CI excluding 0 (paper: 7, 2)"),
        ("median CoT − direct gap (pp)", _median(gaps),
         f"{len(defined_gaps)} models (paper: −0.4)"),
        ("mean CoT − direct gap (pp)",
         float(np.mean(defined_gaps)) if defined_gaps else math.nan, "paper: −4.1"),
        ("median FCS over models", _median(_column(summary_table(panel), "fcs")), ""),
        (f"cells with FCS in [{low:.2f}, {high:.2f}]", in_band,
         f"{in_band}/{len(cell_fcs)} cells"),
        (f"cells with |FCS − 0.50| ≤ {d.FCS_NEAR_CHANCE}", near_chance,
         f"{near_chance}/{len(cell_fcs)} cells (paper: 29/36)"),
    ]
    for name, paper in (("fcs", "0.013"), ("afr_d", "0.024"), ("chs", "0.034")):
        widths = [_half_width(c.arm.stats.get(name)) for c in panel.cells]
        n_defined = sum(not math.isnan(w) for w in widths)
        rows.append((f"median per-cell 95% CI half-width, {name.upper()}", _median(widths),
                     f"{n_defined} cells (paper: {paper})"))
    frame = table_frame([{"statistic": s, "value": v, "detail": t} for s, v, t in rows],
                        "statistic")
    return mixed_values(frame, [v for _, v, _ in rows])
