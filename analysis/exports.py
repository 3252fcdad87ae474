"""An audit's analysis frames as flat tables for pandas, DuckDB and R (`paw export`).

Two frames, one row each, columns documented in docs/schema.md ("Exported frames"):

- `edits_frame`: every perturbed job (M-block, F-block, shuffle) with the flip, exclusion
  and correctness of `analysis.audit.frames.observations` (the definitions every metric uses),
  the token-rule chain update, LLM-judge verdicts and the JSD of the option distributions
  (`analysis.flips.listing`, the numbers `paw flips` shows);
- `generations_frame`: every answered job (baselines, direct answers, edits, samples) with
  its generation: parsed answer, status, tokens, latency, text, and the option
  distribution as one `p_<label>` column per answer label.

For a robustness run (seed 003) the edits are its demographic answers and CFV re-answers:
`robustness_edits_frame` (long) and `robustness_wide_frame` (one row per model × item).

Labels are exported by `annotate` (coordinator only); `paw export` adds them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlite_utils

from analysis.audit.frames import load_audit, observations
from analysis.flips.index import ROLE_BLOCK, index_flips
from store.db import loads

if TYPE_CHECKING:
    import pandas as pd

EDIT_COLUMNS: tuple[str, ...] = (
    "audit", "audit_id", "dataset", "job_id", "arm_id", "arm", "model", "item_id", "item",
    "role", "block", "operator_id", "family", "intent", "locus", "variant_id", "fired",
    "status", "excluded", "usable", "gold", "base_answer", "answer", "base_text",
    "answer_text", "flip", "correct", "chain_updated", "judge_verdict", "judge_method", "jsd",
    "old", "new", "generation_id", "base_generation_id",
)
"""Columns of `edits_frame`, in order."""

GENERATION_COLUMNS: tuple[str, ...] = (
    "audit", "audit_id", "dataset", "job_id", "arm_id", "arm", "model", "item_id", "item",
    "role", "stage", "variant_id", "operator_id", "sample_index", "seed", "generation_id",
    "mode", "template", "answer", "parse_status", "finish_reason", "tokens_in", "tokens_out",
    "latency_s", "created_at", "labels", "output",
)
"""Columns of `generations_frame` before its `p_<label>` columns."""


def edits_frame(db: sqlite_utils.Database, audit: str | int | None = None) -> pd.DataFrame:
    """One row per perturbed job of an audit (default: the latest); see `EDIT_COLUMNS`.

    A robustness run's edits have their own columns: `robustness_edits_frame`.
    """
    import pandas as pd

    from analysis.audit.frames import resolve_audit

    if resolve_audit(db, audit)["kind"] == "robustness":
        return robustness_edits_frame(db, resolve_audit(db, audit)["id"])
    frames = load_audit(db, audit)
    info = frames.audit
    obs = observations(frames).copy()
    index_flips(db, int(info["id"]))
    derived = pd.DataFrame(list(db.query(
        "SELECT job_id, chain_updated, jsd, base_generation_id FROM flip_index "
        "WHERE audit_id = ?", [info["id"]])),
        columns=["job_id", "chain_updated", "jsd", "base_generation_id"])
    obs = obs.merge(derived, on="job_id", how="left")
    judged = frames.judgements.groupby("generation_id").agg(
        judge_verdict=("verdict", lambda v: ",".join(str(x) for x in v)),
        judge_method=("method", lambda m: ",".join(str(x) for x in m))).reset_index()
    obs = obs.merge(judged, on="generation_id", how="left")
    obs = obs.merge(frames.arms[["arm_id", "label", "model"]].rename(columns={"label": "arm"}),
                    on="arm_id", how="left")
    obs = obs.merge(frames.items[["item_id", "source_id"]].rename(columns={"source_id": "item"}),
                    on="item_id", how="left")
    obs["gold"] = [vg if isinstance(vg, str) and vg else g
                   for vg, g in zip(obs["v_gold"], obs["gold"], strict=True)]
    obs["block"] = obs["role"].map(ROLE_BLOCK)
    obs["audit"], obs["audit_id"], obs["dataset"] = info["name"], info["id"], info["dataset"]
    obs["fired"] = obs["fired"].astype("boolean")
    obs["chain_updated"] = obs["chain_updated"].astype("boolean")
    obs["flip"] = obs["flip"].map({1.0: True, 0.0: False}).astype("boolean")
    obs["correct"] = obs["correct"].map({1.0: True, 0.0: False}).astype("boolean")
    for column in ("generation_id", "base_generation_id", "variant_id"):
        obs[column] = obs[column].astype("Int64")
    return obs[list(EDIT_COLUMNS)].reset_index(drop=True)


_GENERATIONS_SQL = """
SELECT j.id AS job_id, j.arm_id, ar.label AS arm, m.name AS model, j.item_id,
       i.source_id AS item, j.role, j.stage, j.variant_id, v.operator_id, j.sample_index,
       j.seed, g.id AS generation_id, g.mode, g.template, g.answer, g.parse_status,
       g.finish_reason, g.tokens_in, g.tokens_out, g.latency_s, g.created_at,
       g.labels_json, g.option_probs_json, g.output
FROM jobs j
JOIN generations g ON g.key = j.generation_key
JOIN arms ar ON ar.id = j.arm_id
JOIN models m ON m.id = ar.model_id
JOIN items i ON i.id = j.item_id
LEFT JOIN variants v ON v.id = j.variant_id
WHERE j.audit_id = ? AND j.status = 'done'
ORDER BY j.id
"""


def generations_frame(db: sqlite_utils.Database,
                      audit: str | int | None = None) -> pd.DataFrame:
    """One row per answered job of an audit (default: the latest): `GENERATION_COLUMNS`,
    then `p_<label>` (probability of each answer label; empty where a generation's labels
    do not include it), labels in order of first appearance."""
    import pandas as pd

    from analysis.audit.frames import resolve_audit

    info = resolve_audit(db, audit)
    dataset = db.execute("SELECT name FROM datasets WHERE id = ?",
                         [info["dataset_id"]]).fetchone()
    rows = list(db.query(_GENERATIONS_SQL, [info["id"]]))
    labels: dict[str, None] = {}
    probs = []
    for row in rows:
        dist = loads(row.pop("option_probs_json")) or {}
        order = loads(row.pop("labels_json")) or list(dist)
        row["labels"] = ",".join(str(x) for x in order)
        labels.update(dict.fromkeys(str(x) for x in order))
        labels.update(dict.fromkeys(str(x) for x in dist))
        probs.append(dist)
    frame = pd.DataFrame(rows, columns=[c for c in GENERATION_COLUMNS
                                        if c not in ("audit", "audit_id", "dataset")])
    frame.insert(0, "dataset", dataset[0] if dataset else None)
    frame.insert(0, "audit_id", info["id"])
    frame.insert(0, "audit", info["name"])
    for column in ("variant_id", "seed"):
        frame[column] = frame[column].astype("Int64")
    for label in labels:
        frame[f"p_{label}"] = pd.array([d.get(label) for d in probs], dtype="Float64")
    return frame


# ---------------------------------------------------------------- seed 003 (robustness runs)

ROBUSTNESS_EDIT_COLUMNS: tuple[str, ...] = (
    "audit", "audit_id", "dataset", "job_id", "arm_id", "arm", "model", "item_id", "item",
    "role", "block", "test", "operator_id", "family", "mode", "demographic", "variant_id",
    "fired", "status", "excluded", "usable", "gold", "target", "base_answer", "answer",
    "base_text", "answer_text", "flip", "correct", "jsd", "consistent", "conflicts",
    "direction", "flags_verdict", "n_flags", "worst_severity", "flag_categories",
    "cfv_outcome", "cfv_state", "circular", "plausible", "limited", "options_removed",
    "judge_shared", "edd", "edd_embedder", "edd_comparable", "old", "new", "generation_id",
    "base_generation_id",
)
"""Columns of a robustness run's `<run>-edits` (long: one row per prefixed answer and per
CFV re-answer), in order."""

ROBUSTNESS_WIDE_COLUMNS: tuple[str, ...] = (
    "audit", "audit_id", "dataset", "arm_id", "arm", "model", "item_id", "item", "gold",
    "base_answer", "correct", "n_compared", "n_changed", "n_conflicting", "cfv_target",
    "cfv_answer", "cfv_outcome", "edd", "edd_embedder", "edd_comparable",
)
"""Columns of `<run>-wide` (one row per model × item) before its per-demographic columns
`answer_<d>`, `changed_<d>`, `direction_<d>`, `n_flags_<d>`, `consistent_<d>` (d: the
demographic key, e.g. male_black; `subst_male_black` for the substitution mode)."""

_ROBUSTNESS_EDITS_SQL = """
SELECT j.id AS job_id, j.arm_id, ar.label AS arm, m.name AS model, j.item_id,
       i.source_id AS item, i.gold, i.options_json, j.role, j.variant_id, v.operator_id,
       v.family, v.fired, v.gold AS v_gold, v.details_json, v.old, v.new, j.status,
       fi.answer, fi.base_answer, fi.excluded, fi.flipped, fi.jsd, fi.generation_id,
       fi.base_generation_id
FROM jobs j
JOIN arms ar ON ar.id = j.arm_id
JOIN models m ON m.id = ar.model_id
JOIN items i ON i.id = j.item_id
LEFT JOIN variants v ON v.id = j.variant_id
LEFT JOIN flip_index fi ON fi.job_id = j.id
WHERE j.audit_id = ? AND j.role IN (?, ?)
ORDER BY j.id
"""


def _worst(flags: list[dict]) -> str | None:
    from analysis.robustness.definitions import SEVERITIES

    ranked = [SEVERITIES.index(f["severity"]) for f in flags if f.get("severity") in SEVERITIES]
    return SEVERITIES[max(ranked)] if ranked else None


def robustness_edits_frame(db: sqlite_utils.Database, run: str | int) -> pd.DataFrame:
    """One row per demographic answer and CFV re-answer of a robustness run (long form):
    `ROBUSTNESS_EDIT_COLUMNS`, documented in docs/schema.md."""
    import pandas as pd

    from analysis.robustness.consistency import vignette_consistency
    from analysis.robustness.data import (
        cfv_attempts,
        demographic_pairs,
        edd_values,
        load_robustness,
    )
    from analysis.robustness.definitions import (
        RobustnessRole,
        demographic_key,
        demographic_mode,
        edd_comparable,
        edd_embedder_label,
    )

    data = load_robustness(db, run)
    info = data.audit
    index_flips(db, int(info["id"]))
    pairs = {(r.arm_id, r.item_id, r.variant_id): r for r in demographic_pairs(data).itertuples()}
    attempts = {(r.arm_id, r.item_id): r for r in cfv_attempts(data).itertuples()}
    cfv_judged = {r.variant_id: r for r in data.verdicts.itertuples()
                  if r.role == RobustnessRole.JUDGE_CFV}
    shared = {(r.role, r.arm_id, r.item_id, r.variant_id): int(r.n_sharing)
              for r in data.verdicts.itertuples()}
    edd = {(r.arm_id, r.item_id, r.mode): r.edd for r in edd_values(data).itertuples()}
    questions = dict(zip(data.items["item_id"], data.items["question"], strict=True))
    rows = []
    for r in db.query(_ROBUSTNESS_EDITS_SQL,
                      [info["id"], RobustnessRole.DEMOGRAPHIC, RobustnessRole.CFV_ANSWER]):
        options = loads(r.pop("options_json")) or {}
        details = loads(r.pop("details_json")) or {}
        v_gold = r.pop("v_gold")
        demo = r["role"] == RobustnessRole.DEMOGRAPHIC
        op = r["operator_id"] or ""
        mode = demographic_mode(op) if demo else None
        excluded = r["excluded"]
        if not r["fired"]:
            excluded = "not_fired"
        elif r["generation_id"] is None:
            excluded = "not_generated"
        row = dict(r, block=ROLE_BLOCK[r["role"]], test="demographic" if demo else "cfv",
                   mode=mode, demographic=demographic_key(op) if demo else None,
                   excluded=excluded, usable=excluded is None,
                   target=None if demo else details.get("target", v_gold),
                   base_text=options.get(r["base_answer"]) if r["base_answer"] else None,
                   answer_text=options.get(r["answer"]) if r["answer"] else None,
                   flip=None if excluded else bool(r.pop("flipped")),
                   correct=None if excluded else r["answer"] == r["gold"],
                   edd=edd.get((r["arm_id"], r["item_id"], mode or "prefix")),
                   edd_embedder=edd_embedder_label(data.embedder),
                   edd_comparable=edd_comparable(data.embedder))
        row.pop("flipped", None)
        if demo:
            pair = pairs.get((r["arm_id"], r["item_id"], r["variant_id"]))
            check = vignette_consistency(questions[r["item_id"]], op)
            flags = list(pair.flags) if pair is not None else []
            row.update(consistent=check.consistent, conflicts=",".join(check.conflicts),
                       direction=None if pair is None else pair.direction,
                       flags_verdict=None if pair is None else pair.flags_verdict,
                       n_flags=len(flags) if pair is not None and pair.flags_state == "judged"
                       else None, worst_severity=_worst(flags),
                       flag_categories=",".join(sorted({f.get("category", "") for f in flags})),
                       judge_shared=shared.get(("judge_direction", r["arm_id"], r["item_id"],
                                                r["variant_id"])))
        else:
            attempt = attempts.get((r["arm_id"], r["item_id"]))
            judged = cfv_judged.get(r["variant_id"])
            evidence = judged.evidence if judged is not None else {}
            row.update(cfv_outcome=None if attempt is None else attempt.outcome,
                       cfv_state=None if attempt is None else attempt.state,
                       circular=details.get("circular") if r["fired"] else None,
                       plausible=evidence.get("plausible"), limited=evidence.get("limited"),
                       options_removed=bool(details.get("options_removed")),
                       judge_shared=shared.get((RobustnessRole.JUDGE_CFV, r["arm_id"], r["item_id"],
                                                r["variant_id"])))
        rows.append(row)
    frame = pd.DataFrame(rows, columns=[c for c in ROBUSTNESS_EDIT_COLUMNS
                                        if c not in ("audit", "audit_id", "dataset")])
    frame.insert(0, "dataset", info["dataset"])
    frame.insert(0, "audit_id", info["id"])
    frame.insert(0, "audit", info["name"])
    for column in ("fired", "usable", "flip", "correct", "consistent", "circular", "plausible",
                   "limited", "options_removed", "edd_comparable"):
        frame[column] = frame[column].astype("boolean")
    for column in ("n_flags", "judge_shared", "generation_id", "base_generation_id",
                   "variant_id"):
        frame[column] = frame[column].astype("Int64")
    frame["jsd"] = frame["jsd"].astype("Float64")
    frame["edd"] = frame["edd"].astype("Float64")
    return frame[list(ROBUSTNESS_EDIT_COLUMNS)].reset_index(drop=True)


def robustness_wide_frame(db: sqlite_utils.Database, run: str | int) -> pd.DataFrame:
    """One row per model × item of a robustness run: `ROBUSTNESS_WIDE_COLUMNS`, then the
    per-demographic columns (answer, changed, direction, flag count, consistency)."""
    import pandas as pd

    long = robustness_edits_frame(db, run)
    base = long.groupby(["arm_id", "item_id"], sort=True).first().reset_index()
    demo = long[long["test"] == "demographic"]
    cfv = long[long["test"] == "cfv"].set_index(["arm_id", "item_id"])
    rows = []
    for r in base.itertuples():
        mine = demo[(demo["arm_id"] == r.arm_id) & (demo["item_id"] == r.item_id)]
        compared = mine[mine["usable"].fillna(False)]
        row = {"audit": r.audit, "audit_id": r.audit_id, "dataset": r.dataset,
               "arm_id": r.arm_id, "arm": r.arm, "model": r.model, "item_id": r.item_id,
               "item": r.item, "gold": r.gold, "base_answer": r.base_answer,
               "correct": None if r.base_answer is None or pd.isna(r.base_answer)
               else r.base_answer == r.gold,
               "n_compared": len(compared), "n_changed": int(compared["flip"].sum()),
               "n_conflicting": int(mine["consistent"].eq(False).sum()),
               "cfv_target": None, "cfv_answer": None, "cfv_outcome": None,
               "edd": r.edd, "edd_embedder": r.edd_embedder,
               "edd_comparable": r.edd_comparable}
        if (r.arm_id, r.item_id) in cfv.index:
            c = cfv.loc[(r.arm_id, r.item_id)]
            row.update(cfv_target=c["target"], cfv_answer=c["answer"],
                       cfv_outcome=c["cfv_outcome"])
        for d in mine.itertuples():
            key = d.demographic if d.mode == "prefix" else f"subst_{d.demographic}"
            row.update({f"answer_{key}": d.answer, f"changed_{key}": d.flip,
                        f"direction_{key}": d.direction, f"n_flags_{key}": d.n_flags,
                        f"consistent_{key}": d.consistent})
        rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(columns=list(ROBUSTNESS_WIDE_COLUMNS))
    extra = [c for c in frame.columns if c not in ROBUSTNESS_WIDE_COLUMNS]
    for column in [c for c in extra if c.startswith(("changed_", "consistent_"))] + [
            "correct", "edd_comparable"]:
        frame[column] = frame[column].astype("boolean")
    for column in [c for c in extra if c.startswith("n_flags_")]:
        frame[column] = frame[column].astype("Int64")
    return frame[list(ROBUSTNESS_WIDE_COLUMNS) + extra]
