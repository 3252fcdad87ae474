"""Render report sections: number formatting with CIs, Markdown, self-contained HTML, JSON.

A table column `x` with companions `x_low` / `x_high` is shown as one cell "0.52 [0.45, 0.60]",
and with a companion `x_n` (the count the value rests on) as "0.52 [0.45, 0.60] ⁿ⁼²⁵";
NaN and None are shown as "–" (the paper's "not computable"). Numbers are rounded by
`analysis.common.rounding` (half away from zero, float noise absorbed, never "-0.0"). JSON
keeps every number separately, with NaN as null.

A builder may set on a frame's `attrs`: `decimals` {column: places or "p"}, `headers`
{column: display header}, `n_of` {column: the table's own count column for it} (the
superscript count is left out where it equals that column, so a table whose rates share one
"n" column stays compact), `row_marks` {row label: mark appended to it on display, e.g. a
significance "∗"} and `bold` [(row label, column)] cells set in bold in Markdown and HTML
(the paper's bold extrema).
JSON also keeps the columns a frame lists in `frame.attrs["json_only"]` (e.g. lists of
generation ids), which Markdown and HTML leave out. A figure is shown above the first
section unless it names the section to follow (`Figure.after`).
"""

from __future__ import annotations

import base64
import html
import json
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pandas as pd


class Section(Protocol):
    """What rendering reads of a report section (`analysis.common.document.Section` is one).

    A protocol rather than an import: `document` renders through this module, so this
    module must not import `document` back.
    """

    @property
    def title(self) -> str:
        """Heading of the table."""

    @property
    def frame(self) -> pd.DataFrame:
        """The table."""

    @property
    def note(self) -> str:
        """Paragraph under the table."""

    @property
    def json_key(self) -> str:
        """The section's key in the JSON document."""

DASH = "–"
"""Shown for undefined values (a family that never fired, MFC gated off, …)."""

HEADERS: dict[str, str] = {
    "n_items": "n items", "acc": "Acc.", "cdr": "CDR", "cdr_judge": "CDR (judge)",
    "afr_d": "AFR_D", "afr_p": "AFR_P", "fcs": "FCS", "ecr": "ECR", "chs": "CHS", "dfg": "DFG",
    "mfc": "MFC", "fcs_in_corridor": "in iso-FCS corridor", "acc_base_pct": "Acc. base (%)",
    "acc_fpert_pct": "Acc. F-pert (%)", "delta_pp": "Δ (pp)", "n_token": "n (token)",
    "cdr_token_pct": "CDR token (%)", "afr": "AFR", "acc_cot_pct": "Acc. CoT (%)",
    "acc_direct_pct": "Acc. direct (%)", "gap_pp": "CoT − direct (pp)",
    "acc_orig_pct": "Acc. orig. (%)", "acc_shuffled_pct": "Acc. shuf. (%)",
    "same_content_pct": "Same content (%)", "n_unscored": "n unscored",
    "n_datasets": "n datasets", "n_models": "n models", "ci_excludes_0": "CI excludes 0",
    "fcs_medical": "FCS medical", "fcs_ood": "FCS out of domain", "delta_fcs": "ΔFCS",
    "ecr_ood": "ECR out of domain", "prompt_swap_fcs": "prompt swap (FCS)",
    "fire_pct": "fired (%)",
}
"""Display headers for table columns (others are shown as named)."""


_PATTERN_HEADERS: tuple[tuple[str, str], ...] = (
    (r"^cdr_judge_pct\[(.+)\]$", r"CDR judge (%) \1"),
    (r"^cdr_judge\[(.+)\]$", r"CDR (judge) \1"),
    (r"^n_judge\[(.+)\]$", r"n (judge) \1"),
    (r"^acc\[(.+)\]$", r"Acc. \1"),
)


def header(column: str) -> str:
    """Display header of a table column."""
    import re

    if column in HEADERS:
        return HEADERS[column]
    for pattern, replacement in _PATTERN_HEADERS:
        if re.match(pattern, column):
            return re.sub(pattern, replacement, column)
    return column


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return isinstance(value, float) and math.isnan(value)
    except TypeError:
        return False


COUNT_COLUMNS: frozenset[str] = frozenset({
    "n", "planned", "fired", "generated", "used", "unparsed", "baseline_unparsed"})
"""Columns shown as whole numbers (besides every 'n_…' column)."""


def _decimals(column: str) -> int:
    if column in COUNT_COLUMNS or column.startswith("n_"):
        return 0
    # Percentages and percentage points get one decimal (as the paper's Tables 4, 6, 8);
    # rates in [0, 1] get two (Tables 3 and 11).
    if column.endswith(("_pct", "_pp")) or "_pct[" in column or column.startswith("("):
        return 1
    return 2


def format_number(value: Any, decimals: int | str = 2) -> str:
    """One value as report text: '–' for missing, yes/no for booleans, ints as ints.

    Other numbers are rounded half away from zero to `decimals` places
    (`analysis.common.rounding`); `decimals` "p" formats a p-value: three decimals, or two
    significant digits below 0.001.
    """
    import numbers

    import numpy as np

    from analysis.common.rounding import format_rounded

    if _is_missing(value):
        return DASH
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        if decimals == "p":
            v = float(value)
            return f"{v:.1e}" if 0 < v < 0.001 else format_rounded(v, 3)
        if isinstance(value, float) and math.isinf(value):
            return "∞" if value > 0 else "−∞"
        return format_rounded(float(value), int(decimals))
    return str(value)


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def count_mark(n: Any) -> str:
    """The count a value rests on, as a compact superscript: 25 → 'ⁿ⁼²⁵' ('' if missing)."""
    if _is_missing(n):
        return ""
    return "ⁿ⁼" + str(int(n)).translate(_SUPERSCRIPT)


def _companion(column: str, columns: list[str]) -> bool:
    """Whether `column` is shown inside another column's cell (`x_low`, `x_high`, `x_n`)."""
    for suffix in ("_low", "_high", "_n"):
        if column.endswith(suffix) and column[: -len(suffix)] in columns:
            return True
    return False


def display_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A string DataFrame for display: CI triples merged, numbers formatted, headers renamed."""
    import pandas as pd

    hidden = set(frame.attrs.get("json_only", ()))
    columns = [str(c) for c in frame.columns if str(c) not in hidden]
    # A builder may set frame.attrs["decimals"] = {column: int or "p"} where the defaults
    # below do not fit (effects of 0.003, p-values).
    overrides = frame.attrs.get("decimals", {})
    headers = frame.attrs.get("headers", {})
    n_of = frame.attrs.get("n_of", {})
    shown: dict[str, list[str]] = {}
    for column in columns:
        if _companion(column, columns):
            continue
        decimals = overrides.get(column, _decimals(column))
        values = frame[column].tolist()
        low_name, high_name = f"{column}_low", f"{column}_high"
        counts = frame[f"{column}_n"].tolist() if f"{column}_n" in columns else None
        covered = frame[n_of[column]].tolist() if n_of.get(column) in columns else None
        cells = []
        for i, v in enumerate(values):
            text = format_number(v, decimals)
            if not _is_missing(v) and low_name in columns and high_name in columns:
                lo, hi = frame[low_name].iloc[i], frame[high_name].iloc[i]
                if not _is_missing(lo) and not _is_missing(hi):
                    text += f" [{format_number(lo, decimals)}, {format_number(hi, decimals)}]"
            if counts is not None and not _is_missing(v) and count_mark(counts[i]) and not (
                    covered is not None and covered[i] == counts[i]):
                text += " " + count_mark(counts[i])
            cells.append(text)
        shown[headers.get(column, header(column))] = cells
    marks = frame.attrs.get("row_marks", {})
    out = pd.DataFrame(shown, index=[str(i) + marks.get(i, "") for i in frame.index])
    out.index.name = frame.index.name
    return out


def _bold_cells(frame: pd.DataFrame) -> set[tuple[int, int]]:
    """(row position, shown-column position) of the cells `attrs["bold"]` names."""
    wanted = {(str(r), str(c)) for r, c in frame.attrs.get("bold", ())}
    if not wanted:
        return set()
    columns = [str(c) for c in frame.columns]
    shown = [c for c in columns if not _companion(c, columns)]
    rows = [str(i) for i in frame.index]
    return {(i, j) for i, r in enumerate(rows) for j, c in enumerate(shown) if (r, c) in wanted}


def _index_shown(frame: pd.DataFrame) -> bool:
    return frame.index.name is not None


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(frame: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table of a display frame (index first when named)."""
    shown = display_frame(frame)
    bold = _bold_cells(frame)
    header = ([shown.index.name] if _index_shown(frame) else []) + list(shown.columns)
    lines = ["| " + " | ".join(_md_escape(str(h)) for h in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    for i, (label, row) in enumerate(zip(shown.index, shown.itertuples(index=False), strict=True)):
        values = [f"**{c}**" if (i, j) in bold else str(c) for j, c in enumerate(row)]
        cells = ([label] if _index_shown(frame) else []) + values
        lines.append("| " + " | ".join(_md_escape(str(c)) for c in cells) + " |")
    if shown.empty and header:  # say so, rather than print a blank row
        lines.append("| " + " | ".join(["(none)"] + ["" for _ in header[1:]]) + " |")
    return "\n".join(lines)


def _placed(figures: list[tuple] | None, sections: Sequence[Section]) -> dict[str, list[tuple]]:
    """Figures by the section key they follow ('' = above the first section): each figure is
    (caption, data[, plot as text[, after]]) and is returned as (caption, data, text); an
    `after` naming no section of the report puts it on top."""
    keys = {section.json_key for section in sections}
    placed: dict[str, list[tuple]] = {}
    for figure in figures or []:
        text = figure[2] if len(figure) > 2 else None
        after = figure[3] if len(figure) > 3 and figure[3] in keys else ""
        placed.setdefault(after, []).append((figure[0], figure[1], text))
    return placed


def render_markdown(title: str, meta: dict[str, Any], sections: Sequence[Section],
                    figures: list[tuple] | None = None) -> str:
    """The whole report as Markdown; `figures` are (caption, PNG path relative to it[, the
    plot as text, shown in a code block under the image[, key of the section it follows]])."""
    placed = _placed(figures, sections)

    def images(key: str) -> list[str]:
        out: list[str] = []
        for caption, path, text in placed.get(key, []):
            out += ["", f"![{_md_escape(caption)}]({path})"]
            if text:
                out += ["", "```text", text, "```"]
        return out

    parts = [f"# {title}", "", _meta_lines(meta)]
    parts += images("")
    for section in sections:
        parts += ["", f"## {section.title}", ""]
        parts.append(markdown_table(section.frame) if len(section.frame.columns) else "(empty)")
        if section.note:
            parts += ["", section.note]
        parts += images(section.json_key)
    return "\n".join(parts) + "\n"


def _meta_lines(meta: dict[str, Any]) -> str:
    return "\n".join(f"- **{key}**: {value}" for key, value in meta.items())


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 1200px; }
table { border-collapse: collapse; margin: 0.5em 0 0.3em; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 2px 3px; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
tbody th:first-child { white-space: normal; }
thead th { background: #f0f0f0; white-space: normal; }
td .ci { color: #555; font-size: 0.75em; }
div.table { overflow-x: auto; max-width: 100%; }
p.note { color: #555; font-size: 0.85em; max-width: 60em; }
section.empty { background: #f7f7f7; border: 1px solid #ddd; padding: 0.2em 1em; }
section.empty li { margin: 0.2em 0; }
img { max-width: 100%; }
@media print { div.table { overflow: visible; } body { margin: 0; } }
"""
"""1,280 px: a CI goes on a second line of its cell (`html_cell`), so Table 3's ten columns
fit; a table still wider scrolls inside its own box (`div.table`), never the page
(tests/cli/test_html_report.py measures it in headless Chromium)."""

_CI = re.compile(r"^(.*?) (\[[^\]]*\])(.*)$")


def html_cell(text: str) -> str:
    """A display cell as HTML: "0.52 [0.45, 0.60] ⁿ⁼⁶" is "0.52 ⁿ⁼⁶" over a second, smaller
    line "[0.45, 0.60]"; anything else escaped as it is."""
    esc = html.escape
    match = _CI.match(text)
    if match is None:
        return esc(text)
    value, interval, rest = match.groups()
    return f'{esc(value)}{esc(rest)}<br><span class="ci">{esc(interval)}</span>'


def is_empty(frame: pd.DataFrame) -> bool:
    """A table with nothing to read: no columns, no rows, or every cell not computable."""
    if not len(frame.columns) or not len(frame):
        return True
    shown = display_frame(frame)
    return bool(len(shown.columns)) and all(
        str(c) in ("–", "", "nan") for row in shown.itertuples(index=False) for c in row)


def _why_empty(section: Section) -> str:
    frame = section.frame
    what = ("it has no columns" if not len(frame.columns) else "it has no rows" if not len(frame)
            else "every cell is '–' (not computable)")
    first = section.note.split(". ")[0].rstrip(".") if section.note else ""
    return f"{what}" + (f"; what it shows: {first}." if first else ".")


def html_table(frame: pd.DataFrame) -> str:
    """One section's table as HTML: every cell escaped, `attrs["bold"]` cells in <b>."""
    esc = html.escape
    shown = display_frame(frame)
    bold = _bold_cells(frame)
    named = _index_shown(frame)
    header = ([shown.index.name] if named else []) + [str(c) for c in shown.columns]
    lines = ['<table class="dataframe">', "<thead><tr>"
             + "".join(f"<th>{esc(str(h))}</th>" for h in header) + "</tr></thead>", "<tbody>"]
    rows = list(zip(shown.index, shown.itertuples(index=False), strict=True))
    # Rows with nothing computable (11 of 12 Appendix G rows on a small audit) are named
    # under the table instead of drawn as lines of dashes.
    dashes = [str(label) for label, row in rows if all(str(c) in (DASH, "") for c in row)]
    dashes = dashes if named and len(dashes) < len(rows) else []
    for i, (label, row) in enumerate(rows):
        if str(label) in dashes:
            continue
        # A long arm label ('default/neutral_cot@1') may break after its '/'.
        cells = [f"<th>{esc(str(label)).replace('/', '/<wbr>')}</th>"] if named else []
        cells += [f"<td><b>{html_cell(str(c))}</b></td>" if (i, j) in bold else
                  f"<td>{html_cell(str(c))}</td>" for j, c in enumerate(row)]
        lines.append("<tr>" + "".join(cells) + "</tr>")
    lines.append("</tbody></table>")
    gone = (f'<p class="note">Not computable here (every cell {DASH}): '
            f'{esc(", ".join(dashes))}.</p>') if dashes else ""
    return '<div class="table">' + "\n".join(lines) + "</div>" + gone


def render_html(title: str, meta: dict[str, Any], sections: Sequence[Section],
                figures: list[tuple] | None = None) -> str:
    """The whole report as one self-contained HTML page; `figures` are (caption, PNG
    bytes[, the plot as text[, key of the section it follows]]), the PNG embedded as base64,
    the text in a <pre>."""
    esc = html.escape
    placed = _placed(figures, sections)

    def images(key: str) -> list[str]:
        out: list[str] = []
        for caption, png, text in placed.get(key, []):
            data = base64.b64encode(png).decode("ascii")
            out.append(f'<img alt="{esc(caption)}" src="data:image/png;base64,{data}">')
            if text:
                out.append(f"<pre>{esc(text)}</pre>")
        return out

    body = [f"<h1>{esc(title)}</h1>", "<ul>"]
    body += [f"<li><b>{esc(str(k))}</b>: {esc(str(v))}</li>" for k, v in meta.items()]
    body.append("</ul>")
    # Empty tables are listed once at the top, each with why, instead of headings over
    # tables of dashes down the page (about 40 % of a small audit's report, issue 38).
    empty = [s for s in sections if is_empty(s.frame)]
    if empty:
        body.append('<section class="empty"><h2>Not computable here, and why</h2><ul>')
        body += [f"<li><b>{esc(s.title)}</b>: {esc(_why_empty(s))}</li>" for s in empty]
        body.append("</ul></section>")
    body += images("")
    for section in sections:
        if is_empty(section.frame):
            body += images(section.json_key)
            continue
        body.append(f"<h2>{esc(section.title)}</h2>")
        body.append(html_table(section.frame))
        if section.note:
            body.append(f'<p class="note">{esc(section.note)}</p>')
        body += images(section.json_key)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def _plain(value: Any) -> Any:
    """A JSON-safe Python value: NaN → None, numpy scalars → Python scalars, and a cell
    object with an `as_json()` method (e.g. a table cell carrying value, p and a flag) as
    what that returns."""
    if hasattr(value, "as_json"):
        return _plain(value.as_json())
    if hasattr(value, "item") and not isinstance(value, (list, dict, str)):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def frame_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows of a frame (index included when named) as JSON-safe dicts."""
    flat = frame.reset_index() if _index_shown(frame) else frame
    return [{str(k): _plain(v) for k, v in row.items()}
            for row in flat.to_dict(orient="records")]


def render_json(meta: dict[str, Any], sections: Sequence[Section]) -> str:
    """Every section's numbers as JSON: {"meta": …, "tables": {key: {title, note, rows}}}."""
    tables = {
        section.json_key: {"title": section.title, "note": section.note,
                           "columns": [str(c) for c in (
                               ([section.frame.index.name] if _index_shown(section.frame)
                                else []) + list(section.frame.columns))],
                           "rows": frame_records(section.frame)}
        for section in sections
    }
    return json.dumps({"meta": _plain(meta), "tables": tables}, indent=2,
                      ensure_ascii=False, allow_nan=False) + "\n"
