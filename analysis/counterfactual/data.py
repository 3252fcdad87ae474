"""A stored seed-000 study as arrays: k samples → majority answers, distributions → comparisons.

Reads the store only (jobs, variants, generations, items). A comparison unit is one item
under one targeted edit; its jobs are found through the unit's targeted variant: 'original'
and 'target' jobs name it in `jobs.variant_id`, the baselines' variants in
`details.reference_variant_id` (the planner's contract, docs/counterfactual.md).

Per prompt (arm × unit × role) the k samples give:

- the categorical answer by `majority_vote` (ties broken by the distribution, recorded);
- the option distribution: the **mean of the k samples' distributions at the answer
  position**. In direct mode (the default, as in the paper) every sample's distribution
  is the same next-token distribution at the end of the prompt — sampling happens after it
  — so the mean *is* that distribution; in CoT mode each sample reads it after its own
  chain and the mean estimates the answer distribution over the model's chains.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from analysis.common.options import parse_option
from analysis.counterfactual.comparison import Comparison

from analysis.counterfactual.definitions import (
    ANALYSIS_SETTINGS,
    StudyRole,
    logit_first,
    majority_vote,
)
from store.db import loads

if TYPE_CHECKING:
    import pandas as pd
    import sqlite_utils

BASELINE_NAMES: dict[str, str] = {StudyRole.PARAPHRASE: "adjusted paraphrase",
                                  StudyRole.FIXED: "fixed sentence"}
"""Display name of each baseline role (the order of the paper's Tables 4 and 5)."""

TASK_OF_KIND: dict[str, str] = {"binary": "yes/no", "mcq": "multiple choice"}
"""An item's task when its `meta` has no 'task': yes/no and multiple-choice items are
analysed apart (their answers have different label sets)."""


@dataclass(frozen=True)
class StudyData:
    """A loaded study.

    Attributes:
        info: the study row (id, name, kind, dataset, config, created_at).
        prompts: one row per (model, unit, role): item, task, target, check, answer, tie,
            parsed (samples parsed of k), y (logit of the first label), n_samples.
        comparisons: one per (model, target, task, baseline), paired by item.
        paraphrases: one row per (model, unit) with a paraphrase variant: target and
            achieved fraction, within tolerance, source, attempts, fired.
        units: one row per (model, unit) with whether the targeted edit fired.
        targets: unit (its targeted variant's id) → (operator id, family, details).
    """

    info: dict[str, Any]
    prompts: pd.DataFrame
    comparisons: list[Comparison]
    paraphrases: pd.DataFrame
    units: pd.DataFrame
    targets: dict[int, tuple[str, str, dict[str, Any]]] = field(default_factory=dict)


_SAMPLES = """
SELECT j.arm_id, m.name, j.item_id, j.role, j.variant_id, j.sample_index, j.status,
       v.details_json, v.fired, g.answer, g.parse_status, g.option_probs_json, g.labels_json
FROM jobs j JOIN arms a ON a.id = j.arm_id JOIN models m ON m.id = a.model_id
LEFT JOIN variants v ON v.id = j.variant_id
LEFT JOIN generations g ON g.key = j.generation_key AND j.status = 'done'
WHERE j.audit_id = ? ORDER BY j.arm_id, j.item_id, j.role, j.sample_index
"""


def resolve_study(db: sqlite_utils.Database, ref: str | int | None) -> dict[str, Any]:
    """The study row for a name or id (None: the latest study).

    Raises:
        NotFound: no such study.
    """
    from store.runs import find_run

    run = find_run(db, ref, ("study",))
    row = db.execute("SELECT a.id, a.name, a.kind, d.name, a.config_json, a.created_at "
                     "FROM audits a JOIN datasets d ON d.id = a.dataset_id WHERE a.id = ?",
                     [run.id]).fetchone()
    config = loads(row[4]) or {}
    # Every test reads these; one that is none of its type's values (a file edited outside
    # PAW) is refused here rather than read as 'two' by one test and 'one' by another.
    for name, kind in ANALYSIS_SETTINGS.items():
        if name in config:
            config[name] = parse_option(kind, config[name], field=name,
                                        where=f"study {row[1]}'s stored settings")
    return {"id": row[0], "name": row[1], "kind": row[2], "dataset": row[3],
            "config": config, "created_at": row[5]}


def load_study(db: sqlite_utils.Database, ref: str | int | None = None) -> StudyData:
    """Load a study's samples and turn them into prompts and comparisons."""
    import pandas as pd

    info = resolve_study(db, ref)
    rows = db.execute(_SAMPLES, [info["id"]]).fetchall()
    unit_ids = {r[4] for r in rows if r[3] in (StudyRole.ORIGINAL, StudyRole.TARGET)
                and r[4] is not None}
    targets = {r[0]: (r[1], r[2], loads(r[3]) or {}) for r in db.execute(
        f"SELECT id, operator_id, family, details_json FROM variants WHERE id IN "
        f"({','.join('?' * len(unit_ids))})", list(unit_ids))} if unit_ids else {}
    items = {r[0]: (r[1], r[2], loads(r[3]) or {}) for r in db.execute(
        "SELECT id, source_id, kind, meta_json FROM items WHERE id IN (SELECT DISTINCT "
        "item_id FROM jobs WHERE audit_id = ?)", [info["id"]])}

    samples: dict[tuple, list[tuple]] = defaultdict(list)
    units, paraphrases = [], []
    for (arm, model, item, role, variant_id, index, status, details_json, fired, answer,
         parse, probs_json, labels_json) in rows:
        details = loads(details_json) or {}
        unit = variant_id if role in (StudyRole.ORIGINAL, StudyRole.TARGET) else details.get(
            "reference_variant_id")
        if unit is None:
            continue
        if role == StudyRole.TARGET and index == 0:
            units.append({"model": model, "unit": unit, "item_id": item,
                          "task": task_of(*items[item][1:]), "target": targets[unit][0],
                          "fired": status != "not_fired"})
        if role == StudyRole.PARAPHRASE and index == 0:
            paraphrases.append(_paraphrase_row(model, unit, targets[unit][0], fired, details))
        if status != "done":
            continue
        labels = tuple(loads(labels_json) or ())
        samples[(arm, model, unit, role)].append((answer if parse == "ok" else None,
                                                  loads(probs_json), labels, item))
    prompts = _prompts(samples, targets, items)
    return StudyData(info, prompts, _comparisons(prompts, targets), pd.DataFrame(paraphrases),
                     pd.DataFrame(units, columns=["model", "unit", "item_id", "task", "target",
                                                  "fired"]), targets)


def task_of(kind: str, meta: dict[str, Any]) -> str:
    """An item's task: its `meta['task']`, else by kind (`TASK_OF_KIND`)."""
    return str(meta.get("task") or TASK_OF_KIND.get(kind, kind))


def _paraphrase_row(model: str, unit: int, target: str, fired: Any,
                    details: dict[str, Any]) -> dict[str, Any]:
    attempts = details.get("attempts", [])
    return {"model": model, "unit": unit, "target": target, "fired": bool(fired),
            "target_fraction": details.get("target_fraction"),
            "achieved_fraction": details.get("achieved_fraction"),
            "within_tolerance": bool(details.get("within_tolerance")),
            "tolerance": details.get("tolerance"), "source": details.get("source"),
            "attempts": len(attempts),
            "rejected": sum(1 for a in attempts if "fraction" not in a)}


def _prompts(samples: dict[tuple, list[tuple]], targets: dict, items: dict) -> pd.DataFrame:
    """Majority answer, tie flag and mean distribution of every (arm, unit, role) prompt."""
    import pandas as pd

    keys = list(samples)
    width = max((len(s[2]) for group in samples.values() for s in group), default=1)
    k = max((len(group) for group in samples.values()), default=1)
    codes = np.full((len(keys), k), -1)
    probs = np.full((len(keys), width), np.nan)
    labels_of: list[tuple[str, ...]] = []
    for row, key in enumerate(keys):
        group = samples[key]
        labels = next((s[2] for s in group if s[2]), ())
        labels_of.append(labels)
        vectors = [[float((s[1] or {}).get(label, np.nan)) for label in labels]
                   for s in group if s[1]]
        if vectors and labels:
            probs[row, :len(labels)] = np.nanmean(np.array(vectors), axis=0)
        for col, sample in enumerate(group):
            if sample[0] in labels:
                codes[row, col] = labels.index(sample[0])
    answers, ties = majority_vote(codes, np.nan_to_num(probs, nan=0.0))
    records = []
    for row, (arm, model, unit, role) in enumerate(keys):
        item = samples[(arm, model, unit, role)][0][3]
        source_id, kind, meta = items[item]
        operator, family, details = targets[unit]
        labels = labels_of[row]
        dist = probs[row, :len(labels)]
        records.append({
            "model": model, "unit": unit, "item_id": item, "item": source_id, "role": role,
            "task": task_of(kind, meta), "target": operator,
            "check": family == "control", "labels": labels,
            "answer": labels[answers[row]] if answers[row] >= 0 else None,
            "tie": bool(ties[row]), "parsed": int((codes[row] >= 0).sum()),
            "n_samples": len(samples[(arm, model, unit, role)]),
            "probs": dist if np.isfinite(dist).all() and len(labels) else None,
            "direction": details.get("direction"),
        })
    return pd.DataFrame(records, columns=["model", "unit", "item_id", "item", "role", "task",
                                          "target", "check", "labels", "answer", "tie",
                                          "parsed", "n_samples", "probs", "direction"])


def _comparisons(prompts: pd.DataFrame, targets: dict) -> list[Comparison]:
    """One `Comparison` per (model, target, task, baseline), over the units that have the
    original, the targeted and that baseline's prompt."""
    if prompts.empty:
        return []
    out: list[Comparison] = []
    by_unit = {(r.model, r.unit, r.role): r for r in prompts.itertuples(index=False)}
    groups = prompts[prompts["role"] == StudyRole.TARGET].groupby(["model", "target", "task"],
                                                           sort=False)
    for (model, target, task), frame in groups:
        for role, baseline in BASELINE_NAMES.items():
            # Units with all three prompts (original, targeted, this baseline's).
            triples = [(o, t, b) for u in frame["unit"]
                       if (o := by_unit.get((model, u, StudyRole.ORIGINAL))) is not None
                       and (t := by_unit.get((model, u, StudyRole.TARGET))) is not None
                       and (b := by_unit.get((model, u, role))) is not None]
            if not triples:
                continue
            # Every label any of the three prompts offers, the targeted prompt's first: an
            # answer is always one of its own prompt's labels, so it always has a code.
            labels: list[str] = []
            for triple in triples:
                for prompt in (triple[1], triple[0], triple[2]):
                    for label in prompt.labels:
                        if label not in labels:
                            labels.append(label)
            out.append(_comparison(model, target, task, baseline, bool(frame["check"].iloc[0]),
                                   tuple(labels), triples))
    return out


def _comparison(model: str, target: str, task: str, baseline: str, check: bool,
                labels: tuple[str, ...], triples: list) -> Comparison:
    n, k = len(triples), len(labels)

    def codes(i: int) -> np.ndarray:
        # No answer (no sample parsed) is None, or NaN once pandas has stored the column.
        return np.array([labels.index(t[i].answer) if isinstance(t[i].answer, str) else -1
                         for t in triples], dtype=int)

    def dists(i: int) -> np.ndarray:
        out = np.full((n, k), np.nan)
        for row, t in enumerate(triples):
            if t[i].probs is not None:
                out[row] = 0.0
                for label, value in zip(t[i].labels, t[i].probs, strict=True):
                    out[row, labels.index(label)] = value
        return out

    direction = np.array([t[1].direction if t[1].direction in (1, -1) else np.nan
                          for t in triples], dtype=float)
    if not np.isfinite(direction).any():
        direction = np.ones(n)  # an undirected edit: β_pert is the mean shift (d = +1)
    return Comparison(model, target, task, baseline, "check" if check else "main", labels,
                      np.array([t[0].item_id for t in triples]), codes(0), codes(1), codes(2),
                      dists(0), dists(1), dists(2), direction)


def prompt_logits(prompts: pd.DataFrame, role: str = StudyRole.ORIGINAL) -> pd.DataFrame:
    """z = log(P(first label)/(1 − P(first label))) of each model's `role` prompts, one per
    item (the power simulation's starting logits, Appendix F), with model and task."""
    import pandas as pd

    chosen = prompts[(prompts["role"] == role) & ~prompts["check"] & prompts["probs"].notna()]
    chosen = chosen.drop_duplicates(["model", "item_id"])
    z = [float(logit_first(np.asarray(p)[None, :])[0]) for p in chosen["probs"]]
    return pd.DataFrame({"model": chosen["model"].to_numpy(), "task": chosen["task"].to_numpy(),
                         "item": chosen["item"].to_numpy(), "z": z})
