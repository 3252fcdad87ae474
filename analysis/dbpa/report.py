"""The DBPA report (seed 001): sensitivity table first, then the paper's three case studies.

Reads the permutation tests `paw dbpa` stored (`dbpa_tests`) and lays them out:

1. **Sensitivity** (beyond the paper): every test's decision and effect size under every
   (embedder × distance) the run asked for; rows whose decision differs between
   configurations are flips, counted and marked. The paper's own tables show such flips
   (its Table 4, JSD vs energy; Table 7, ada-002 vs other embedders), so this comes first.
2. **Case study 1, perturbations**: per perturbation, effect size T_obs and p-value (raw and
   family-wise adjusted) per item and configuration.
3. **Case study 2, TPR/FPR**: over a partition of perturbations into "should change" and
   "should not change" (default: the catalogue's intent tag, D vs P), the rejection rates
   and the ROC curve (score 1 − p) with its AUC.
4. **Case study 3, model swap** (alignment): the second model's outputs as the intervention.

Family-wise control: within one family — every test of one case study on one arm pair
under one (embedder, distance) — p-values are adjusted by Holm and by Bonferroni
(statsmodels `multipletests`); a decision is adjusted p ≤ α under the run's correction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from analysis.common.bootstrap import DEFAULT_SEED, N_BOOT
from analysis.common.document import Figure, Report, Section

if TYPE_CHECKING:
    import pandas as pd
    import sqlite_utils

STARS = ((0.001, "***"), (0.01, "**"), (0.05, "*"))
"""Significance marks on the adjusted p-value, as in the paper's tables."""

P_DECIMALS = {"effect_size": 3, "p_value": "p", "p_holm": "p", "p_bonferroni": "p"}
"""Display precision of the test tables (p-values to three decimals: 1/(1 + B) ≥ 0.0001)."""


def load_tests(db: sqlite_utils.Database, audit_id: int) -> pd.DataFrame:
    """Every stored test of a DBPA run, with item, arm and variant labels joined."""
    import pandas as pd

    frame = pd.read_sql_query(
        "SELECT t.*, i.source_id AS item, a0.label AS baseline_arm, a1.label AS perturbed_arm, "
        "v.intent AS intent, v.family AS family FROM dbpa_tests t "
        "JOIN items i ON i.id = t.item_id JOIN arms a0 ON a0.id = t.baseline_arm_id "
        "JOIN arms a1 ON a1.id = t.perturbed_arm_id LEFT JOIN variants v ON v.id = t.variant_id "
        "WHERE t.audit_id = ? ORDER BY t.id", db.conn, params=[audit_id])
    frame["config"] = frame["embedder"] + " / " + frame["distance"]
    return frame


def adjust(frame: pd.DataFrame, alpha: float, correction: str) -> pd.DataFrame:
    """Add Holm and Bonferroni adjusted p-values per family, the decision and its stars.

    A family is one case study on one arm pair under one (embedder, distance); tests
    without a p-value (too few outputs) are not in it.
    """
    import numpy as np
    import pandas as pd
    from statsmodels.stats.multitest import multipletests

    frame = frame.copy()
    frame["p_holm"] = np.nan
    frame["p_bonferroni"] = np.nan
    keys = ["case_study", "baseline_arm", "perturbed_arm", "embedder", "distance"]
    for _, group in frame[frame["p_value"].notna()].groupby(keys):
        for method in ("holm", "bonferroni"):
            frame.loc[group.index, f"p_{method}"] = multipletests(
                group["p_value"].to_numpy(), alpha=alpha, method=method)[1]
    chosen = "p_value" if correction == "none" else f"p_{correction}"
    frame["p_decision"] = frame[chosen]
    # True / False, or None where no test was run (object column, so None survives).
    frame["significant"] = pd.Series([None if pd.isna(p) else bool(p <= alpha)
                                      for p in frame["p_decision"]], index=frame.index,
                                     dtype=object)
    frame["stars"] = frame["p_decision"].map(_stars)
    return frame


def _stars(p: float | None) -> str:
    import math

    if p is None or math.isnan(p):
        return ""
    return next((mark for level, mark in STARS if p <= level), "")


def _cell(row: Any) -> str:
    if row["status"] == "too_few":
        return "no test"
    verdict = "sig" if row["significant"] else "ns"
    return f"{verdict} ω={row['effect_size']:.3f}{row['stars']}"


def sensitivity(frame: pd.DataFrame, configs: list[str]) -> tuple[pd.DataFrame, int, int]:
    """One row per test, one column per configuration; (table, flipped tests, tests)."""
    import pandas as pd

    index = ["case_study", "perturbation", "intent", "item", "perturbed_arm"]
    rows = []
    for key, group in frame.groupby(index, dropna=False, sort=False):
        cells = {row["config"]: _cell(row) for _, row in group.iterrows()}
        decisions = {bool(s) for s in group["significant"] if s is not None}
        flip = len(decisions) > 1
        rows.append({**dict(zip(index, key)), **{c: cells.get(c, "–") for c in configs},
                     "flip": "FLIP" if flip else ""})
    table = pd.DataFrame(rows)
    if table.empty:
        return table, 0, 0
    table.index = pd.Index([f"{r['perturbation']} · {r['item']}" for _, r in table.iterrows()],
                           name="test")
    table = table.drop(columns=["perturbation", "item"]).rename(columns={"perturbed_arm": "arm"})
    flips = int((table["flip"] == "FLIP").sum())
    return table, flips, len(table)


def per_perturbation(frame: pd.DataFrame, configs: list[str]) -> pd.DataFrame:
    """Paper-style: per perturbation, median ω and significant items per configuration."""
    import pandas as pd

    rows = []
    for (pert, arm), group in frame.groupby(["perturbation", "perturbed_arm"], sort=False):
        row: dict[str, Any] = {"perturbation": pert, "arm": arm,
                               "intent": group["intent"].iloc[0] or "–"}
        flips = 0
        for item, g in group.groupby("item"):
            flips += len({bool(s) for s in g["significant"] if s is not None}) > 1
        for config in configs:
            g = group[(group["config"] == config) & group["p_value"].notna()]
            if g.empty:
                row[config] = "–"
                continue
            sig = int(g["significant"].astype(bool).sum())
            row[config] = (f"ω̃={g['effect_size'].median():.3f}"
                           f"{_stars(g['p_decision'].min()) if len(g) == 1 else ''} "
                           f"({sig}/{len(g)} sig)")
        row["items flipped"] = f"{flips}/{group['item'].nunique()}"
        rows.append(row)
    return pd.DataFrame(rows).set_index("perturbation") if rows else pd.DataFrame()


def long_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Every test under every configuration with all its numbers (the JSON of record)."""
    columns = ["case_study", "perturbation", "intent", "item", "baseline_arm", "perturbed_arm",
               "embedder", "distance", "n_baseline", "n_perturbed", "permutations",
               "effect_size", "p_value", "p_holm", "p_bonferroni", "significant", "status",
               "note", "embedder_version"]
    table = frame[columns].reset_index(drop=True)
    table.attrs["decimals"] = P_DECIMALS
    return table


def partition(config: dict, perturbations: list[str], intents: dict[str, str | None]
              ) -> dict[str, bool]:
    """perturbation → True (should change) / False (should not); unlabelled ones left out."""
    change, keep = config.get("should_change"), config.get("should_not_change")
    if change is None and keep is None:
        return {p: intents.get(p) == "D" for p in perturbations if intents.get(p) in ("D", "P")}
    labels = {p: True for p in change or []}
    labels.update({p: False for p in keep or []})
    return {p: v for p, v in labels.items() if p in perturbations}


def tpr_fpr(frame: pd.DataFrame, labels: dict[str, bool], configs: list[str]
            ) -> tuple[pd.DataFrame, dict[str, tuple]]:
    """Rejection rates per class and ROC-AUC (score 1 − p) per configuration.

    Returns:
        The table and, per configuration with both classes, (fpr, tpr) arrays for the plot.
    """
    import numpy as np
    import pandas as pd
    from sklearn.metrics import roc_auc_score, roc_curve

    rows, curves = [], {}
    tested = frame[(frame["case_study"] == "perturbation") & frame["p_value"].notna()
                   & frame["perturbation"].isin(labels)]
    for config in configs:
        g = tested[tested["config"] == config]
        truth = g["perturbation"].map(labels).astype(bool).to_numpy()
        decided = g["significant"].astype(bool).to_numpy()
        pos, neg = int(truth.sum()), int((~truth).sum())
        row = {"config": config, "n should change": pos, "n should not change": neg,
               "TPR": decided[truth].mean() if pos else np.nan,
               "FPR": decided[~truth].mean() if neg else np.nan,
               "ROC-AUC (1 − p)": np.nan, "ROC-AUC (ω)": np.nan}
        if pos and neg:
            score = 1.0 - g["p_value"].to_numpy()
            row["ROC-AUC (1 − p)"] = roc_auc_score(truth, score)
            row["ROC-AUC (ω)"] = roc_auc_score(truth, g["effect_size"].to_numpy())
            fpr, tpr, _ = roc_curve(truth, score)
            curves[config] = (fpr, tpr, row["ROC-AUC (1 − p)"])
        rows.append(row)
    return pd.DataFrame(rows).set_index("config"), curves


def roc_data(curves: dict[str, tuple], title: str):
    """The ROC curves as series (the same points `roc_png` draws), for the terminal."""
    from analysis.common.plotdata import PlotData, Series

    series = [Series("chance", (0.0, 1.0), (0.0, 1.0))]
    notes = []
    for config, (fpr, tpr, auc) in curves.items():
        series.append(Series(f"{config} (AUC {auc:.2f})", tuple(float(v) for v in fpr),
                             tuple(float(v) for v in tpr)))
        notes.append(f"{config}: AUC {auc:.3f} over {len(fpr)} points")
    return PlotData(title, "FPR (should-not-change rejected)", "TPR (should-change rejected)",
                    tuple(series), xlim=(0.0, 1.0), ylim=(0.0, 1.0), notes=tuple(notes))


def roc_png(curves: dict[str, tuple], title: str) -> bytes:
    """ROC curves (one per configuration) as PNG bytes."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.2, 5.0), dpi=120)
    try:
        ax.plot([0, 1], [0, 1], color="#999999", lw=1, ls="--", label="chance")
        for config, (fpr, tpr, auc) in curves.items():
            ax.plot(fpr, tpr, lw=1.6, marker=".", label=f"{config} (AUC {auc:.2f})")
        ax.set_xlabel("FPR (should-not-change perturbations rejected)")
        ax.set_ylabel("TPR (should-change perturbations rejected)")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", bbox_inches="tight")
        return buffer.getvalue()
    finally:
        plt.close(fig)


def _not_tested(db: sqlite_utils.Database, audit_id: int, frame: pd.DataFrame) -> pd.DataFrame:
    import pandas as pd

    rows = [{"perturbation": op, "item": item, "reason": f"edit did not fire ({reason})"}
            for op, item, reason in db.execute(
                "SELECT DISTINCT v.operator_id, i.source_id, v.reason FROM jobs j "
                "JOIN variants v ON v.id = j.variant_id JOIN items i ON i.id = j.item_id "
                "WHERE j.audit_id = ? AND j.status = 'not_fired'", [audit_id])]
    few = frame[frame["status"] == "too_few"].drop_duplicates(["perturbation", "item"])
    rows += [{"perturbation": r["perturbation"], "item": r["item"], "reason": r["note"]}
             for _, r in few.iterrows()]
    return pd.DataFrame(rows, columns=["perturbation", "item", "reason"])


def build_report(db: sqlite_utils.Database, ref: str | int | None = None, *,
                 n_boot: int = N_BOOT, seed: int = DEFAULT_SEED, **_options: Any) -> Report:
    """The DBPA report of a stored run (`paw report --dbpa REF`).

    Args:
        db: the store.
        ref: the run's name or id (None: the latest DBPA run).
        n_boot, seed: unused (the permutation tests were run by `paw dbpa`, seeded).
    """
    from store.runs import find_run, run_config

    run = find_run(db, ref, "dbpa")
    config = run_config(db, run.id)
    alpha, correction = float(config["alpha"]), config["correction"]
    frame = adjust(load_tests(db, run.id), alpha, correction)
    configs = [f"{e} / {dist}" for e in config["embedders"] for dist in config["distances"]]
    meta = {"audit": run.name, "audit_id": run.id, "kind": run.kind, "dataset": run.dataset,
            "models": ", ".join(config["models"]), "k": config["k"],
            "temperature": config["temperature"], "max_tokens": config["max_tokens"],
            "seeds": config["seeds"], "embedders": ", ".join(config["embedders"]),
            "distances": ", ".join(config["distances"]), "permutations": config["permutations"],
            "alpha": alpha, "correction": correction, "status": run.status}
    sections: list[Section] = []
    figures: list[Figure] = []
    if frame.empty:
        sections.append(Section("No tests stored", _not_tested(db, run.id, frame),
                                "`paw dbpa` stores the tests after every sample is generated; "
                                "this run has none yet (interrupted, or every edit did not "
                                "fire).", key="no_tests"))
        return Report(f"PAW DBPA report: {run.name}", meta, sections, figures)
    table, flips, n = sensitivity(frame, configs)
    sections.append(Section(
        "Sensitivity: decisions across embedders and distances", table,
        f"{flips} of {n} tests flip (FLIP: significant under one configuration, not under "
        f"another). Cell: sig/ns at α = {alpha} after {correction} correction within the "
        f"family, then ω = T_obs (* p ≤ 0.05, ** ≤ 0.01, *** ≤ 0.001, adjusted). Same B = "
        f"{config['permutations']} re-splits for every configuration of a test.",
        key="sensitivity"))
    perts = frame[frame["case_study"] == "perturbation"]
    if not perts.empty:
        sections.append(Section(
            "Case study 1: effect size per perturbation", per_perturbation(perts, configs),
            "ω̃: median effect size over items; sig: items significant after correction. "
            "Intent D (should change) / P (should not), from the operator catalogue.",
            key="perturbations"))
        intents = dict(zip(perts["perturbation"], perts["intent"]))
        labels = partition(config, sorted(intents), intents)
        rates, curves = tpr_fpr(frame, labels, configs)
        how = ("intent tag (D: should change, P: should not)"
               if config.get("should_change") is None and config.get("should_not_change") is None
               else "the run's --should-change / --should-not-change lists")
        change = ", ".join(sorted(p for p, v in labels.items() if v)) or "none"
        keep = ", ".join(sorted(p for p, v in labels.items() if not v)) or "none"
        sections.append(Section(
            "Case study 2: TPR / FPR over should-change vs should-not-change", rates,
            f"Partition by {how}: should change = {change}; should not = {keep}. TPR/FPR: "
            f"share of tests rejected at α = {alpha} after {correction}. ROC over the raw "
            f"p-value (score 1 − p) and over ω; AUC undefined (–) when a class is empty.",
            key="tpr_fpr"))
        if curves:
            figures.append(Figure("roc", "ROC of DBPA decisions, should-change vs "
                                         "should-not-change perturbations",
                                  lambda: roc_png(curves, f"{run.name}: ROC (score 1 − p)"),
                                  plot=lambda: roc_data(curves,
                                                        f"{run.name}: ROC (score 1 − p)")))
    swaps = frame[frame["case_study"] == "model_swap"]
    if not swaps.empty:
        swap = swaps[["item", "baseline_arm", "perturbed_arm", "config", "effect_size",
                      "p_value", "p_holm", "p_bonferroni", "significant"]]
        swap = swap.set_index("item")
        swap.attrs["decimals"] = P_DECIMALS
        sections.append(Section(
            "Case study 3: model swap (alignment)", swap,
            "The candidate model's outputs on the unperturbed question as the intervention "
            "against the reference model's. Small ω, large p: no detectable difference in "
            "the output distribution under that configuration (not identity).",
            key="model_swap"))
    sections.append(Section("Every test", long_table(frame),
                            "One row per test and configuration: the numbers behind every "
                            "table above (generation ids in dbpa_tests.generation_ids_json).",
                            key="tests"))
    missing = _not_tested(db, run.id, frame)
    if not missing.empty:
        sections.append(Section("Not tested", missing,
                                "Edits that did not fire, and tests with fewer than 2 "
                                "non-empty outputs in a condition.", key="not_tested"))
    return Report(f"PAW DBPA report: {run.name}", meta, sections, figures)
