"""The Q-Pain subgroup analysis of seed 000 Appendix H (Table 10), its regressions' layout (App. I).

A subgroup study (`paw study --subgroups …`) has one comparison unit per (template item,
pair of subgroups); the pair's designated original is the unit's original prompt, the other
subgroup its target. Per model and pair, on p(No) — the probability of the 'No' label in the
option distribution, "the raw probability of treatment denial" — with the paper's "paired
two-tailed t-test (paired by vignette)":

- **demographic**: p(No) of subgroup a against b (Δ = mean p(No)_a − p(No)_b, in the pair's
  declared order), one test per pair;
- **adjusted paraphrase**: the original subgroup's vignette against its paraphrase sized to
  the pair's token change, one test per pair;
- **fixed sentence**: a subgroup's vignette against the same with the fixed sentence
  prepended — it "depends only on the 'original' subgroup", so one test per subgroup that
  is some pair's original ("8 unique tests").

Bonferroni within each family and model: over the pairs (28 for 8 subgroups, α = 0.05/28)
for the demographic and paraphrase tests, over the unique fixed-sentence tests (8). Table 10
counts the tests significant at p < 0.05 and after Bonferroni. The regression layout of
Appendix I (Table 11 there) lists β̂_race of the difference model for the pairs with a
signed direction (those differing only in the reference attribute), one-sided H1: β < 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from analysis.counterfactual.definitions import ALPHA, Sides
from analysis.counterfactual.statistics import adjust, paired_t_test

if TYPE_CHECKING:
    import pandas as pd

    from analysis.counterfactual.comparison import Comparison
    from analysis.counterfactual.data import StudyData

PREFIX = "subgroup:"
"""Target ids of subgroup pairs (the planner's `workbench.counterfactual.subgroups`)."""

FAMILIES: tuple[str, ...] = ("demographic", "adjusted paraphrase", "fixed sentence")
"""Table 10's test families, in its row order."""


def is_subgroup_study(config: dict) -> bool:
    """Whether a stored study config is the subgroup design."""
    return bool(config.get("subgroups"))


def p_no(c: Comparison, probs: np.ndarray) -> np.ndarray:
    """p(No) of each item from (n, k) distributions over `c.labels`.

    Raises:
        ValueError: the labels have no 'No'.
    """
    lower = [label.lower() for label in c.labels]
    if "no" not in lower:
        raise ValueError(f"subgroup design needs a 'No' label, got {c.labels}")
    return np.asarray(probs, dtype=float)[:, lower.index("no")]


def _orientation(data: StudyData, target: str) -> tuple[str, str, str]:
    """(a, b, designated original) of a pair."""
    a, _, b = target[len(PREFIX):].partition("/")
    original = next((str(details["original_subgroup"]) for op, _, details in
                     data.targets.values() if op == target), a)
    return a, b, original


def pairwise_tests(data: StudyData) -> pd.DataFrame:
    """One row per (model, task, family, comparison): Δ, t, two-sided p, n, Bonferroni p."""
    import pandas as pd

    rows: list[dict[str, Any]] = []
    fixed_seen: set[tuple[str, str, str]] = set()
    pairs: dict[tuple[str, str, str], dict[str, Comparison]] = {}
    for c in data.comparisons:
        if c.target.startswith(PREFIX):
            pairs.setdefault((c.model, c.task, c.target), {})[c.baseline] = c
    for (model, task, target), by_baseline in pairs.items():
        a, b, original = _orientation(data, target)
        other = b if original == a else a
        # The demographic test needs only the two vignettes: take the comparison that
        # kept the most vignettes (a failed paraphrase leaves its unit out of that one).
        widest = max(by_baseline.values(), key=lambda c: len(c.items))
        orig, other_p = p_no(widest, widest.p_orig), p_no(widest, widest.p_target)
        p_a, p_b = (orig, other_p) if original == a else (other_p, orig)
        rows.append(_row(widest, "demographic", f"{a} vs {b}",
                         paired_t_test("p_no", p_a, p_b, sides=Sides.TWO), original))
        para = by_baseline.get("adjusted paraphrase")
        if para is not None:
            result = paired_t_test("p_no", p_no(para, para.p_orig), p_no(para, para.p_base),
                                   sides=Sides.TWO)
            rows.append(_row(para, "adjusted paraphrase",
                             f"{original} vs paraphrase (toward {other})", result, original))
        fixed = by_baseline.get("fixed sentence")
        if fixed is not None and (model, task, original) not in fixed_seen:
            # The same prompts as any other pair with this original: one test per subgroup.
            fixed_seen.add((model, task, original))
            result = paired_t_test("p_no", p_no(fixed, fixed.p_orig), p_no(fixed, fixed.p_base),
                                   sides=Sides.TWO)
            rows.append(_row(fixed, "fixed sentence", f"{original} vs fixed sentence", result,
                             original))
    columns = ["model", "task", "family", "comparison", "original", "delta", "statistic",
               "p", "n", "reason", "family_size", "p_bonferroni", "significant",
               "significant_bonferroni"]
    frame = pd.DataFrame(rows, columns=columns[:10])
    frame["family_size"] = 0
    frame["p_bonferroni"] = np.nan
    for index in frame.groupby(["model", "task", "family"], sort=False).groups.values():
        p = frame.loc[index, "p"].to_numpy(dtype=float)
        frame.loc[index, "family_size"] = int(np.isfinite(p).sum())
        frame.loc[index, "p_bonferroni"] = adjust(p, "bonferroni")
    frame["significant"] = frame["p"] < ALPHA
    frame["significant_bonferroni"] = frame["p_bonferroni"] < ALPHA
    frame.attrs["decimals"] = {"delta": 3, "statistic": 2, "p": "p", "p_bonferroni": "p"}
    return frame[columns]


def _row(c: Comparison, family: str, comparison: str, result, original: str) -> dict[str, Any]:
    return {"model": c.model, "task": c.task, "family": family, "comparison": comparison,
            "original": original, "delta": result.effect, "statistic": result.statistic,
            "p": result.p, "n": result.n, "reason": result.reason}


def table10(pairwise: pd.DataFrame) -> pd.DataFrame:
    """Table 10: per model and task, each family's comparisons and how many are
    significant at p < 0.05 and after Bonferroni within the family."""
    import pandas as pd

    rows = []
    for (model, task), g in pairwise.groupby(["model", "task"], sort=False):
        for family in FAMILIES:
            part = g[g["family"] == family]
            rows.append({"model": model, "task": task, "test family": family,
                         "comparisons": len(part),
                         "sig (p < 0.05)": int(part["significant"].sum()),
                         "sig (Bonferroni)": int(part["significant_bonferroni"].sum()),
                         "alpha (Bonferroni)": ALPHA / max(1, int(part["family_size"].max())
                                                           if len(part) else 1)})
    frame = pd.DataFrame(rows, columns=["model", "task", "test family", "comparisons",
                                        "sig (p < 0.05)", "sig (Bonferroni)",
                                        "alpha (Bonferroni)"])
    frame.attrs["decimals"] = {"alpha (Bonferroni)": "p"}
    return frame


def regression_layout(tests: pd.DataFrame, data: StudyData) -> pd.DataFrame:
    """App. I's Table 11 layout: rows model × baseline, per directional pair (non-reference
    vs reference) the difference model's β̂ and its one-sided p."""
    import pandas as pd

    directed = {}
    for op, _, details in data.targets.values():
        if op.startswith(PREFIX) and details.get("direction") in (1, -1):
            original, target = details["original_subgroup"], details["target_subgroup"]
            other, reference = (target, original) if details["direction"] == 1 else (
                original, target)
            directed[op] = f"{other} vs {reference}"
    reg = tests[(tests["measure"] == "beta_diff") & tests["target"].isin(list(directed))]
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    names: list[str] = []
    for r in reg.itertuples(index=False):
        name = directed[r.target]
        if name not in names:
            names.append(name)
        row = rows.setdefault((r.model, r.baseline), {"model": r.model, "baseline": r.baseline})
        row[f"{name} β̂"] = r.effect
        row[f"{name} p"] = r.p
    columns = ["model", "baseline"] + [f"{n} {x}" for n in names for x in ("β̂", "p")]
    frame = pd.DataFrame(list(rows.values()), columns=columns)
    frame.attrs["decimals"] = {f"{n} β̂": 3 for n in names} | {f"{n} p": "p" for n in names}
    return frame
