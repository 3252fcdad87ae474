"""Exact signs of δ* = Ψ(targeted) − Ψ(baseline) for the aggregate tests, from integer counts.

The bootstrap's p is a share of replicates on one side of zero (§3.4: Pr(δ* ≤ 0) for the flip
rate, Pr(δ* ≥ 0) for MI and φ), so a replicate in which both arms are *equal* must count as
a tie — against H1 — and never fall to one side by rounding. Two tables drawn from the same
items have the same n, and:

- **flip rate**: FR_t − FR_b = (off_t − off_b)/n, so its sign is the sign of the integer
  difference of off-diagonal counts (no float at all);
- **φ** (multiclass Matthews correlation, Eq. 4 at k = 2): φ = N/√D with the integers
  N = n·trace − Σ rᵢcᵢ and D = (n² − Σcᵢ²)(n² − Σrᵢ²), and φ = 0 where D = 0 (the paper's
  convention for a constant margin); the sign of φ_t − φ_b follows from the signs of N and
  from comparing N_t²·D_b with N_b²·D_t in Python integers;
- **MI**: n·MI·ln 2 = n ln n + Σ n_ab ln n_ab − Σ r_a ln r_a − Σ c_b ln c_b, so with equal n
  MI_t ≥ MI_b ⇔ Π n_ab^n_ab / (Π r^r Π c^c) is larger for t — a comparison of two rationals,
  done in Python integers (0⁰ = 1).

The integer comparisons are only needed where the float difference is within `TIE_BAND` of
zero: the float metrics carry an error below 1e-13 (sums of at most k² terms of size ≤ log2 k,
computed in double precision), so outside the band their sign is the exact sign. Inside it
the common exact ties are recognised vectorised (identical tables, tables equal up to the
symmetries that leave the metric unchanged, two constant-margin tables) and only what is
left goes through the Python-integer comparison, one pair at a time.
"""

from __future__ import annotations

import math

import numpy as np

from analysis.counterfactual.definitions import table_metrics

TIE_BAND = 1e-9
"""|Ψ_t − Ψ_b| below this is decided by exact integer arithmetic, not by the floats."""


def integer_tables(tables: np.ndarray) -> np.ndarray:
    """Count tables (..., k, k) as int64, checking they hold whole numbers."""
    arr = np.asarray(tables)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    rounded = np.rint(arr)
    if not np.array_equal(rounded, arr):
        raise ValueError("exact comparison needs count tables of whole numbers")
    return rounded.astype(np.int64)


def _same_n(t: np.ndarray, b: np.ndarray) -> np.ndarray:
    n_t, n_b = t.sum(axis=(-2, -1)), b.sum(axis=(-2, -1))
    if not np.array_equal(n_t, n_b):
        raise ValueError("exact comparison needs the two arms' tables to have the same n")
    return n_t


def flip_rate_sign(tables_t: np.ndarray, tables_b: np.ndarray) -> np.ndarray:
    """sign(FR_t − FR_b) per pair of tables of equal n: off-diagonal count t − b."""
    t, b = integer_tables(tables_t), integer_tables(tables_b)
    n = _same_n(t, b)
    trace_t = np.trace(t, axis1=-2, axis2=-1)
    trace_b = np.trace(b, axis1=-2, axis2=-1)
    return np.sign((n - trace_t) - (n - trace_b)).astype(np.int8)


def phi_parts(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The integers (N, D) of φ = N/√D for each table (φ = 0 where D = 0)."""
    t = integer_tables(tables)
    n = t.sum(axis=(-2, -1))
    if n.size and int(n.max()) > 50_000:  # n⁴ must fit in int64
        t = t.astype(object)
        n = t.sum(axis=(-2, -1))
    rows, cols = t.sum(axis=-1), t.sum(axis=-2)
    numerator = n * np.trace(t, axis1=-2, axis2=-1) - (rows * cols).sum(axis=-1)
    denominator = (n * n - (cols * cols).sum(axis=-1)) * (n * n - (rows * rows).sum(axis=-1))
    return numerator, denominator


def _phi_pair_sign(n_t: int, d_t: int, n_b: int, d_b: int) -> int:
    s_t = 0 if d_t == 0 else (n_t > 0) - (n_t < 0)
    s_b = 0 if d_b == 0 else (n_b > 0) - (n_b < 0)
    if s_t != s_b or s_t == 0:
        return (s_t > s_b) - (s_t < s_b)
    # Same nonzero sign: compare |φ|² = N²/D, then flip for negative φ.
    left, right = n_t * n_t * d_b, n_b * n_b * d_t
    bigger = (left > right) - (left < right)
    return bigger if s_t > 0 else -bigger


def _mi_numbers(table: np.ndarray) -> tuple[int, int]:
    """(Π n_ab^n_ab, Π r_a^r_a · Π c_b^c_b) of one table, in Python integers."""
    cells = [int(x) for x in table.ravel()]
    rows = [int(x) for x in table.sum(axis=1)]
    cols = [int(x) for x in table.sum(axis=0)]
    top = math.prod(x ** x for x in cells)
    bottom = math.prod(x ** x for x in rows) * math.prod(x ** x for x in cols)
    return top, bottom


def _mi_pair_sign(t: np.ndarray, b: np.ndarray) -> int:
    top_t, bottom_t = _mi_numbers(t)
    top_b, bottom_b = _mi_numbers(b)
    left, right = top_t * bottom_b, top_b * bottom_t
    return (left > right) - (left < right)


def _symmetric_equal(t: np.ndarray, b: np.ndarray, *, signed: bool) -> np.ndarray:
    """Tables equal up to a symmetry that keeps the metric: transposition always; for 2×2
    tables also swapping both labels in both arms (and, for MI only, swapping the rows or
    the columns alone, which negates φ but keeps MI)."""
    equal = np.all(t == b, axis=(-2, -1)) | np.all(t == np.swapaxes(b, -1, -2), axis=(-2, -1))
    if t.shape[-1] == 2:
        both = b[..., ::-1, ::-1]
        equal |= np.all(t == both, axis=(-2, -1))
        equal |= np.all(t == np.swapaxes(both, -1, -2), axis=(-2, -1))
        if not signed:
            for flipped in (b[..., ::-1, :], b[..., :, ::-1]):
                equal |= np.all(t == flipped, axis=(-2, -1))
                equal |= np.all(t == np.swapaxes(flipped, -1, -2), axis=(-2, -1))
    return equal


def _independent(t: np.ndarray) -> np.ndarray:
    """Tables whose MI is exactly 0: n·n_ab = r_a·c_b in every cell (a constant margin too)."""
    n = t.sum(axis=(-2, -1))[..., None, None]
    rows, cols = t.sum(axis=-1)[..., :, None], t.sum(axis=-2)[..., None, :]
    if n.size and int(n.max()) > 3_000_000_000:
        t, n, rows, cols = (x.astype(object) for x in (t, n, rows, cols))
    return np.all(n * t == rows * cols, axis=(-2, -1))


def metric_sign(metric: str, tables_t: np.ndarray, tables_b: np.ndarray,
                value_t: np.ndarray | None = None, value_b: np.ndarray | None = None
                ) -> np.ndarray:
    """The exact sign of Ψ_t − Ψ_b for each pair of count tables of equal n.

    Args:
        metric: 'fr', 'phi' or 'mi'.
        tables_t, tables_b: (..., k, k) count tables (whole numbers), same batch shape.
        value_t, value_b: the float metrics of the tables, when already computed (φ, MI).

    Returns:
        int8 array of the batch shape: +1 (t larger), 0 (exactly equal), −1.
    """
    if metric == "fr":
        return flip_rate_sign(tables_t, tables_b)
    t, b = integer_tables(tables_t), integer_tables(tables_b)
    _same_n(t, b)
    if value_t is None or value_b is None:
        value_t, value_b = table_metrics(t)[metric], table_metrics(b)[metric]
    shape, k = t.shape[:-2], t.shape[-1]
    t, b = t.reshape(-1, k, k), b.reshape(-1, k, k)
    diff = (np.asarray(value_t, dtype=float) - np.asarray(value_b, dtype=float)).reshape(-1)
    signs = np.sign(diff).astype(np.int8)
    near = ~(np.abs(diff) > TIE_BAND)  # NaN (empty tables) stays "near": decided below
    if not near.any():
        return signs.reshape(shape)
    index = np.nonzero(near)[0]
    t_near, b_near = t[index], b[index]
    if metric == "phi":
        num_t, den_t = phi_parts(t_near)
        num_b, den_b = phi_parts(b_near)
        exact = np.zeros(len(t_near), dtype=np.int8)
        both_flat = (den_t == 0) & (den_b == 0)
        todo = ~both_flat & ~_symmetric_equal(t_near, b_near, signed=True)
        for i in np.nonzero(todo)[0]:
            exact[i] = _phi_pair_sign(int(num_t[i]), int(den_t[i]), int(num_b[i]),
                                      int(den_b[i]))
    elif metric == "mi":
        exact = np.zeros(len(t_near), dtype=np.int8)
        tied = _symmetric_equal(t_near, b_near, signed=False) | (
            _independent(t_near) & _independent(b_near))
        for i in np.nonzero(~tied)[0]:
            exact[i] = _mi_pair_sign(t_near[i], b_near[i])
    else:
        raise ValueError(f"metric must be 'fr', 'phi' or 'mi', got {metric!r}")
    signs[index] = exact
    return signs.reshape(shape)
