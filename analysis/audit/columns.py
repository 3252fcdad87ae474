"""How seed 002's tables are laid out: value/CI/n columns, reading headers, bold and marks.

Every table of `tables`, `panel_report` and the other seed-002 sections writes a statistic
as `x`, `x_low`, `x_high` (value and 95 % CI) and `x_n` (the count it rests on), so a reader
can trace each number to its count and JSON keeps each as a field. The layout touches the
paper uses are computed here and carried on the frame's `attrs` (rendered by
`analysis.common.render`): bold extrema (Tables 3 and 11), significance marks (Table 4).
Every comparison — which value is the extremum, whether two tie, whether a CI excludes 0 —
is taken on the values rounded as printed (`analysis.common.rounding`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from analysis.audit import definitions as d
from analysis.common.rounding import rounded, sign_at

if TYPE_CHECKING:
    import pandas as pd

    from analysis.audit.arm import Stat


def stat_columns(row: dict[str, Any], name: str, stat: Stat | None, scale: float = 1.0) -> None:
    """Write `name`, `name_low`, `name_high` and `name_n` from a Stat (NaN / None when
    undefined)."""
    est = stat.estimate() if stat is not None else None
    for suffix, attr in (("", "value"), ("_low", "low"), ("_high", "high")):
        value = getattr(est, attr) if est is not None else float("nan")
        row[name + suffix] = value * scale
    row[name + "_n"] = stat.n if stat is not None and not math.isnan(stat.point) else None


def table_frame(rows: list[dict[str, Any]], index: str | None = None,
                columns: list[str] | None = None) -> pd.DataFrame:
    """A DataFrame of `rows` indexed by `index` (an empty frame keeps its index name)."""
    import pandas as pd

    frame = pd.DataFrame(rows, columns=columns)
    if index and index not in frame.columns:  # no rows at all (an audit without arms)
        frame[index] = []
    return frame.set_index(index) if index else frame


def mixed_values(frame: pd.DataFrame, values: list, column: str = "value") -> pd.DataFrame:
    """Set `column` from `values` as objects, so counts stay ints next to rates in one
    column (rendered "14", not "14.00")."""
    import pandas as pd

    frame[column] = pd.Series(values, index=frame.index, dtype=object)
    return frame


def reading_label(key: str) -> str:
    """The display label of an AFR reading ('F' or 'F+M')."""
    return d.AFR_READINGS[key][0]


def alternative_readings() -> list[str]:
    """The AFR readings other than the default, in `AFR_READINGS` order."""
    return [key for key in d.AFR_READINGS if key != d.AFR_READING]


def reading_headers(frame: pd.DataFrame) -> dict[str, str]:
    """Display headers naming the reading of every AFR_D/AFR_P/FCS/MFC/corridor column."""
    base = {"afr_d": "AFR_D", "afr_p": "AFR_P", "fcs": "FCS", "mfc": "MFC",
            "fcs_in_corridor": "in corridor"}
    headers = {}
    for column in frame.columns:
        for name, title in base.items():
            if column == name:
                headers[column] = f"{title} ({reading_label(d.AFR_READING)})"
            for key in alternative_readings():
                if column == f"{name}_{key}":
                    headers[column] = f"{title} ({reading_label(key)})"
    return headers


def _printed(value: Any, decimals: int) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return rounded(float(value), decimals)


def extrema(values: dict[str, Any], highest: bool, decimals: int) -> list[str]:
    """The keys whose value, rounded as printed, is the highest (or lowest); ties all."""
    shown = {k: _printed(v, decimals) for k, v in values.items()}
    shown = {k: v for k, v in shown.items() if v is not None}
    if len(shown) < 2:
        return []
    best = max(shown.values()) if highest else min(shown.values())
    return [k for k, v in shown.items() if v == best]


TABLE3_BOLD: dict[str, bool] = {"acc": True, "cdr": True, "ecr": True, "afr_d": False,
                                "chs": False, "dfg": False}
"""Table 3's bold: "each column's extremum … highest for Acc., cdr, ecr; lowest for afr_D,
chs, dfg; ties both marked; fcs is unbolded because its values sit at chance"."""


def bold_columns(frame: pd.DataFrame, rules: dict[str, bool], rows: Iterable[str],
                 decimals: int = d.RATE_DECIMALS) -> list[tuple[str, str]]:
    """(row, column) of each column's extremum over `rows` (True = highest, False = lowest)."""
    rows = [r for r in rows if r in frame.index]
    cells = []
    for column, highest in rules.items():
        if column not in frame.columns:
            continue
        values = {r: frame.loc[r, column] for r in rows}
        cells += [(r, column) for r in extrema(values, highest, decimals)]
    return cells


def bold_row_minima(frame: pd.DataFrame, columns: Iterable[str],
                    decimals: int = d.RATE_DECIMALS) -> list[tuple[str, str]]:
    """(row, column) of each row's lowest value over `columns` (Table 11: "lowest per row
    is bolded (lower is better)"; ties all)."""
    cells = []
    columns = [c for c in columns if c in frame.columns]
    for label in frame.index:
        values = {c: frame.loc[label, c] for c in columns}
        cells += [(str(label), c) for c in extrema(values, False, decimals)]
    return cells


def significant_gain(value: float, low: float, high: float,
                     decimals: int = d.PP_DECIMALS) -> bool:
    """Table 4's ∗: ΔAcc negative (the perturbation *raised* accuracy) with a 95 % CI that
    excludes zero, both as printed."""
    return sign_at(value, decimals) < 0 and not math.isnan(high) and sign_at(high, decimals) < 0


def ci_excludes_zero(value: float, low: float, high: float,
                     decimals: int = d.PP_DECIMALS) -> bool | None:
    """Whether the printed 95 % CI lies wholly on one side of 0 (None without a CI)."""
    if math.isnan(value) or math.isnan(low) or math.isnan(high):
        return None
    return sign_at(low, decimals) > 0 or sign_at(high, decimals) < 0
