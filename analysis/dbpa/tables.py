"""The DBPA report's tables (seed 001): stored tests, family-wise adjustment, what each test
could reach, and the sensitivity, perturbation, TPR/FPR and identity-control tables.

Family-wise control: within one family — every test of one case study on one arm pair
under one (embedder, distance) — p-values are adjusted by Holm and by Bonferroni
(statsmodels `multipletests`); a decision is adjusted p ≤ α under the run's correction.
The identity control (the baseline against itself with independent seeds) is a family of
its own, so it never costs the perturbations power.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from analysis.dbpa.definitions import Correction

if TYPE_CHECKING:
    import pandas as pd
    import sqlite_utils

STARS = ((0.001, "***"), (0.01, "**"), (0.05, "*"))
"""Significance marks on the adjusted p-value, as in the paper's tables."""

P_DECIMALS: dict[str, int | str] = {
    "effect_size": 3, "null_mean": 3, "effect_std": 3, "p_value": "p", "p_holm": "p",
    "p_bonferroni": "p", "p_floor": "p", "p_floor_adjusted": "p", "p_mc_se": "p"}
"""Display precision of the test tables (p-values to three decimals: 1/(1 + B) ≥ 0.0001)."""

CANNOT = "†"
"""Marks a test whose smallest achievable adjusted p exceeds α: it could not reject."""

FAMILY = ["case_study", "baseline_arm", "perturbed_arm", "embedder", "distance"]
"""The columns that name a family."""


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
    frame["design"] = frame["design"].fillna("unpaired")  # rows from before m011
    frame["identical_pairs"] = identical_pairs(db, frame)
    return frame


def identical_pairs(db: sqlite_utils.Database, frame: pd.DataFrame) -> list[float]:
    """Per paired test, how many of its pairs (y_i, y'_i) are identical texts (NaN for an
    unpaired test): a swap within such a pair changes nothing, so the test has 2^(k − m)
    distinct re-splits, not 2^k (`reach`)."""
    import json

    pairs = {}
    for position, (design, ids) in enumerate(zip(frame["design"], frame["generation_ids_json"],
                                                 strict=True)):
        if design == "paired" and isinstance(ids, str):
            parsed = json.loads(ids)
            pairs[position] = list(zip(parsed["baseline"], parsed["perturbed"], strict=False))
    wanted = sorted({g for pair in pairs.values() for both in pair for g in both})
    outputs: dict[int, Any] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start:start + 500]
        outputs.update(db.execute(
            f"SELECT id, output FROM generations WHERE id IN ({','.join('?' * len(chunk))})",
            chunk).fetchall())
    counts = [float("nan")] * len(frame)
    for position, pair in pairs.items():
        counts[position] = float(sum(
            outputs.get(a) is not None and outputs.get(a) == outputs.get(b) for a, b in pair))
    return counts


def adjust(frame: pd.DataFrame, alpha: float, correction: Correction) -> pd.DataFrame:
    """Add Holm and Bonferroni adjusted p-values per family, the decision and its stars.

    A family is one case study on one arm pair under one (embedder, distance); tests
    without a p-value (too few outputs) are not in it.
    """
    import numpy as np
    import pandas as pd
    from statsmodels.stats.multitest import multipletests

    correction = Correction(correction)  # a bare string that is none fails here
    frame = frame.copy()
    frame["p_holm"] = np.nan
    frame["p_bonferroni"] = np.nan
    frame["family_size"] = 0
    for _, group in frame[frame["p_value"].notna()].groupby(FAMILY):
        frame.loc[group.index, "family_size"] = len(group)
        for method in ("holm", "bonferroni"):
            frame.loc[group.index, f"p_{method}"] = multipletests(
                group["p_value"].to_numpy(), alpha=alpha, method=method)[1]
    chosen = "p_value" if correction is Correction.NONE else f"p_{correction.value}"
    frame["p_decision"] = frame[chosen]
    # True / False, or None where no test was run (object column, so None survives).
    frame["significant"] = pd.Series([None if pd.isna(p) else bool(p <= alpha)
                                      for p in frame["p_decision"]], index=frame.index,
                                     dtype=object)
    frame["stars"] = frame["p_decision"].map(stars)
    return frame


def reach(frame: pd.DataFrame, alpha: float, correction: Correction) -> pd.DataFrame:
    """Add what each test could reach and how sure its p is.

    Columns: `p_floor` (the smallest p the test could expect, `design.smallest_p`; a paired
    test counts only its pairs that are not identical texts, `identical_pairs`),
    `p_floor_adjusted` (× its family's size under Holm/Bonferroni, capped at 1),
    `can_reject` (that ≤ α), `p_mc_se` and `p_value_low` / `p_value_high` (the Monte
    Carlo standard error and exact 95% interval of p, `design.monte_carlo_interval`),
    `effect_std` (ω*, `definitions.standardised_effect`).
    """
    import numpy as np

    from analysis.dbpa.definitions import standardised_effect
    from analysis.dbpa.design import monte_carlo_interval, smallest_p

    correction = Correction(correction)
    frame = frame.copy()
    tested = frame["p_value"].notna()
    columns = {name: np.full(len(frame), np.nan) for name in (
        "p_floor", "p_floor_adjusted", "p_mc_se", "p_value_low", "p_value_high", "effect_std")}
    for position, (_, row) in enumerate(frame.iterrows()):
        if not tested.iloc[position]:
            continue
        n0, n1 = int(row["n_baseline"]), int(row["n_perturbed"])
        same = row.get("identical_pairs", float("nan"))
        if row["design"] == "paired" and not np.isnan(same):
            n0 = n1 = n0 - int(same)  # an identical pair adds no re-split
        floor = (smallest_p(n0, n1, int(row["permutations"]), row["distance"], row["design"])
                 if min(n0, n1) >= 2 else 1.0)
        m = 1 if correction is Correction.NONE else int(row["family_size"])
        columns["p_floor"][position] = floor
        columns["p_floor_adjusted"][position] = min(1.0, m * floor)
        if not np.isnan(row["n_at_least"]):
            se, low, high = monte_carlo_interval(int(row["n_at_least"]),
                                                 int(row["permutations"]))
            columns["p_mc_se"][position] = se
            columns["p_value_low"][position] = low
            columns["p_value_high"][position] = high
        if row["null_mean"] is not None and not np.isnan(row["null_mean"]):
            columns["effect_std"][position] = standardised_effect(
                float(row["effect_size"]), float(row["null_mean"]), row["distance"])
    for name, values in columns.items():
        frame[name] = values
    frame["can_reject"] = [None if np.isnan(f) else bool(f <= alpha)
                           for f in frame["p_floor_adjusted"]]
    return frame


def stars(p: float | None) -> str:
    """'***', '**', '*' or '' for an adjusted p-value (missing: '')."""
    import math

    if p is None or math.isnan(p):
        return ""
    return next((mark for level, mark in STARS if p <= level), "")


def _cell(row: Any) -> str:
    import math

    if row["status"] == "too_few":
        return "no test"
    verdict = "sig" if row["significant"] else "ns"
    text = f"{verdict} ω={row['effect_size']:.3f}{row['stars']}"
    if row.get("effect_std") is not None and not math.isnan(row["effect_std"]):
        text += f" ω*={row['effect_std']:.2f}"
    return text + (CANNOT if row.get("can_reject") is False else "")


def sensitivity(frame: pd.DataFrame, configs: list[str]) -> tuple[pd.DataFrame, int, int]:
    """One row per test, one column per configuration; (table, flipped tests, tests)."""
    import pandas as pd

    index = ["case_study", "perturbation", "intent", "item", "perturbed_arm"]
    rows = []
    for key, group in frame.groupby(index, dropna=False, sort=False):
        cells = {row["config"]: _cell(row) for _, row in group.iterrows()}
        decisions = {bool(s) for s in group["significant"] if s is not None}
        flip = len(decisions) > 1
        rows.append({**dict(zip(index, key, strict=True)),
                     **{c: cells.get(c, "–") for c in configs},
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
    """Paper-style: per perturbation, median ω (and ω*) and significant items per
    configuration."""
    import pandas as pd

    rows = []
    for (pert, arm), group in frame.groupby(["perturbation", "perturbed_arm"], sort=False):
        row: dict[str, Any] = {"perturbation": pert, "arm": arm,
                               "intent": group["intent"].iloc[0] or "–"}
        flips = 0
        for _, g in group.groupby("item"):
            flips += len({bool(s) for s in g["significant"] if s is not None}) > 1
        for config in configs:
            g = group[(group["config"] == config) & group["p_value"].notna()]
            if g.empty:
                row[config] = "–"
                continue
            sig = int(g["significant"].astype(bool).sum())
            std = g["effect_std"].median()
            row[config] = (f"ω̃={g['effect_size'].median():.3f}"
                           f"{stars(g['p_decision'].min()) if len(g) == 1 else ''}"
                           f"{'' if pd.isna(std) else f' ω̃*={std:.2f}'} ({sig}/{len(g)} sig)")
        row["items flipped"] = f"{flips}/{group['item'].nunique()}"
        rows.append(row)
    return pd.DataFrame(rows).set_index("perturbation") if rows else pd.DataFrame()


def long_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Every test under every configuration with all its numbers (the JSON of record: the
    generation ids of each test are in its JSON rows, not in Markdown or HTML)."""
    import json

    columns = ["case_study", "perturbation", "intent", "item", "baseline_arm", "perturbed_arm",
               "embedder", "distance", "design", "n_baseline", "n_perturbed", "identical_pairs",
               "permutations", "permutation_seed", "effect_size", "null_mean", "null_sd",
               "effect_std", "n_at_least", "p_value", "p_value_low", "p_value_high", "p_mc_se",
               "p_holm", "p_bonferroni", "family_size", "p_floor", "p_floor_adjusted", "can_reject",
               "significant", "status", "note", "embedder_version"]
    table = frame[columns].reset_index(drop=True)
    ids = [json.loads(text) for text in frame["generation_ids_json"]]
    table["baseline_generation_ids"] = [i.get("baseline", []) for i in ids]
    table["perturbed_generation_ids"] = [i.get("perturbed", []) for i in ids]
    table.attrs["decimals"] = {**P_DECIMALS, "null_sd": 3}
    table.attrs["json_only"] = ("baseline_generation_ids", "perturbed_generation_ids")
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


def tpr_fpr(frame: pd.DataFrame, labels: dict[str, bool], configs: list[str], alpha: float
            ) -> tuple[pd.DataFrame, dict[str, tuple]]:
    """Rejection rates per class, the identity control's (the empirical FPR) and ROC-AUCs.

    TPR/FPR are decisions after correction over the labelled perturbations; "FPR
    (identity)" is the share of identity controls with raw p ≤ α, the authors' measure
    (their code counts control p-values below α); "ROC-AUC vs identity" ranks the
    should-change tests against the identity controls by 1 − p, as the authors' TPR/FPR
    curves do.

    Returns:
        The table and, per configuration with both classes, (fpr, tpr, auc) for the plot.
    """
    import numpy as np
    import pandas as pd
    from sklearn.metrics import roc_auc_score, roc_curve

    rows, curves = [], {}
    scored = frame[frame["p_value"].notna()]
    tested = scored[(scored["case_study"] == "perturbation")
                    & scored["perturbation"].isin(labels)]
    controls = scored[scored["case_study"] == "identity"]
    for config in configs:
        g = tested[tested["config"] == config]
        truth = g["perturbation"].map(labels).astype(bool).to_numpy()
        decided = g["significant"].astype(bool).to_numpy()
        identity = controls[controls["config"] == config]["p_value"].to_numpy()
        pos, neg = int(truth.sum()), int((~truth).sum())
        row = {"config": config, "n should change": pos, "n should not change": neg,
               "TPR": decided[truth].mean() if pos else np.nan,
               "FPR": decided[~truth].mean() if neg else np.nan,
               "n identity": len(identity),
               "FPR (identity)": (identity <= alpha).mean() if len(identity) else np.nan,
               "ROC-AUC (1 − p)": np.nan, "ROC-AUC (ω)": np.nan,
               "ROC-AUC vs identity (1 − p)": np.nan}
        if pos and neg:
            score = 1.0 - g["p_value"].to_numpy()
            row["ROC-AUC (1 − p)"] = roc_auc_score(truth, score)
            row["ROC-AUC (ω)"] = roc_auc_score(truth, g["effect_size"].to_numpy())
            fpr, tpr, _ = roc_curve(truth, score)
            curves[config] = (fpr, tpr, row["ROC-AUC (1 − p)"])
        if pos and len(identity):
            positives = g["p_value"].to_numpy()[truth]
            against = np.r_[np.ones(pos), np.zeros(len(identity))]
            row["ROC-AUC vs identity (1 − p)"] = roc_auc_score(
                against, 1.0 - np.r_[positives, identity])
        rows.append(row)
    return pd.DataFrame(rows).set_index("config"), curves


def identity_table(frame: pd.DataFrame, configs: list[str], alpha: float) -> pd.DataFrame:
    """Per configuration: the identity controls' rejection rate (raw and after correction),
    and ω against its permutation-null level (nothing differs, so ω ≈ ω₀ and ω* ≈ 0)."""
    import numpy as np
    import pandas as pd

    rows = []
    controls = frame[(frame["case_study"] == "identity") & frame["p_value"].notna()]
    for config in configs:
        g = controls[controls["config"] == config]
        if g.empty:
            continue
        rows.append({"config": config, "n": len(g),
                     "rejected (p ≤ α)": float((g["p_value"] <= alpha).mean()),
                     "rejected after correction": float(g["significant"].astype(bool).mean()),
                     "mean ω": g["effect_size"].mean(), "mean ω₀": g["null_mean"].mean(),
                     "mean ω*": g["effect_std"].mean(), "mean p": g["p_value"].mean(),
                     "could reject": int(np.sum(g["can_reject"].astype(bool)))})
    table = pd.DataFrame(rows)
    return table.set_index("config") if rows else table
