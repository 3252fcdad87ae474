"""One arm's resampling frame and the statistic every seed-002 metric returns.

`Stat` is a point estimate with its bootstrap replicates (and, for ratios, the replicate
numerators and denominators, so rates can be pooled across arms); `ArmContext` holds one
arm's items and their bootstrap weights; `pooled_stat` and `mean_stat` combine the
statistics of several arms (a model's datasets in a panel, a 'Mean' row).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from analysis.audit import definitions as d
from analysis.common.bootstrap import (
    Estimate,
    estimate,
    ratio,
    resample_weights,
)

if TYPE_CHECKING:
    import pandas as pd

    from analysis.audit.frames import AuditFrames


def usable(obs: pd.DataFrame, roles: tuple[str, ...] = d.PERTURBED_ROLES) -> pd.DataFrame:
    """Fired, generated, parsed edits (with a parsed baseline) of the given roles."""
    return obs[obs["usable"] & obs["role"].isin(roles)]


@dataclass(frozen=True)
class Stat:
    """A point estimate with its bootstrap replicates (kept so composites get CIs too).

    A ratio Σ num / Σ den also keeps its numerator and denominator, on the data and per
    replicate, so ratios of independently resampled arms (one model on several datasets)
    can be pooled exactly (`pooled_stat`). Where the point estimate is a function of whole
    counts (a flip rate, an accuracy, Table 4's Δ) it is kept as a `Fraction` in `exact` as
    well, and `point` is that fraction's nearest float: a Δ of exactly 0 is 0.0, not
    −5.55e-15, and signs and thresholds can be decided on it.
    """

    point: float
    reps: np.ndarray
    n: int
    num: float = math.nan
    den: float = math.nan
    num_reps: np.ndarray | None = None
    den_reps: np.ndarray | None = None
    exact: Fraction | None = None

    def estimate(self) -> Estimate:
        """The `Estimate` (value, percentile CI, n) of this statistic."""
        return estimate(self.point, self.reps, self.n)

    @property
    def value(self) -> float | Fraction:
        """The exact point estimate where there is one, else the float."""
        return self.exact if self.exact is not None else self.point


def exact_ratio(num: float, den: float) -> Fraction | None:
    """num / den as a Fraction when both are whole numbers and den > 0, else None."""
    if den > 0 and float(num).is_integer() and float(den).is_integer():
        return Fraction(int(num), int(den))
    return None


T = TypeVar("T")


def present(value: T | None) -> T:
    """A statistic (or table) the caller knows is there: always computed, or selected on
    being defined; a missing one is a bug, not a value to print."""
    if value is None:
        raise ValueError("a statistic that is always computed is missing")
    return value


def exact_mean(values: list[Fraction | None]) -> Fraction | None:
    """The mean of exact values as a Fraction; None if there are none or any is missing."""
    known = [v for v in values if v is not None]
    if not values or len(known) < len(values):
        return None
    return sum(known, Fraction(0)) / len(known)


def _integral(values: np.ndarray) -> bool:
    return bool(np.all(np.mod(values, 1.0) == 0.0)) if values.size else True


@dataclass(frozen=True)
class ArmContext:
    """One arm's resampling frame: its items (the bootstrap unit) and the weight matrix.

    Attributes:
        arm_id: the arm.
        label: its display name.
        item_ids: the arm's items, sorted; column j of `weights` is item_ids[j].
        weights: (n_boot, n_items) multinomial counts shared by all of the arm's metrics.
    """

    arm_id: int
    label: str
    item_ids: np.ndarray
    weights: np.ndarray
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    def cached(self, name: Any, obs: pd.DataFrame, compute: Callable[[], Any]) -> Any:
        """`compute()` once per (name, frame) for this arm: the metrics slice the same
        observations many times, and frames are never modified after `observations`."""
        key = (name, id(obs))
        hit = self.memo.get(key)
        if hit is None or hit[0] is not obs:  # holding `obs` keeps its id unique
            hit = (obs, compute())
            self.memo[key] = hit
        return hit[1]

    def usable(self, obs: pd.DataFrame,
               roles: tuple[str, ...] = d.PERTURBED_ROLES) -> pd.DataFrame:
        """`usable(obs, roles)`, computed once per frame and roles."""
        return self.cached(("usable", roles), obs, lambda: usable(obs, roles))

    def flip_arrays(self, obs: pd.DataFrame) -> dict[str, np.ndarray]:
        """item_id, flip, intent, family, operator_id of the usable M- and F-block edits as
        numpy arrays (AFR is sliced a dozen ways per arm; arrays slice cheaply)."""
        def compute() -> dict[str, np.ndarray]:
            rows = self.usable(obs)
            return {"item_id": rows["item_id"].to_numpy(np.int64),
                    "flip": rows["flip"].to_numpy(float),
                    **{c: rows[c].to_numpy(object) for c in ("intent", "family",
                                                               "operator_id")}}

        return self.cached("flip_arrays", obs, compute)

    def sums(self, item_ids: pd.Series | np.ndarray, values: pd.Series | np.ndarray,
             den: pd.Series | np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per-item sums of `values` (numerator) and of `den` (default: row counts)."""
        pos = np.searchsorted(self.item_ids, np.asarray(item_ids, dtype=np.int64))
        n = len(self.item_ids)
        values = np.asarray(values, dtype=float)
        den_values = np.ones(len(pos)) if den is None else np.asarray(den, dtype=float)
        return (np.bincount(pos, weights=values, minlength=n),
                np.bincount(pos, weights=den_values, minlength=n))

    def ratio(self, item_ids: pd.Series | np.ndarray, values: pd.Series | np.ndarray,
              den: pd.Series | np.ndarray | None = None) -> Stat:
        """Σ values / Σ den over the given rows, with replicates."""
        num, den_sum = self.sums(item_ids, values, den)
        point, reps = ratio(num, den_sum, self.weights)
        exact = (exact_ratio(float(num.sum()), float(den_sum.sum()))
                 if _integral(num) and _integral(den_sum) else None)
        return Stat(float(exact) if exact is not None else float(point), reps,
                    int(round(float(den_sum.sum()))), float(num.sum()), float(den_sum.sum()),
                    self.weights @ num, self.weights @ den_sum, exact)

    def per_item_mean(self, item_ids: pd.Series | np.ndarray,
                      values: pd.Series | np.ndarray) -> np.ndarray:
        """Mean of `values` per item (NaN for items without rows), aligned to `item_ids`."""
        num, den = self.sums(item_ids, values)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)

    def paired(self, a: np.ndarray, b: np.ndarray) -> tuple[Stat, Stat, Stat]:
        """Paired comparison of two per-item vectors: (mean a, mean b, mean a − b).

        Only items where both are defined enter; all three use the same resamples.
        """
        keep = ~(np.isnan(a) | np.isnan(b))
        den = keep.astype(float)
        results = []
        for values in (np.where(keep, a, 0.0), np.where(keep, b, 0.0),
                       np.where(keep, a - b, 0.0)):
            point, reps = ratio(values, den, self.weights)
            exact = exact_ratio(float(values.sum()), float(den.sum())) if _integral(
                values) else None
            results.append(Stat(float(exact) if exact is not None else float(point), reps,
                                int(keep.sum()), exact=exact))
        return results[0], results[1], results[2]


def arm_context(frames: AuditFrames, arm_id: int, label: str, n_boot: int,
                seed: int) -> ArmContext:
    """The resampling frame of one arm: items with any job in the arm, seeded by (seed, arm)."""
    jobs = frames.jobs
    item_ids = np.unique(jobs.loc[jobs["arm_id"] == arm_id, "item_id"].to_numpy(np.int64))
    return ArmContext(arm_id, label, item_ids,
                      resample_weights(len(item_ids), n_boot, [seed, arm_id]))


def nan_stat(ctx: ArmContext) -> Stat:
    """An undefined statistic of the arm (NaN point, NaN replicates, n = 0)."""
    return Stat(math.nan, np.full(ctx.weights.shape[0], np.nan), 0)


def pooled_stat(stats: Sequence[Stat | None]) -> Stat | None:
    """Σ num / Σ den over ratio statistics of independently resampled arms.

    With each arm's replicate sums added replicate by replicate this is a bootstrap
    stratified by arm (e.g. by dataset for one model): the pooled rate of seed 002's
    Tables 6 and 11 ("pooled over the four medical datasets"). None when nothing is
    pooled (no ratio, or Σ den = 0).
    """
    parts = [s for s in stats if s is not None and s.num_reps is not None and s.den > 0]
    if not parts:
        return None
    num = sum(s.num for s in parts)
    den = sum(s.den for s in parts)
    # A ratio statistic carries both replicate sums (`ArmContext.ratio`), never one alone.
    num_reps = np.sum([present(s.num_reps) for s in parts], axis=0)
    den_reps = np.sum([present(s.den_reps) for s in parts], axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = np.where(den_reps > 0, num_reps / np.where(den_reps > 0, den_reps, 1), np.nan)
    exact = exact_ratio(num, den)
    return Stat(float(exact) if exact is not None else num / den, reps,
                sum(s.n for s in parts), num, den, num_reps, den_reps, exact)


def mean_stat(stats: Sequence[Stat | None]) -> Stat | None:
    """Unweighted mean of the defined statistics (a 'Mean' row, the panel's k-dataset mean).

    The replicates are averaged replicate by replicate, which is a bootstrap of the mean
    when the statistics were resampled independently (different arms, or the same model
    on different datasets: each arm draws its own item weights). A replicate undefined in
    any of them is undefined in the mean (left out of the percentiles). n = Σ n.
    """
    defined = [s for s in stats if s is not None and not math.isnan(s.point)]
    if not defined:
        return None
    reps = np.mean(np.vstack([s.reps for s in defined]), axis=0) if defined[0].reps.size \
        else defined[0].reps
    exact = exact_mean([s.exact for s in defined])
    point = float(exact) if exact is not None else float(np.mean([s.point for s in defined]))
    return Stat(point, reps, sum(s.n for s in defined), exact=exact)
