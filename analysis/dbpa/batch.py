"""ω of many re-splits at once, each with the key its ties are decided on (seed 001).

Similarities are integers g = round(s·SCALE) (`statistics.similarity_grid`), so two of the
three discrepancies can be compared in exact integer arithmetic:

- `energy` (1-D energy distance between P0 and P1, SciPy's `energy_distance`):
  ω = g/(n0·n1)·√(2·key/SCALE) with key = Σ_w width_w·(c0_w·a − c1_w·b)², where c0, c1
  are the cumulative counts of P0 and P1 at each step of the pooled sorted values,
  n0 = |P0|, n1 = |P1|, g = gcd(n0, n1), a = n1/g, b = n0/g. The key is an integer and √ is
  monotone, so ω_b ≥ T_obs ⇔ key_b ≥ key_obs, exactly.
- `energy_emb` (energy between the two groups' embeddings with cosine distance 1 − s,
  V-statistic): ω = key/(n²m²·SCALE) with key = m²·S_XX + n²·S_YY − 2nm·S_XY, the S the
  sums of g over the blocks (diagonals included). Algebraically ω = ‖x̄ − ȳ‖² ≥ 0, so a
  negative key (the 6-decimal rounding of s) is clipped to 0.
- `jsd` is a sum of logarithms of counts: no integer form. Its key is the divergence D
  (ω = √D); a re-split ties with the observed split when D_b ≥ D_obs − `JSD_TIE_TOLERANCE`.
  D ≤ ln 2 and its 30-term sum carries an error below 1e-14, so the tolerance (1e-12)
  absorbs float noise and nothing else: e.g. every split whose two histograms are
  disjoint has D = ln 2 exactly, whatever bins they fill.

Where an integer key could overflow int64 (energy at k > ~110), it is computed in float64
and compared within a relative `FLOAT_TIE_TOLERANCE` instead (`Scores.exact` is False).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from analysis.dbpa.definitions import JSD_BINS, SCALE

if TYPE_CHECKING:
    import numpy as np

JSD_TIE_TOLERANCE = 1e-12
"""Divergences within this of the observed one tie with it (D ∈ [0, ln 2])."""

FLOAT_TIE_TOLERANCE = 1e-12
"""Relative tolerance of a float key (only where the integer key would overflow)."""

CHUNK = 500
"""Re-splits evaluated per vectorised block (bounds memory to ~20 MB at k = 50)."""

INT_LIMIT = 2 ** 62
"""Integer keys are computed in int64 when their bound stays below this."""


@dataclass(frozen=True)
class Scores:
    """ω of a set of splits and the keys their ties are decided on.

    Attributes:
        omega: the discrepancy of each split (float64), the reported statistic.
        key: a monotone function of ω, integer (int64) where `exact`, else float64.
        exact: whether the keys are exact integers.
        distance: which ω.
    """

    omega: np.ndarray
    key: np.ndarray
    exact: bool
    distance: str

    def at_least(self, observed: Scores) -> np.ndarray:
        """Which splits have ω ≥ the observed split's (ties counted exactly)."""
        import numpy as np

        target = observed.key[0]
        if self.exact and observed.exact:
            return self.key >= target
        if self.distance == "jsd":
            return self.key >= target - JSD_TIE_TOLERANCE
        return self.key >= target - FLOAT_TIE_TOLERANCE * np.abs(target)


def gather(grid: np.ndarray, perms: np.ndarray, n0: int) -> tuple[np.ndarray, np.ndarray]:
    """P0 and P1 (integer similarities) of every split in `perms` (rows: pooled indices,
    the first n0 form the baseline group)."""
    import numpy as np

    ti, tj = np.triu_indices(n0, k=1)
    first, second = perms[:, :n0], perms[:, n0:]
    within = grid[first[:, ti], first[:, tj]]
    across = grid[first[:, :, None], second[:, None, :]].reshape(len(perms), -1)
    return within, across


def histogram_bins(values: np.ndarray, lo: np.ndarray, span: np.ndarray,
                   bins: int = JSD_BINS) -> np.ndarray:
    """Per-row bin ⌊bins·(v − lo)/span⌋ of integer similarities, the maximum in the last
    bin; 0 everywhere when a row's span is 0.

    Exact although computed in float64: bins·(v − lo) and span are integers below 2^53, and
    IEEE division is correctly rounded, so a quotient just under an integer never rounds
    up to it (and float division vectorises where integer division does not)."""
    import numpy as np

    numerator = (values - lo[:, None]).astype(np.float64)
    numerator *= bins
    numerator /= np.maximum(span, 1)[:, None]
    index = numerator.astype(np.intp)
    return np.minimum(index, bins - 1, out=index)


def jsd_counts(within: np.ndarray, across: np.ndarray, bins: int = JSD_BINS
               ) -> tuple[np.ndarray, np.ndarray]:
    """Bin counts of P0 and P1 per row (integers)."""
    import numpy as np

    rows = len(within)
    lo = np.minimum(within.min(axis=1), across.min(axis=1))
    span = np.maximum(within.max(axis=1), across.max(axis=1)) - lo
    offsets = (np.arange(rows) * bins)[:, None]
    counts = []
    for values in (within, across):
        index = histogram_bins(values, lo, span, bins)
        index += offsets
        counts.append(np.bincount(index.ravel(), minlength=rows * bins).reshape(rows, bins))
    return counts[0], counts[1]


def jsd_scores(within: np.ndarray, across: np.ndarray, bins: int = JSD_BINS) -> Scores:
    """ω_JSD (SciPy's `jensenshannon`, natural log: √ of the divergence) of each row."""
    import numpy as np
    from scipy.special import rel_entr

    c0, c1 = jsd_counts(within, across, bins)
    p, q = c0 / within.shape[1], c1 / across.shape[1]
    m = (p + q) / 2.0
    divergence = np.maximum((rel_entr(p, m).sum(axis=1) + rel_entr(q, m).sum(axis=1)) / 2.0,
                            0.0)
    return Scores(np.sqrt(divergence), divergence, False, "jsd")


def energy_scores(within: np.ndarray, across: np.ndarray, span: int | None = None) -> Scores:
    """scipy.stats.energy_distance of each row pair, with its exact integer key (module
    docstring). Ties between values give zero-width steps, as in SciPy's `_cdf_distance`;
    the sample of a value rides in the lowest bit, so one integer sort orders both.

    `span` bounds max − min of every row (the whole grid's range, so that every block of
    one test makes the same exact-or-float choice); default: these rows' own range."""
    import numpy as np

    n0, n1 = within.shape[1], across.shape[1]
    g = math.gcd(n0, n1)
    a, b = n1 // g, n0 // g
    keys = np.concatenate([within.astype(np.int64) * 2, across.astype(np.int64) * 2 + 1],
                          axis=1)
    keys.sort(axis=1)
    values = keys >> 1
    step = np.where(keys & 1, -b, a)
    gap = np.cumsum(step, axis=1)[:, :-1]
    widths = np.diff(values, axis=1)
    if span is None:
        span = int((values[:, -1] - values[:, 0]).max()) if len(keys) else 0
    # |c0·a − c1·b| ≤ n0·a = n0·n1/g, so key ≤ span·(n0·n1/g)².
    exact = span * (n0 * a) ** 2 < INT_LIMIT
    if exact:
        key = (widths * gap * gap).sum(axis=1)
    else:
        gap_f = gap.astype(np.float64)
        key = (widths.astype(np.float64) * gap_f * gap_f).sum(axis=1)
    omega = g / (n0 * n1) * np.sqrt(2.0 * key.astype(np.float64) / SCALE)
    return Scores(omega, key, exact, "energy")


def energy_emb_scores(grid: np.ndarray, perms: np.ndarray, n0: int) -> Scores:
    """Energy between the groups' embeddings (cosine distance, V-statistic) of each split,
    with its exact integer key (module docstring).

    The block sums are computed by float64 matrix products of 0/1 memberships with the
    integer grid: every product and partial sum is an integer below 2^53, so they are
    exact in any summation order."""
    import numpy as np

    total = len(grid)
    n, m = n0, total - n0
    member = np.zeros((len(perms), total))
    np.put_along_axis(member, perms[:, :n0], 1.0, axis=1)
    other = 1.0 - member
    values = grid.astype(np.float64)
    projected = member @ values
    s_xx = np.rint((projected * member).sum(axis=1))
    s_xy = np.rint((projected * other).sum(axis=1))
    s_yy = np.rint(((other @ values) * other).sum(axis=1))
    exact = 4 * n * n * m * m * SCALE < INT_LIMIT
    if exact:
        s_xx, s_xy, s_yy = (s.astype(np.int64) for s in (s_xx, s_xy, s_yy))
    key = m * m * s_xx + n * n * s_yy - 2 * n * m * s_xy
    key = np.maximum(key, 0)
    return Scores(key / (n * n * m * m * SCALE), key, exact, "energy_emb")


def block_scores(grid: np.ndarray, block: np.ndarray, n0: int, distance: str) -> Scores:
    """Scores of one block of splits."""
    if distance == "energy_emb":
        return energy_emb_scores(grid, block, n0)
    within, across = gather(grid, block, n0)
    if distance == "jsd":
        return jsd_scores(within, across)
    return energy_scores(within, across, span=int(grid.max()) - int(grid.min()))


def concatenate(parts: list[Scores]) -> Scores:
    """Blocks' scores as one (exact only if every block's keys are)."""
    import numpy as np

    exact = all(p.exact for p in parts)
    keys = [p.key if exact else p.key.astype(np.float64) for p in parts]
    return Scores(np.concatenate([p.omega for p in parts]), np.concatenate(keys), exact,
                  parts[0].distance)
