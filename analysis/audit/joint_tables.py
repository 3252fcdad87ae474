"""Tables 6 and 7 laid out over rows that each pool one or more joint tables (arms or models).

An audit's report has one joint table per arm; a panel's model row pools its datasets'
tables. Both reports end with a **Panel** row pooling every row's edits (the paper's Table 6
"Panel 10,615 … 72.9" and Table 7 "Panel 72.9 74.3"). In a panel the cells resampled their
own items, so the Panel row's CI adds their replicate counts (a bootstrap stratified by
cell); in one audit the arms share their items, so its Panel row has counts and no CI.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from analysis.audit.arm import Stat, exact_ratio, pooled_stat, present
from analysis.audit.columns import stat_columns, table_frame
from analysis.audit.joint import CELL_TITLES, CELLS, JointTable

if TYPE_CHECKING:
    import pandas as pd

PANEL_ROW = "Panel"
"""Label of the row that pools every other row."""

Group = tuple[str, list[JointTable]]
"""A row label and the joint tables it pools."""


def pooled_share(tables: list[JointTable], cells: tuple[str, ...], ci: bool = True) -> Stat | None:
    """Share of the edits of `tables` that fall in any of `cells`, pooled (Σ count / Σ n).

    With `ci`, the replicate counts of the tables are added (each table resampled its own
    items); without, the point and n only. None when no edit was classified.
    """
    n = sum(t.n for t in tables)
    if n == 0:
        return None
    count = sum(t.counts[c] for t in tables for c in cells)
    if not ci:
        exact = present(exact_ratio(count, n))  # whole counts, n > 0: always a Fraction
        reps = np.full(0, math.nan)
        return Stat(float(exact), reps, n, float(count), float(n), exact=exact)
    shares = [t.shares[c] for t in tables for c in cells]
    if len(cells) == 1:
        return pooled_stat(shares)
    # Several cells: add each table's cell numerators, keep one denominator per table.
    parts = []
    for t in tables:
        first = t.shares[cells[0]]
        if first.num_reps is None or first.den <= 0:
            continue
        num = sum(t.shares[c].num for c in cells)
        num_reps = np.sum([present(t.shares[c].num_reps) for c in cells], axis=0)
        parts.append(Stat(num / first.den, first.reps, first.n, num, first.den, num_reps,
                          first.den_reps))
    return pooled_stat(parts)


def joint_table_frame(groups: list[Group], index: str, panel_ci: bool) -> pd.DataFrame:
    """Table 6: per row, n and the four cells' row percentages (CI, n), sorted by cell (c)
    from highest to lowest as the paper prints it; the Panel row last."""
    rows = []
    for label, tables in groups:
        row: dict[str, Any] = {index: label, "n": sum(t.n for t in tables)}
        for cell in CELLS:
            stat_columns(row, CELL_TITLES[cell], pooled_share(tables, (cell,)), 100)
        row["n_unscored"] = sum(t.n_unscored for t in tables)
        rows.append(row)
    title_c = CELL_TITLES["c"]
    rows.sort(key=lambda row: -row[title_c] if not math.isnan(row[title_c]) else math.inf)
    every = [t for _, tables in groups for t in tables]
    panel: dict[str, Any] = {index: PANEL_ROW, "n": sum(t.n for t in every)}
    for cell in CELLS:
        stat_columns(panel, CELL_TITLES[cell], pooled_share(every, (cell,), ci=panel_ci), 100)
    panel["n_unscored"] = sum(t.n_unscored for t in every)
    rows.append(panel)
    frame = table_frame(rows, index)
    frame.attrs["n_of"] = {CELL_TITLES[c]: "n" for c in CELLS}
    return frame


def cdr_rules_frame(groups: list[tuple[str, list[JointTable], dict[str, list[JointTable]]]],
                    methods: list[str], index: str, panel_ci: bool) -> pd.DataFrame:
    """Table 7: CDR (%) under the token rule and each LLM-judge method, per row and for the
    Panel row (every row's edits pooled), each with its n."""
    rows = []
    every_token: list[JointTable] = []
    every_judge: dict[str, list[JointTable]] = {m: [] for m in methods}
    for label, token, judged in groups:
        every_token += token
        row: dict[str, Any] = {index: label}
        _cdr_columns(row, token, {m: judged.get(m, []) for m in methods}, ci=True)
        for m in methods:
            every_judge[m] += judged.get(m, [])
        rows.append(row)
    panel: dict[str, Any] = {index: PANEL_ROW}
    _cdr_columns(panel, every_token, every_judge, ci=panel_ci)
    rows.append(panel)
    frame = table_frame(rows, index)
    frame.attrs["n_of"] = {"cdr_token_pct": "n_token",
                           **{f"cdr_judge_pct[{m}]": f"n_judge[{m}]" for m in methods}}
    return frame


def _cdr_columns(row: dict[str, Any], token: list[JointTable],
                 judged: dict[str, list[JointTable]], ci: bool) -> None:
    row["n_token"] = sum(t.n for t in token)
    stat_columns(row, "cdr_token_pct", pooled_share(token, ("c",), ci=ci), 100)
    for method, tables in judged.items():
        stat_columns(row, f"cdr_judge_pct[{method}]", pooled_share(tables, ("c",), ci=ci), 100)
        row[f"n_judge[{method}]"] = sum(t.n for t in tables)
