"""Percentile bootstrap over items, vectorised with numpy: resample weights and ratio estimates.

Every rate in the report is a ratio of per-item sums, Σ num_i / Σ den_i, over the items of
one arm (an item contributes as many edits as fired on it). Resampling items with
replacement is the same as giving item i a multinomial count w_bi in replicate b, so all
replicates of a rate are one matrix product: (W @ num) / (W @ den). One weight matrix per arm
is shared by every metric of that arm, which makes composite CIs (FCS, MFC) coherent.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

N_BOOT: int = 200
"""Default bootstrap replicates of every percentile CI (seed 002 §5: 95% percentile bootstrap
CIs, n_boot = 200; the other papers' CIs use the same default)."""

CI_LEVEL: float = 0.95
"""Coverage of every reported confidence interval."""

DEFAULT_SEED: int = 0
"""Default seed of the bootstrap resampling (reports are reproducible by default)."""


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its percentile bootstrap CI and the count it rests on.

    Attributes:
        value: the estimate on the observed data (NaN when not computable).
        low: lower CI bound (NaN when not computable).
        high: upper CI bound.
        n: number of observations (edits, items or pairs) behind `value`.
    """

    value: float
    low: float = math.nan
    high: float = math.nan
    n: int = 0

    @property
    def ok(self) -> bool:
        """Whether the point estimate exists."""
        return not math.isnan(self.value)

    def as_dict(self) -> dict[str, float | int | None]:
        """JSON-friendly dict with NaN as None."""
        return {"value": _none(self.value), "low": _none(self.low),
                "high": _none(self.high), "n": self.n}


NAN_ESTIMATE = Estimate(math.nan)


def _none(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def resample_weights(n_items: int, n_boot: int, seed: int | Sequence[int]) -> np.ndarray:
    """Multinomial resampling counts: row b says how often each item is drawn in replicate b.

    Args:
        n_items: number of items (the resampling unit).
        n_boot: number of replicates.
        seed: seed (or seed sequence, e.g. [seed, arm_id]) of `numpy.random.default_rng`;
            the same seed gives the same matrix.

    Returns:
        An (n_boot, n_items) float array whose rows each sum to n_items.
    """
    if n_items == 0 or n_boot == 0:
        return np.zeros((n_boot, n_items))
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_items, size=(n_boot, n_items))
    # Offsetting each replicate's draws by b * n_items turns n_boot bincounts into one.
    offsets = (np.arange(n_boot) * n_items)[:, None]
    counts = np.bincount((draws + offsets).ravel(), minlength=n_boot * n_items)
    return counts.reshape(n_boot, n_items).astype(float)


def percentile_ci(replicates: np.ndarray, level: float = CI_LEVEL) -> tuple[float, float]:
    """Percentile interval of bootstrap replicates, ignoring NaN (undefined) replicates."""
    finite = replicates[~np.isnan(replicates)]
    if finite.size == 0:
        return math.nan, math.nan
    alpha = (1.0 - level) / 2.0
    low, high = np.percentile(finite, [100 * alpha, 100 * (1 - alpha)])
    return float(low), float(high)


def ratio(num: np.ndarray, den: np.ndarray, weights: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray]:
    """Point estimate and replicates of Σ num / Σ den (NaN where Σ den = 0).

    `num` and `den` may be vectors (n_items,) or matrices (n_items, k) for k rates at once;
    the point is then a 0-d array (`float()` of it is the rate) or one of k rates.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        total = den.sum(axis=0)
        point = np.where(total > 0, num.sum(axis=0) / np.where(total > 0, total, 1), np.nan)
        rep_den = weights @ den
        reps = np.where(rep_den > 0, (weights @ num) / np.where(rep_den > 0, rep_den, 1),
                        np.nan)
    return point, reps


def estimate(point: float, replicates: np.ndarray, n: int) -> Estimate:
    """Bundle a point estimate, the percentile CI of its replicates, and its count."""
    point = float(point)
    if math.isnan(point):
        return Estimate(math.nan, n=n)
    low, high = percentile_ci(np.asarray(replicates, dtype=float))
    return Estimate(point, low, high, n)


def ratio_estimate(num: np.ndarray, den: np.ndarray, weights: np.ndarray) -> Estimate:
    """`ratio` of two per-item vectors as an `Estimate` (n = Σ den, the number of edits)."""
    point, reps = ratio(num, den, weights)
    return estimate(float(point), reps, int(round(float(den.sum()))))


def paired_difference(a: np.ndarray, b: np.ndarray, weights: np.ndarray) -> Estimate:
    """Mean of a_i − b_i over paired items with a paired bootstrap CI.

    Both members of a pair are resampled together (the same item weight), so the CI
    reflects the item-level correlation of the two conditions. NaN pairs are dropped.
    """
    keep = ~(np.isnan(a) | np.isnan(b))
    diff = np.where(keep, a - b, 0.0)
    return ratio_estimate(diff, keep.astype(float), weights)


def nanmean_columns(values: np.ndarray) -> np.ndarray:
    """Row-wise mean over the defined (non-NaN) columns; NaN where none is defined."""
    defined = ~np.isnan(values)
    count = defined.sum(axis=-1)
    total = np.where(defined, values, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.where(count > 0, count, 1), np.nan)


def spread_columns(values: np.ndarray) -> np.ndarray:
    """Row-wise max − min over defined columns; NaN with fewer than two defined."""
    defined = ~np.isnan(values)
    count = defined.sum(axis=-1)
    high = np.where(defined, values, -np.inf).max(axis=-1)
    low = np.where(defined, values, np.inf).min(axis=-1)
    return np.where(count >= 2, high - low, np.nan)
