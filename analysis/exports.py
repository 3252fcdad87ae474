"""An audit's analysis frames as flat tables for pandas, DuckDB and R (`paw export`).

Two frames, one row each, columns documented in docs/schema.md ("Exported frames"):

- `edits_frame`: every perturbed job (M-block, F-block, shuffle) with the flip, exclusion
  and correctness of `analysis.audit.frames.observations` (the definitions every metric uses),
  the token-rule chain update, LLM-judge verdicts and the JSD of the option distributions
  (`analysis.flips.listing`, the numbers `paw flips` shows);
- `generations_frame`: every answered job (baselines, direct answers, edits, samples) with
  its generation: parsed answer, status, tokens, latency, text, and the option
  distribution as one `p_<label>` column per answer label.

Labels are exported by `annotate` (coordinator only); `paw export` adds them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlite_utils

from analysis.flips.index import ROLE_BLOCK, index_flips
from analysis.audit.frames import load_audit, observations
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
    """One row per perturbed job of an audit (default: the latest); see `EDIT_COLUMNS`."""
    import pandas as pd

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
                   for vg, g in zip(obs["v_gold"], obs["gold"])]
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
