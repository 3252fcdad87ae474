"""Seed 000's tables in the paper's layouts, from the frame of every test (`comparison.analyse`).

Tables 4–7 mark significance in their cells the way the paper colours them; a cell is a
`TestCell`, which prints as "0.170*" and goes to JSON as {"value", "p", "significant"}, so
no consumer has to parse numbers back out of strings. Tables 8/9 (Appendix G) list effect
and p per model; Table 11 (Appendix I) the regression coefficients.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from analysis.counterfactual import definitions as cfd

if TYPE_CHECKING:
    import pandas as pd

MARK = "*"
"""Appended to a cell whose test is significant (the paper's red bold)."""

CHECK_NAMES = {"control_recall": "Recall", "control_precision": "Precision"}
"""Row names of the recall/precision checks (Tables 1, 6, 7)."""

GROUPS: dict[str, str] = {"fr": "Aggregate", "mi": "Aggregate", "phi": "Aggregate",
                          "jsd": "Per-sample", "kl": "Per-sample", "beta_diff": "Regression",
                          "beta_level": "Regression"}
"""Table 2/8/9 row groups."""

ORDER: tuple[str, ...] = ("fr", "mi", "phi", "jsd", "kl", "beta_diff", "beta_level")
"""Table 2/8/9 row order: flip rate, MI, φ, JSD, KL, the regressions."""


@dataclass(frozen=True)
class TestCell:
    """One test's number in a paper table: its effect, its p and whether it is significant.

    Shown as the effect with three decimals and `MARK` when significant ('–' when not
    computable); written to JSON as separate numbers (`as_json`).
    """

    __test__ = False  # not a pytest class

    value: float
    p: float
    significant: bool

    def __str__(self) -> str:
        if self.value is None or not math.isfinite(self.value):
            return "–"
        return f"{self.value:.3f}{MARK if self.significant else ''}"

    def as_json(self) -> dict[str, Any]:
        """{"value", "p", "significant"}, NaN as None."""
        def plain(x: float) -> float | None:
            return None if x is None or not math.isfinite(x) else float(x)

        return {"value": plain(self.value), "p": plain(self.p),
                "significant": bool(self.significant)}


def paper_table(tests: pd.DataFrame, baseline: str, kind: str) -> pd.DataFrame:
    """Tables 4/5 (kind 'main': rows perturbation × task) or 6/7 ('check': rows check × task):
    differences targeted − baseline per model and metric, as `TestCell`s."""
    import pandas as pd

    chosen = tests[(tests["baseline"] == baseline) & (tests["kind"] == kind)
                   & tests["measure"].isin(cfd.METRICS)]
    first = "check" if kind == "check" else "perturbation"
    models = list(dict.fromkeys(chosen["model"]))
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for r in chosen.itertuples(index=False):
        name = CHECK_NAMES.get(r.target, r.target) if kind == "check" else r.target
        row = rows.setdefault((name, r.task), {first: name, "task": r.task})
        row[f"{r.model} {cfd.LABELS[r.measure]}"] = TestCell(float(r.effect), float(r.p),
                                                             bool(r.significant))
    columns = [first, "task"] + [f"{m} {cfd.LABELS[x]}" for m in models for x in cfd.METRICS]
    frame = pd.DataFrame(list(rows.values()), columns=columns)
    return frame.astype(object).where(frame.notna(), None)


def measure_table(tests: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Tables 8/9 (Appendix G): rows perturbation × task × (Aggregate FR, MI, φ / Per-sample
    JSD, KL / Regression β̂), columns "<model> effect", "<model> p" (and whether it is
    significant) per model. The paper's Table 8 is the train split and Table 9 the test
    split of one design; a PAW study is one dataset, so Table 9 is this table of the study
    run on the held-out dataset."""
    import pandas as pd

    chosen = tests[(tests["baseline"] == baseline) & (tests["kind"] == "main")]
    models = list(dict.fromkeys(chosen["model"]))
    order = {m: i for i, m in enumerate(ORDER)}
    rows: dict[tuple, dict[str, Any]] = {}
    for r in sorted(chosen.itertuples(index=False),
                    key=lambda r: (r.target, r.task, order[r.measure])):
        key = (r.target, r.task, r.measure)
        row = rows.setdefault(key, {"perturbation": r.target, "task": r.task,
                                    "group": GROUPS[r.measure],
                                    "measure": cfd.LABELS[r.measure]})
        row[f"{r.model} effect"] = float(r.effect)
        row[f"{r.model} p"] = float(r.p)
        row[f"{r.model} significant"] = bool(r.significant)
    columns = ["perturbation", "task", "group", "measure"]
    for m in models:
        columns += [f"{m} effect", f"{m} p", f"{m} significant"]
    frame = pd.DataFrame(list(rows.values()), columns=columns)
    frame.attrs["decimals"] = {f"{m} effect": 3 for m in models} | {
        f"{m} p": "p" for m in models}
    return frame


def regression_table(tests: pd.DataFrame) -> pd.DataFrame:
    """Table 11's layout: β̂_pert of the difference and level models per model, baseline,
    perturbation and task, with SEs and p (significance: p < α uncorrected, as Table 11)."""
    import pandas as pd

    reg = tests[tests["measure"].isin(cfd.REGRESSION)]
    rows: dict[tuple, dict[str, Any]] = {}
    for r in reg.itertuples(index=False):
        key = (r.model, r.baseline, r.target, r.task)
        row = rows.setdefault(key, {"model": r.model, "baseline": r.baseline,
                                    "perturbation": r.target, "task": r.task, "n": r.n})
        tag = "diff" if r.measure == "beta_diff" else "level"
        row.update({f"beta_{tag}": r.effect, f"se_{tag}": r.se, f"p_{tag}": r.p,
                    f"sig_{tag}": bool(r.significant)})
    frame = pd.DataFrame(list(rows.values()), columns=[
        "model", "baseline", "perturbation", "task", "n", "beta_diff", "se_diff", "p_diff",
        "sig_diff", "beta_level", "se_level", "p_level", "sig_level"])
    frame.attrs["decimals"] = {c: 3 for c in ("beta_diff", "se_diff", "beta_level",
                                              "se_level")} | {"p_diff": "p", "p_level": "p"}
    return frame


def tests_table(tests: pd.DataFrame) -> pd.DataFrame:
    """Every test in Table 2's layout (Aggregate / Per-sample / Regression; effect, p), with
    its family and raw, Bonferroni and Holm p."""
    order = {m: i for i, m in enumerate(ORDER)}
    frame = tests.assign(group=tests["measure"].map(GROUPS),
                         order=tests["measure"].map(order),
                         measure_name=tests["measure"].map(cfd.LABELS))
    frame = frame.sort_values(["kind", "model", "baseline", "target", "task", "order"],
                              kind="stable")
    out = frame[["model", "baseline", "target", "task", "group", "measure_name", "effect",
                 "target_value", "baseline_value", "statistic", "n", "test", "p",
                 "p_bonferroni", "p_holm", "significant", "family", "family_size",
                 "reason"]].rename(columns={"target": "perturbation", "measure_name": "measure",
                                            "n": "n_pairs"}).reset_index(drop=True)
    out.attrs["decimals"] = {"effect": 3, "target_value": 3, "baseline_value": 3,
                             "statistic": 2, "p": "p", "p_bonferroni": "p", "p_holm": "p"}
    return out


def small_comparisons(tests: pd.DataFrame, minimum: int = cfd.MIN_ITEMS) -> pd.DataFrame:
    """The comparisons whose tests rest on fewer than `minimum` paired items."""
    import pandas as pd

    columns = ["model", "baseline", "perturbation", "task", "n_pairs"]
    if tests.empty:
        return pd.DataFrame(columns=columns)
    n = tests.groupby(["model", "baseline", "target", "task"], sort=False)["n"].max()
    few = n[n < minimum].reset_index()
    return few.rename(columns={"target": "perturbation", "n": "n_pairs"})[columns]
