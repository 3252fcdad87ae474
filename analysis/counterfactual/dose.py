"""The dose-response analysis of seed 000 §4.1 (Figures 2 and 3, Appendix C).

A dose-response study (`paw study --dose-levels …`) has one unit per (item, level): the
original prompt and a paraphrase sized to that token-change level. Per model, task and
level this module gives the flip rate and MI between the original and the paraphrased
majority answers (the paper's two measures: "flip rate increases with token change
percentage … MI shows the corresponding decline"), the mean JSD of the option
distributions, and the fractions the paraphraser actually reached — the figures are drawn
against the *achieved* mean fraction, since a paraphrase may fall short of its level.
No test is run: the paper's figures carry none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from analysis.counterfactual.definitions import contingency, js_divergence, table_metrics

if TYPE_CHECKING:
    import pandas as pd

    from analysis.counterfactual.data import StudyData

PREFIX = "dose:"
"""Target ids of dose-response units (the planner's `workbench.counterfactual.dose`)."""


def is_dose_study(config: dict) -> bool:
    """Whether a stored study config is a dose-response design."""
    return bool(config.get("levels"))


def dose_table(data: StudyData) -> pd.DataFrame:
    """One row per (model, task, level): units, paraphrased units, answered pairs, target and
    achieved mean fraction, share within tolerance, flip rate, MI (bits), mean JSD."""
    import pandas as pd

    columns = ["model", "task", "level", "n_units", "n_paraphrased", "n_pairs",
               "achieved_mean", "within_tolerance", "flip_rate", "n_flips", "mi",
               "jsd_mean"]
    achieved = {}
    if len(data.paraphrases):
        tasks = data.units[["model", "unit", "task"]]
        paraphrases = data.paraphrases.merge(tasks, on=["model", "unit"], how="left")
        for (model, target, task), g in paraphrases.groupby(["model", "target", "task"],
                                                            sort=False):
            fired = g[g["fired"]]
            achieved[(model, target, task)] = (len(fired), fired["achieved_fraction"].mean(),
                                               g["within_tolerance"].mean())
    rows = []
    for c in data.comparisons:
        if not c.target.startswith(PREFIX) or c.baseline != "adjusted paraphrase":
            continue
        k = len(c.labels)
        keep = (c.orig >= 0) & (c.based >= 0)
        table = contingency(c.orig[keep], c.based[keep], k)
        metrics = table_metrics(table)
        have = np.isfinite(c.p_orig).all(axis=1) & np.isfinite(c.p_base).all(axis=1)
        jsd = js_divergence(c.p_orig[have], c.p_base[have])
        n_para, mean, within = achieved.get((c.model, c.target, c.task), (0, np.nan, np.nan))
        units = data.units[(data.units["model"] == c.model) & (data.units["target"] == c.target)
                           & (data.units["task"] == c.task)]
        rows.append({"model": c.model, "task": c.task, "level": float(c.target[len(PREFIX):]),
                     "n_units": len(units), "n_paraphrased": n_para,
                     "n_pairs": int(keep.sum()), "achieved_mean": mean,
                     "within_tolerance": within,
                     "flip_rate": float(metrics["fr"]) if keep.any() else np.nan,
                     "n_flips": int(table.sum() - np.trace(table)),
                     "mi": float(metrics["mi"]) if keep.any() else np.nan,
                     "jsd_mean": float(jsd.mean()) if len(jsd) else np.nan})
    frame = pd.DataFrame(rows, columns=columns).sort_values(["model", "task", "level"],
                                                            kind="stable")
    frame = frame.reset_index(drop=True)
    frame.attrs["decimals"] = {"level": 2, "achieved_mean": 3, "within_tolerance": 2,
                               "flip_rate": 3, "mi": 3, "jsd_mean": 3}
    return frame
