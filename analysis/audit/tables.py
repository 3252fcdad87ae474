"""The paper's tables (seed 002 Tables 3, 4, 6, 7, 8, 11 and firing counts) as DataFrames.

`compute_audit` runs every metric of `analysis.audit.metrics` / `analysis.audit.joint` for each arm;
`build_tables` lays the results out. Numeric columns come in triples `x`, `x_low`, `x_high`
(value and 95% CI) so renderers can show "0.52 [0.45, 0.60]" and JSON keeps the numbers.
Rates are fractions in [0, 1]; accuracy deltas and gaps are percentage points, as in the paper.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import sqlite_utils

from analysis.audit import definitions as d
from analysis.audit import joint, metrics
from analysis.audit.arm import ArmContext, Stat, arm_context, mean_stat, present
from analysis.audit.columns import (
    TABLE3_BOLD,
    alternative_readings,
    bold_columns,
    bold_row_minima,
    ci_excludes_zero,
    reading_headers,
    significant_gain,
    stat_columns,
    table_frame,
)
from analysis.audit.frames import AuditFrames, baselines, load_audit, observations
from analysis.common.bootstrap import DEFAULT_SEED, N_BOOT

if TYPE_CHECKING:
    import pandas as pd

TABLE_KEYS: tuple[str, ...] = (
    "summary", "fblock", "joint", "cdr_rules", "families", "cot_direct", "shuffle", "dfg",
    "operators", "firing",
)
"""Keys of `audit_tables`, in report order."""


_OBS_COLUMNS: tuple[str, ...] = (
    "arm_id", "item_id", "role", "status", "operator_id", "family", "intent", "new",
    "generation_id", "output", "excluded", "usable", "flip", "correct", "answer_text",
    "base_text")
"""Observation columns the per-arm metrics read."""


@dataclass
class ArmResult:
    """Every metric of one arm (mutable while `compute_audit` fills it)."""

    arm_id: int
    label: str
    n_items: int
    model: str = ""
    template: str = ""
    stats: dict[str, Stat | None] = field(default_factory=dict)
    afr_operator: dict[str, Stat] = field(default_factory=dict)
    families: dict[str, Stat] = field(default_factory=dict)
    dfg_conditions: dict[str, Stat] = field(default_factory=dict)
    joint_token: joint.JointTable | None = None
    joint_judge: dict[str, joint.JointTable] = field(default_factory=dict)
    chs_counts: dict[str, int] = field(default_factory=dict)
    chain_words: float = float("nan")
    firing: dict[str, tuple[int, int]] = field(default_factory=dict)
    firing_ops: dict[str, tuple[int, int]] = field(default_factory=dict)
    tier: str | None = None
    n_params: int | None = None


@dataclass(frozen=True)
class AuditResult:
    """An audit's metrics: per-arm results plus what they were computed from."""

    frames: AuditFrames
    arms: list[ArmResult]
    n_boot: int
    seed: int


def compute_audit(frames: AuditFrames, n_boot: int = N_BOOT,
                  seed: int = DEFAULT_SEED) -> AuditResult:
    """Compute every metric for every arm of an audit.

    Args:
        frames: the audit, from `load_audit`.
        n_boot: bootstrap replicates per CI.
        seed: bootstrap seed (each arm resamples with the seed sequence [seed, arm_id]).
    """
    obs_all = observations(frames)
    cot_all = baselines(frames, d.AuditRole.BASELINE)
    direct_all = baselines(frames, d.AuditRole.DIRECT)
    results = []
    # The metrics read these columns only; slicing a narrow frame per call is what keeps
    # a 14-arm, 92K-job audit fast (bench/report_scale.py).
    obs_all = obs_all[[c for c in _OBS_COLUMNS if c in obs_all.columns]]
    obs_by_arm = dict(tuple(obs_all.groupby("arm_id", sort=False)))
    cot_by_arm = dict(tuple(cot_all.groupby("arm_id", sort=False)))
    direct_by_arm = dict(tuple(direct_all.groupby("arm_id", sort=False)))
    for arm in frames.arms.itertuples(index=False):
        ctx = arm_context(frames, arm.arm_id, arm.label, n_boot, seed)
        obs = obs_by_arm.get(arm.arm_id, obs_all.iloc[0:0])
        cot = cot_by_arm.get(arm.arm_id, cot_all.iloc[0:0])
        direct = direct_by_arm.get(arm.arm_id, direct_all.iloc[0:0])
        r = ArmResult(arm.arm_id, arm.label, len(ctx.item_ids), str(arm.model),
                      str(arm.template), tier=arm.tier if isinstance(arm.tier, str) else None,
                      n_params=_whole(arm.n_params))
        s = r.stats
        s["acc"] = metrics.accuracy(ctx, cot)
        s["ecr"] = ecr = metrics.ecr(ctx, obs, cot)
        s["chs"] = chs = metrics.chs(ctx, obs)
        dfg, r.dfg_conditions = metrics.dfg(ctx, obs, cot)
        s["dfg"] = dfg
        _reading_stats(s, ctx, obs, (ecr, chs, dfg))
        r.joint_token = joint.token_table(ctx, obs)
        r.joint_judge = joint.judge_tables(ctx, obs, frames.judgements)
        s["cdr"] = r.joint_token.cdr
        s["acc_base"], s["acc_fpert"], s["delta_f"] = metrics.fblock_delta(ctx, obs, cot)
        s["acc_cot"], s["acc_direct"], s["gap_cot_direct"] = metrics.cot_direct_gap(
            ctx, cot, direct)
        (s["acc_orig"], s["acc_shuffled"], s["delta_shuffle"],
         s["same_content"]) = metrics.shuffle_stats(ctx, obs, cot)
        r.afr_operator = metrics.afr_by_operator(ctx, obs)
        r.families = metrics.family_flip_rates(ctx, obs)
        _robustness_stats(r, ctx, obs, cot)
        results.append(r)
    return AuditResult(frames, results, n_boot, seed)


def _whole(value: Any) -> int | None:
    """An int from a DataFrame cell that may hold None or NaN."""
    try:
        return None if value is None or math.isnan(float(value)) else int(value)
    except (TypeError, ValueError):
        return None


READING_STATS: tuple[str, ...] = ("afr_d", "afr_p", "fcs", "mfc")
"""Stats computed under each AFR reading: `name_<key>` for every key of
`definitions.AFR_READINGS`, and `name` itself for the default reading `AFR_READING`."""


def _reading_stats(s: dict[str, Stat | None], ctx: ArmContext, obs: pd.DataFrame,
                   ecr_chs_dfg: tuple[Stat, Stat, Stat]) -> None:
    """AFR_D, AFR_P, FCS and MFC under both readings (F-block only; F+M), plus M-only for
    the Appendix G ablation; the unsuffixed names are the default reading's."""
    ecr, chs, dfg = ecr_chs_dfg
    readings = {key: families for key, (_, families) in d.AFR_READINGS.items()}
    readings["m"] = d.M_FAMILIES
    for key, families in readings.items():
        afr_d = metrics.afr_group(ctx, obs, "D", families=families)
        afr_p = metrics.afr_group(ctx, obs, "P", families=families)
        s[f"afr_d_{key}"], s[f"afr_p_{key}"] = afr_d, afr_p
        s[f"fcs_{key}"] = fcs = metrics.fcs(afr_d, afr_p)
        s[f"mfc_{key}"] = metrics.mfc(ecr, fcs, chs, dfg)
    for name in READING_STATS:
        s[name] = s[f"{name}_{d.AFR_READING}"]


def _robustness_stats(r: ArmResult, ctx: ArmContext, obs: pd.DataFrame,
                      cot: pd.DataFrame) -> None:
    """The Appendix G inputs of one arm: macro-averaged AFR, F-only / M-only FCS, the F4
    and M6 leave-one-outs, CHS flip-class counts, the mean baseline-chain length (words)
    and (fired, planned) edits per family."""
    s = r.stats
    s["afr_d_macro"] = afr_d = metrics.afr_group(ctx, obs, "D", pooling="macro")
    s["afr_p_macro"] = afr_p = metrics.afr_group(ctx, obs, "P", pooling="macro")
    s["fcs_macro"] = metrics.fcs(afr_d, afr_p)
    # M6 enters FCS only under the F+M reading, so its leave-one-out is taken there.
    without_m6 = tuple(f for f in d.AFR_READINGS["fm"][1] if f != "M6")
    s["fcs_no_m6"] = metrics.fcs(metrics.afr_group(ctx, obs, "D", families=without_m6),
                                 metrics.afr_group(ctx, obs, "P", families=without_m6))
    s["delta_f_no_f4"] = metrics.fblock_delta(ctx, obs, cot, exclude=("F4 insert",))[2]
    r.chs_counts = metrics.chs_class_counts(ctx, obs)
    perturbed = obs[obs["role"].isin(d.PERTURBED_ROLES)]
    fired = perturbed["excluded"] != "not_fired"
    r.firing = {str(family): (int(fired[group.index].sum()), len(group))
                for family, group in perturbed.groupby("family", sort=True)}
    r.firing_ops = {str(op): (int(fired[group.index].sum()), len(group))
                    for op, group in perturbed.groupby("operator_id", sort=True)}
    outputs = cot.loc[cot["generated"], "output"]
    words = [len(text.split()) for text in outputs if isinstance(text, str)]
    r.chain_words = float(sum(words) / len(words)) if words else float("nan")


def summary_columns(row: dict[str, Any], stats: dict[str, Stat | None],
                    cdr: Stat | None, judges: dict[str, Stat | None]) -> None:
    """Table 3's columns of one row (an arm, or a model of a panel), in the paper's order:
    Acc., CDR (token; judge per method), AFR_D, AFR_P, FCS and its corridor, ECR, CHS, DFG,
    MFC under the default AFR reading, then AFR_D, AFR_P, FCS, corridor and MFC under each
    other reading (suffix = its key, e.g. `afr_d_fm`)."""
    stat_columns(row, "acc", stats.get("acc"))
    stat_columns(row, "cdr", cdr)
    for method, stat in judges.items():
        stat_columns(row, f"cdr_judge[{method}]" if len(judges) > 1 else "cdr_judge", stat)
    for name in ("afr_d", "afr_p", "fcs"):
        stat_columns(row, name, stats.get(name))
    row["fcs_in_corridor"] = metrics.in_corridor(stats.get("fcs"))
    for name in ("ecr", "chs", "dfg", "mfc"):
        stat_columns(row, name, stats.get(name))
    for key in alternative_readings():
        for name in ("afr_d", "afr_p", "fcs"):
            stat_columns(row, f"{name}_{key}", stats.get(f"{name}_{key}"))
        row[f"fcs_in_corridor_{key}"] = metrics.in_corridor(stats.get(f"fcs_{key}"))
        stat_columns(row, f"mfc_{key}", stats.get(f"mfc_{key}"))


def dress_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 3's headers (naming each column's AFR reading), printed precision and bold
    extrema (over every row: arms or models)."""
    frame.attrs["headers"] = reading_headers(frame)
    frame.attrs["decimals"] = {c: d.RATE_DECIMALS for c in frame.columns
                               if not c.endswith("_n") and frame[c].dtype.kind == "f"}
    # FCS (corridor) and ECR (MFC gate) are decided exactly: printed with the decimals that
    # show each row's decision (FCS 0.445 "0.445", out; ECR 0.296 "0.296", no MFC)
    decided = {"fcs": "fcs", "ecr": "ecr", **{f"fcs_{k}": "fcs" for k in alternative_readings()}}
    for column, kind in decided.items():
        if column in frame.columns and frame[column].dtype.kind == "f":
            frame.attrs["decimals"][column] = max(
                metrics.decisive_decimals(v, metrics.DECISIONS[kind]) for v in frame[column])
    frame.attrs["bold"] = bold_columns(frame, TABLE3_BOLD, [str(i) for i in frame.index])
    return frame


def summary_table(result: AuditResult) -> pd.DataFrame:
    """Table 3: per-arm Acc., CDR (token; judge when present), AFR_D, AFR_P, FCS, ECR, CHS,
    DFG, MFC (None unless ECR ≥ 0.30), iso-FCS corridor membership under both AFR readings,
    each rate with its n, and the arm's items."""
    rows = []
    methods = sorted({m for r in result.arms for m in r.joint_judge})
    for r in result.arms:
        row: dict[str, Any] = {"arm": r.label}
        judges = {m: (r.joint_judge[m].cdr if m in r.joint_judge else None) for m in methods}
        summary_columns(row, r.stats, r.stats["cdr"], judges)
        row["n_items"] = r.n_items
        rows.append(row)
    return dress_summary(table_frame(rows, "arm"))


def _percent_table(result: AuditResult, columns: list[tuple[str, str]],
                   n_stat: str, mean_row: bool = False) -> pd.DataFrame:
    """One row per arm: each (column, stat) as a percentage with its CI and n, and the
    count the row's rates share (`n_items`, the n of `n_stat`; a rate whose own n differs
    shows it as a superscript).

    `mean_row` adds a 'Mean' row: the unweighted mean over the arms where the stat is
    defined, its CI from the averaged replicates (`mean_stat`).
    """
    rows = []
    for r in result.arms:
        row: dict[str, Any] = {"arm": r.label}
        for column, stat in columns:
            stat_columns(row, column, r.stats[stat], 100)
        row["n_items"] = present(r.stats[n_stat]).n
        rows.append(row)
    if mean_row and len(result.arms) > 1:
        row = {"arm": "Mean"}
        for column, stat in columns:
            stat_columns(row, column, mean_stat([r.stats[stat] for r in result.arms]), 100)
        row["n_items"] = sum(present(r.stats[n_stat]).n for r in result.arms)
        rows.append(row)
    frame = table_frame(rows, "arm")
    frame.attrs["n_of"] = {column: "n_items" for column, _ in columns}
    return frame


def mark_significant_gains(frame: pd.DataFrame, column: str = "delta_pp") -> pd.DataFrame:
    """Table 4's marks: `ci_excludes_0` per row, and "∗" on the rows whose Δ is negative
    with a 95 % CI excluding zero (the paper's "only the two marked ∗ have a
    paired-bootstrap 95 % CI on the gain that excludes zero"), all at printed precision."""
    values = [(frame.loc[i, column], frame.loc[i, f"{column}_low"],
               frame.loc[i, f"{column}_high"]) for i in frame.index]
    frame["ci_excludes_0"] = [ci_excludes_zero(*v) for v in values]
    frame.attrs["row_marks"] = {i: "∗" for i, v in zip(frame.index, values, strict=True)
                                if significant_gain(*v)}
    return frame


def fblock_table(result: AuditResult) -> pd.DataFrame:
    """Table 4: Acc base, Acc F-pert (%) and ΔAcc = base − F-pert (pp) with paired CI; ∗ on
    a significant gain."""
    return mark_significant_gains(_percent_table(
        result, [("acc_base_pct", "acc_base"), ("acc_fpert_pct", "acc_fpert"),
                 ("delta_pp", "delta_f")], n_stat="delta_f"))


def joint_frame(result: AuditResult) -> pd.DataFrame:
    """Table 6: joint chain-update × answer-flip distribution (token rule), row %, n, rows
    sorted by cell (c); the last row pools every arm's edits ('Panel', no CI: the arms
    share their items)."""
    from analysis.audit.joint_tables import joint_table_frame

    return joint_table_frame([(r.label, [present(r.joint_token)]) for r in result.arms], "arm",
                             panel_ci=False)


def cdr_rules_table(result: AuditResult) -> pd.DataFrame:
    """Table 7: CDR (%) under the token rule and under each LLM-judge method, with n, and
    the Panel row pooling every arm's edits (no CI: the arms share their items)."""
    from analysis.audit.joint_tables import cdr_rules_frame

    methods = sorted({m for r in result.arms for m in r.joint_judge})
    groups = [(r.label, [present(r.joint_token)], {m: [t] for m, t in r.joint_judge.items()})
              for r in result.arms]
    return cdr_rules_frame(groups, methods, "arm", panel_ci=False)


def families_frame(rows_of: Mapping[str, Mapping[str, Stat | None]], columns: list[str],
                   index: str = "family") -> pd.DataFrame:
    """Table 11's layout: rows F1..F7, M1..M6, one column per arm or model with the pooled
    flip rate and its n (`<column>_n`); NaN ('–') = never fired; each row's lowest value
    bold (the paper: "lowest per row is bolded (lower is better)")."""
    rows = []
    for family in d.F_FAMILIES + d.M_FAMILIES:
        row: dict[str, Any] = {index: f"{family} {d.FAMILY_NAMES[family]}"}
        for column in columns:
            stat = rows_of[column].get(family)
            row[column] = stat.point if stat is not None else float("nan")
            row[f"{column}_n"] = stat.n if stat is not None else None
        rows.append(row)
    frame = table_frame(rows, index, [index] + [c for col in columns for c in (col, f"{col}_n")])
    frame.attrs["bold"] = bold_row_minima(frame, columns)
    return frame


def families_table(result: AuditResult) -> pd.DataFrame:
    """Table 11: flip rate per family (rows F1..F7, M1..M6) × arm; NaN ('–') = never fired."""
    return families_frame({r.label: r.families for r in result.arms},
                          [r.label for r in result.arms])


def operators_table(result: AuditResult) -> pd.DataFrame:
    """AFR per operator and arm with CI and n (the per-operator detail behind AFR_D/AFR_P)."""
    tags = _operator_tags(result.frames)
    rows = []
    for r in result.arms:
        for op, stat in r.afr_operator.items():
            row: dict[str, Any] = {"arm": r.label, "operator": op, **tags.get(op, {})}
            stat_columns(row, "afr", stat)
            row["n"] = stat.n
            rows.append(row)
    frame = table_frame(rows, columns=["arm", "operator", "family", "intent", "afr",
                                       "afr_low", "afr_high", "afr_n", "n"])
    frame.attrs["n_of"] = {"afr": "n"}
    return frame


def _operator_tags(frames: AuditFrames) -> dict[str, dict[str, Any]]:
    jobs = frames.jobs.dropna(subset=["operator_id"])
    first = jobs.drop_duplicates("operator_id")
    return {row.operator_id: {"family": row.family, "intent": row.intent}
            for row in first.itertuples(index=False)}


def firing_table(result: AuditResult) -> pd.DataFrame:
    """Per arm × operator: planned jobs, fired, generated, used, unparsed, baseline unparsed."""
    obs = observations(result.frames)
    labels = {r.arm_id: r.label for r in result.arms}
    rows = []
    for (arm_id, op), group in obs.groupby(["arm_id", "operator_id"], sort=True):
        excluded = group["excluded"]
        first = group.iloc[0]
        rows.append({
            "arm": labels.get(arm_id, str(arm_id)), "operator": op, "family": first["family"],
            "intent": first["intent"], "role": first["role"], "planned": len(group),
            "fired": int((excluded != "not_fired").sum()),
            "generated": int((~excluded.isin(["not_fired", "not_generated"])).sum()),
            "used": int(group["usable"].sum()),
            "unparsed": int((excluded == "unparsed").sum()),
            "baseline_unparsed": int((excluded == "baseline_unparsed").sum()),
        })
    return table_frame(rows, columns=["arm", "operator", "family", "intent", "role", "planned",
                                 "fired", "generated", "used", "unparsed",
                                 "baseline_unparsed"])


def cot_direct_table(result: AuditResult) -> pd.DataFrame:
    """CoT vs no-CoT direct accuracy (%) and the paired gap CoT − direct (pp)."""
    return _percent_table(result, [("acc_cot_pct", "acc_cot"), ("acc_direct_pct", "acc_direct"),
                                   ("gap_pp", "gap_cot_direct")], n_stat="gap_cot_direct")


def shuffle_table(result: AuditResult) -> pd.DataFrame:
    """Table 8: accuracy original vs shuffled options (%), Δ = shuffled − original (pp),
    same-content rate (%), and a Mean row (the paper's rows are datasets, here arms)."""
    return _percent_table(result, [("acc_orig_pct", "acc_orig"),
                                   ("acc_shuffled_pct", "acc_shuffled"),
                                   ("delta_pp", "delta_shuffle"),
                                   ("same_content_pct", "same_content")], n_stat="delta_shuffle",
                          mean_row=True)


def dfg_table(result: AuditResult) -> pd.DataFrame:
    """Accuracy per DFG condition (baseline, M2 age-a, age-b, sex) on fired items, and DFG."""
    rows = []
    for r in result.arms:
        row: dict[str, Any] = {"arm": r.label}
        for condition in d.DFG_CONDITIONS:
            stat_columns(row, f"acc[{condition}]", r.dfg_conditions.get(condition))
        stat_columns(row, "dfg", r.stats["dfg"])
        rows.append(row)
    return table_frame(rows, "arm")


def build_tables(result: AuditResult) -> dict[str, pd.DataFrame]:
    """Every table of the report, keyed and ordered as `TABLE_KEYS`."""
    builders = {
        "summary": summary_table, "fblock": fblock_table, "joint": joint_frame,
        "cdr_rules": cdr_rules_table, "families": families_table,
        "cot_direct": cot_direct_table, "shuffle": shuffle_table, "dfg": dfg_table,
        "operators": operators_table, "firing": firing_table,
    }
    return {key: builders[key](result) for key in TABLE_KEYS}


def audit_tables(db: sqlite_utils.Database, audit: str | int | None = None,
                 n_boot: int = N_BOOT, seed: int = DEFAULT_SEED) -> dict[str, pd.DataFrame]:
    """The paper's tables for one audit (default: the latest) as pandas DataFrames.

    Args:
        db: the store.
        audit: audit name or id; None = the latest audit.
        n_boot: bootstrap replicates per CI (default 200, as the paper).
        seed: bootstrap seed.

    Returns:
        {key: DataFrame} for the keys in `TABLE_KEYS`.
    """
    return build_tables(compute_audit(load_audit(db, audit), n_boot, seed))
