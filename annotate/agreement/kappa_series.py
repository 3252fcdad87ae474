"""Cohen's κ over labels: κ after the first n paired labels, n = 1..N, for one field.

Coordinator-side only (it reads both raters' labels). A case becomes a *paired label* of a
field once both raters have a current value for it; the pairs are put in the order in
which they became what they are now (the later of the two raters' events that set the
current values, event ids being commit order). κ after n is the kappa of the confusion
table of the first n pairs, computed by `annotate.agreement.kappa.kappa_of_counts` — the exact
formula behind the live κ of the agreement table (`cohen_kappa`), here on the running
table's totals — so the last point is the live κ exactly. A
relabelled case moves to where its new value was set: the series describes the current
labels in the order they were last set, not a replay of every value seen on screen.

Undefined prefixes (chance agreement 1: both raters used one category so far) are None
and are not drawn.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import sqlite_utils

from analysis.common.plotdata import PlotData, Series
from annotate.agreement.kappa import kappa_of_counts
from annotate.agreement.label_log import LabelLog, Pair, TableKey, table_categories
from annotate.codebook import binary as binary_value


def prefix_kappas(pairs: Sequence[tuple[str, str]],
                  categories: Sequence[str]) -> tuple[float | None, ...]:
    """κ of the first n pairs for n = 1..len(pairs) (None where κ is undefined).

    Args:
        pairs: (rater A value, rater B value), in order.
        categories: the table's categories (rows and columns).

    Raises:
        ValueError: a value outside `categories`.
    """
    index = {c: i for i, c in enumerate(categories)}
    # The running table's totals, updated per pair (O(1) a step, not the whole table:
    # at 10,000 labels per rater the full recount made each recomputation ~0.4 s).
    rows, cols = [0] * len(categories), [0] * len(categories)
    n = diagonal = expected = 0  # expected: Σ r_k c_k
    out: list[float | None] = []
    for a, b in pairs:
        if a not in index or b not in index:
            raise ValueError(f"value outside {tuple(categories)}: {(a, b)}")
        i, j = index[a], index[b]
        # r_i grows by one: Σ gains c_i; then c_j grows by one: Σ gains the new r_j.
        expected += cols[i]
        rows[i] += 1
        expected += rows[j]
        cols[j] += 1
        n += 1
        diagonal += i == j
        out.append(kappa_of_counts(n, diagonal, expected))
    return tuple(out)


def paired_labels(db: sqlite_utils.Database, log: LabelLog, pair: Pair,
                  key: TableKey) -> list[tuple[str, str]]:
    """The pair's current (A, B) values of one field (or its binary form), in the order
    they became current (see the module docstring)."""
    return _paired(db, log, pair, [key])[key]


def _paired(db: sqlite_utils.Database, log: LabelLog, pair: Pair,
            keys: Sequence[TableKey]) -> dict[TableKey, list[tuple[str, str]]]:
    """`paired_labels` of every key, in one pass over the set's cases."""
    (a_id, _), (b_id, _) = pair
    forms: dict[str, list[TableKey]] = {}
    for key in keys:
        forms.setdefault(key[0], []).append(key)
    ordered: dict[TableKey, list[tuple[int, str, str]]] = {key: [] for key in keys}
    binary: dict[tuple[str, str], str | None] = {}  # (field, value) -> its binary form
    for case in log.cases(db):
        la, lb = log.labels.get((case.id, a_id)), log.labels.get((case.id, b_id))
        if not la or not lb:
            continue
        for name, name_keys in forms.items():
            if name not in la or name not in lb:
                continue
            va, vb = la[name], lb[name]
            when = max(log.set_at[(case.id, a_id)][name], log.set_at[(case.id, b_id)][name])
            for key in name_keys:
                if not key[1]:
                    ordered[key].append((when, va, vb))
                    continue
                for value in (va, vb):
                    if (name, value) not in binary:
                        binary[(name, value)] = binary_value(name, value)
                ba, bb = binary[(name, va)], binary[(name, vb)]
                if ba is not None and bb is not None:
                    ordered[key].append((when, ba, bb))
    out = {}
    for key, rows in ordered.items():
        rows.sort()
        out[key] = [(va, vb) for _, va, vb in rows]
    return out


def ordered_kappas(rows: Sequence[int], cols: Sequence[int],
                   q: int) -> tuple[float | None, ...]:
    """`prefix_kappas` of pairs given as category indices (row i, column j), in numpy:
    the same floats. The running totals are cumulative sums (r_k, c_k per category, the
    diagonal), Σ r_k c_k their product summed; κ = (n·diagonal − Σ r_k c_k) /
    (n² − Σ r_k c_k) is divided in float64, where both integers are exact (n² < 2⁵³) and
    IEEE division rounds correctly — as Python's int / int does in `kappa_of_counts`."""
    size = len(rows)
    if size == 0:
        return ()
    i = np.fromiter(rows, dtype=np.int64, count=size)
    j = np.fromiter(cols, dtype=np.int64, count=size)
    categories = np.arange(q)
    row_totals = np.cumsum(i[:, None] == categories, axis=0, dtype=np.int64)
    col_totals = np.cumsum(j[:, None] == categories, axis=0, dtype=np.int64)
    expected = (row_totals * col_totals).sum(axis=1)
    diagonal = np.cumsum(i == j, dtype=np.int64)
    n = np.arange(1, size + 1, dtype=np.int64)
    numerator, denominator = n * diagonal - expected, n * n - expected
    undefined = denominator == 0  # chance agreement 1 (n ≥ 1 here)
    out: list[float | None] = (numerator / np.where(undefined, 1, denominator)).tolist()
    for at in np.flatnonzero(undefined).tolist():
        out[at] = None
    return tuple(out)


def kappa_series(db: sqlite_utils.Database, log: LabelLog, pair: Pair | None,
                 keys: Sequence[TableKey]) -> dict[TableKey, tuple[float | None, ...]]:
    """κ over paired labels for every table key (empty series without a rater pair);
    `log` already refreshed by the caller.

    The pairs come in order from the log's kept tables (`PairTables.ordered`, updated as
    cases change: a new label moves one case), so the series costs one vectorized pass
    over the paired labels (`ordered_kappas`), not a walk of every case's labels and a
    sort (`paired_labels` + `prefix_kappas`, the reference the tests compare it with)."""
    if pair is None:
        return {key: () for key in keys}
    tables = log.tables(pair, list(keys))
    return {key: ordered_kappas(*tables.ordered(key), len(table_categories(key)))
            for key in keys}


def series_plot(title: str, kappas: Sequence[float | None]) -> PlotData:
    """The κ series as a figure for plotext (`workbench.tui.widgets.figure_plot`)."""
    xs = tuple(range(1, len(kappas) + 1))
    drawn = [k for k in kappas if k is not None]
    low = min([0.0, *drawn])
    notes: tuple[str, ...]
    if not kappas:
        notes = ("no case labelled by both raters yet",)
    elif not drawn:
        notes = ((f"κ undefined after every one of the {len(kappas)} paired labels "
                  "(one category used so far)"),)
    else:
        last = kappas[-1]
        notes = (f"κ after {len(kappas)} paired labels: "
                 + ("undefined" if last is None else f"{last:.2f}")
                 + f" · lowest {min(drawn):.2f} · highest {max(drawn):.2f}",)
    return PlotData(title=f"κ over paired labels: {title}", xlabel="paired labels n",
                    ylabel="κ after n", series=(Series("κ", xs, tuple(kappas)),),
                    xlim=(1, max(2, len(kappas))), ylim=kappa_ylim(low), notes=notes)


KAPPA_PAD: float = 0.05
"""Share of the κ axis left free beyond its lowest value and beyond 1.0: on the frame itself
the lowest point was clipped and a line at κ = 1.00 was drawn on the top edge, invisible."""


def kappa_ylim(low: float) -> tuple[float, float]:
    """The κ axis: from a little under the lowest value (or 0) to a little over 1.0."""
    pad = KAPPA_PAD * (1.0 - low)
    return (low - pad, 1.0 + pad)
