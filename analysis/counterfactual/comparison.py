"""Seed 000 comparisons: one targeted perturbation against one baseline (every test of it), and
many comparisons analysed at once with the paper's families and corrections."""

from __future__ import annotations

import gc
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from analysis.counterfactual.definitions import (
    ALPHA,
    CORRECTIONS,
    LABELS,
    N_BOOT,
    REGRESSION,
    Alternative,
    Correction,
    KlFloor,
    Sides,
    js_divergence,
    kl_divergence,
    logit_first,
)
from analysis.counterfactual.statistics import (
    TestResult,
    adjust,
    difference_model,
    level_model,
    paired_bootstrap,
    paired_t_test,
)

if TYPE_CHECKING:
    import pandas as pd


# ---------------------------------------------------------------- one comparison


@dataclass(frozen=True)
class Comparison:
    """One targeted perturbation against one baseline, for one model and task, paired by item.

    Answers are label codes into `labels` (−1 = none); distributions are (n, k) rows over
    `labels` (NaN rows = none). `direction` is the signed indicator dᵢ (+1/−1, NaN unknown).

    Attributes:
        model, target, task, baseline: what is compared (the report's row and column keys).
        kind: 'main' (Tables 4/5) or 'check' (recall/precision, Tables 6/7).
        labels: the answer labels, in code order.
        items: item ids (the regression's clusters).
    """

    model: str
    target: str
    task: str
    baseline: str
    kind: str
    labels: tuple[str, ...]
    items: np.ndarray
    orig: np.ndarray
    targeted: np.ndarray
    based: np.ndarray
    p_orig: np.ndarray
    p_target: np.ndarray
    p_base: np.ndarray
    direction: np.ndarray = field(default_factory=lambda: np.array([]))

    @property
    def key(self) -> str:
        """A stable name, also the bootstrap's seed material."""
        return f"{self.model}|{self.target}|{self.task}|{self.baseline}"


def compare(c: Comparison, *, n_boot: int = N_BOOT, seed: int = 0,
            alternative: Alternative = Alternative.LESS, regression: bool = True,
            sides: Sides = Sides.ONE, kl_floor: KlFloor = KlFloor.Q) -> list[TestResult]:
    """Every test of one comparison: bootstrap (MI, φ, FR), paired t (JSD, KL), regressions.

    The bootstrap's generator is seeded by (seed, crc32 of the comparison's key), so a
    comparison gets the same replicates whatever else is analysed with it.

    Args:
        c: the comparison.
        n_boot: bootstrap replicates B.
        seed: bootstrap seed.
        alternative: the regressions' H1 ('less': β_pert < 0, or 'greater').
        regression: run the two regressions too.
        sides: 'one' (the paper) or 'two' (the authors' code), for every test.
        kl_floor: `definitions.KL_FLOORS` reading of KL.
    """
    rng = np.random.default_rng([seed, zlib.crc32(c.key.encode())])
    k = len(c.labels)
    results = paired_bootstrap(c.orig, c.targeted, c.based, k, n_boot=n_boot, rng=rng,
                               sides=sides)
    have = (np.isfinite(c.p_orig).all(axis=1) & np.isfinite(c.p_target).all(axis=1)
            & np.isfinite(c.p_base).all(axis=1)) if len(c.items) else np.zeros(0, bool)
    p, q_t, q_b = c.p_orig[have], c.p_target[have], c.p_base[have]
    results.append(paired_t_test("jsd", js_divergence(p, q_t), js_divergence(p, q_b),
                                 sides=sides))
    results.append(paired_t_test("kl", kl_divergence(p, q_t, kl_floor),
                                 kl_divergence(p, q_b, kl_floor), sides=sides))
    if regression:
        d = c.direction[have] if c.direction.size else np.ones(int(have.sum()))
        y_t, y_b, z = logit_first(q_t), logit_first(q_b), logit_first(p)
        results.append(difference_model(y_t - y_b, d, alternative=alternative, sides=sides))
        results.append(level_model(y_t, y_b, z, d, c.items[have], alternative=alternative,
                                   sides=sides))
    return results


# ---------------------------------------------------------------- many comparisons


def family_of(c: Comparison, measure: str) -> str:
    """The declared family a test belongs to (corrections apply within it).

    Main results (Tables 4/5): one family per (model, baseline, measure), holding every
    targeted perturbation × task — the paper's "Bonferroni correction within each group of
    12 tests" (4 perturbations × 3 tasks per metric, baseline and model). Recall/precision
    checks (Tables 6/7) are each their own hypothesis, tested at p < 0.05 as the paper
    marks them, so each check (on each task) is a family of one. So is each regression:
    Table 11 marks "p < 0.05" uncorrected ("Bold indicates p<0.05"), and Tables 2/8/9
    print raw p. Q-Pain subgroup tests have their own families (`qpain`).
    """
    if c.kind == "check" or measure in REGRESSION:
        return f"{c.model} · {c.baseline} · {LABELS[measure]} · {c.target} · {c.task}"
    return f"{c.model} · {c.baseline} · {LABELS[measure]}"


def analyse(comparisons: Sequence[Comparison], *, n_boot: int = N_BOOT, seed: int = 0,
            alternative: Alternative = Alternative.LESS, alpha: float = ALPHA,
            correction: Correction = Correction.BONFERRONI, sides: Sides = Sides.ONE,
            kl_floor: KlFloor = KlFloor.Q) -> pd.DataFrame:
    """Run every test of every comparison and correct within the declared families.

    Args:
        comparisons: what to test.
        n_boot: bootstrap replicates B.
        seed: bootstrap seed.
        alternative: H1 of the regression tests ('less': β_pert < 0).
        alpha: significance level after correction.
        correction: which p decides `significant`: 'bonferroni', 'holm' or 'none' (raw p).
        sides: 'one' or 'two', for every test.
        kl_floor: the KL floor reading (`definitions.KL_FLOORS`).

    Returns:
        A DataFrame, one row per test: model, baseline, target, task, kind, measure, effect,
        target_value, baseline_value, statistic, se, p, p_two_sided, n, test, reason,
        family, family_size, p_bonferroni, p_holm, significant.
    """
    import pandas as pd

    # Every test below reads these once more; a bare string that is none of their values
    # (a caller outside the typed path) is refused here, before any test runs.
    alternative, correction = Alternative(alternative), Correction(correction)
    sides, kl_floor = Sides(sides), KlFloor(kl_floor)
    rows = []
    for c in comparisons:
        for r in compare(c, n_boot=n_boot, seed=seed, alternative=alternative,
                         regression=c.kind == "main", sides=sides, kl_floor=kl_floor):
            rows.append({"model": c.model, "baseline": c.baseline, "target": c.target,
                         "task": c.task, "kind": c.kind, "measure": r.measure,
                         "effect": r.effect, "target_value": r.target,
                         "baseline_value": r.baseline, "statistic": r.statistic,
                         "se": r.se, "p": r.p, "p_two_sided": r.p_two_sided, "n": r.n,
                         "test": r.test, "reason": r.reason,
                         "family": family_of(c, r.measure)})
    columns = ["model", "baseline", "target", "task", "kind", "measure", "effect",
               "target_value", "baseline_value", "statistic", "se", "p", "p_two_sided", "n",
               "test", "reason", "family", "family_size", "p_bonferroni", "p_holm",
               "significant"]
    frame = pd.DataFrame(rows, columns=[c for c in columns if c not in
                                        ("family_size", "p_bonferroni", "p_holm",
                                         "significant")])
    frame["family_size"] = 0
    for method in CORRECTIONS:
        frame[f"p_{method.value}"] = np.nan
    # statsmodels' Holm branch calls gc.collect(), which walks every live object (0.3 s a
    # call with pandas and statsmodels loaded); freezing the heap first makes it instant.
    gc.freeze()
    try:
        for _, index in frame.groupby("family", sort=False).groups.items():
            p = frame.loc[index, "p"].to_numpy(dtype=float)
            frame.loc[index, "family_size"] = int(np.isfinite(p).sum())
            for method in CORRECTIONS:
                frame.loc[index, f"p_{method.value}"] = adjust(p, method)
    finally:
        gc.unfreeze()
    decides = "p" if correction is Correction.NONE else f"p_{correction.value}"
    frame["significant"] = frame[decides] < alpha
    return frame[columns]
