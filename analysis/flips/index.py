"""The flip inspector's derived table, `flip_index`: the per-edit rule and its upkeep.

An *edit* is an answered perturbed job (`m_block`, `f_block`, `shuffle`; in a seed-003 run
`demographic` and `cfv_answer`); it *flips* when its answer differs from its arm's baseline
answer (for the shuffle: when the chosen option's text differs) — the rule of
`analysis.audit.frames.observations`, applied per row (a test compares them). `index_flips`
adds the rows of edits answered since it last ran, with what the list filters, counts and
sorts on (flip, exclusion, chain update, JSD), so `analysis.flips.listing`
pages over an indexed table and never loads the audit's chains. The engine calls it when a
run ends; `list_flips` calls it too, so a listing during a run sees the newest answers.
Deleting its rows loses nothing: they are derived.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlite_utils

from analysis.audit.definitions import JOINT_FAMILIES, AuditRole, chain_updated
from analysis.robustness.definitions import RobustnessRole
from store.db import loads, transaction

PERTURBED_ROLES: tuple[str, ...] = (AuditRole.M_BLOCK, AuditRole.F_BLOCK, AuditRole.SHUFFLE,
                                    RobustnessRole.DEMOGRAPHIC, RobustnessRole.CFV_ANSWER)
"""Job roles whose answers are edits: seed 002's (the roles `observations` reads), and
seed 003's — an answer under a demographic prefix (or substitution) and the re-answer of a
CFV change, each compared with the arm's baseline answer like an M-block edit."""

ROLE_BLOCK: dict[str, str] = {AuditRole.M_BLOCK: "M", AuditRole.F_BLOCK: "F",
                              AuditRole.SHUFFLE: "shuffle",
                              RobustnessRole.DEMOGRAPHIC: "demographic",
                              RobustnessRole.CFV_ANSWER: "CFV"}
"""The block a perturbed role belongs to (what `--block` filters on)."""

QUESTION_EDIT_ROLES: tuple[str, ...] = (AuditRole.M_BLOCK, RobustnessRole.DEMOGRAPHIC,
                                        RobustnessRole.CFV_ANSWER)
"""Roles whose variant text is the question the model saw (the edit to highlight)."""

# ---------------------------------------------------------------- the per-edit rule


def _norm(text: str | None) -> str | None:
    return None if text is None else " ".join(text.split()).casefold()


def derive(role: str, answer: str | None, parse_status: str | None, base_answer: str | None,
           base_status: str | None, item_options: dict | None,
           variant_options: dict | None) -> tuple[str | None, bool | None]:
    """(excluded, flipped) of one answered edit, as `analysis.audit.frames.observations` decides.

    Args:
        role: the job role.
        answer, parse_status: the edited answer's generation.
        base_answer, base_status: the arm's baseline generation.
        item_options: the item's options; variant_options: a shuffle's permuted options.
    """
    if answer is None or parse_status != "ok":
        return "unparsed", None
    if base_answer is None or base_status != "ok":
        return "baseline_unparsed", None
    if role == AuditRole.SHUFFLE:
        shown = variant_options if isinstance(variant_options, dict) else item_options
        after = (shown or {}).get(answer)
        before = (item_options or {}).get(base_answer)
        return None, _norm(after) != _norm(before)
    return None, answer != base_answer


def matched_distributions(before: dict | None, after: dict | None, item_options: dict | None,
                          variant_options: dict | None) -> tuple[list[float], list[float]] | None:
    """The two option distributions as aligned vectors over the baseline's labels.

    A shuffle permutes the labels, so its distribution is matched by option text (the
    probability of the label now showing each original option); otherwise by label.
    None when a distribution is missing or the labels do not match.
    """
    if not isinstance(before, dict) or not isinstance(after, dict) or not before:
        return None
    labels = list(before)
    if isinstance(variant_options, dict) and isinstance(item_options, dict):
        by_text = {_norm(text): label for label, text in variant_options.items()}
        moved = [by_text.get(_norm(item_options.get(label))) for label in labels]
        if any(m is None or m not in after for m in moved):
            return None
        return [float(before[label]) for label in labels], [float(after[m]) for m in moved]
    if set(after) != set(labels):
        return None
    return [float(before[label]) for label in labels], [float(after[label]) for label in labels]


def jsd_many(pairs: Sequence[tuple[list[float], list[float]] | None]) -> list[float | None]:
    """JSD in bits of each aligned pair (`analysis.counterfactual.definitions.js_divergence`,
    Eq. 2 of seed 000), vectorised per number of labels; None where a pair is None."""
    import numpy as np

    from analysis.counterfactual.definitions import js_divergence

    out: list[float | None] = [None] * len(pairs)
    by_k: dict[int, list[int]] = {}
    for n, pair in enumerate(pairs):
        if pair is not None:
            by_k.setdefault(len(pair[0]), []).append(n)
    for rows in by_k.values():
        chosen = [pair for n in rows if (pair := pairs[n]) is not None]  # all of them
        p = np.array([before for before, _ in chosen], dtype=float)
        q = np.array([after for _, after in chosen], dtype=float)
        for n, value in zip(rows, js_divergence(p, q), strict=True):
            out[n] = None if np.isnan(value) else float(value)
    return out


# ---------------------------------------------------------------- the index


PERTURBED_ROLES_SQL = ", ".join(f"'{r}'" for r in PERTURBED_ROLES)
"""The perturbed roles as an SQL list (`role IN (...)`)."""

_PENDING_SQL = f"""
SELECT j.id AS job_id, j.audit_id, j.arm_id, j.item_id, j.variant_id, j.role,
       j.generation_key, v.operator_id, v.family, v.intent, v.old, v.new,
       v.options_json AS v_options, p.id AS generation_id, p.answer, p.parse_status,
       p.option_probs_json AS probs,
       CASE WHEN j.role = 'm_block' AND v.family IN
            ({", ".join(f"'{f}'" for f in JOINT_FAMILIES)}) THEN p.output END AS output
FROM jobs j
LEFT JOIN flip_index fi ON fi.job_id = j.id
JOIN variants v ON v.id = j.variant_id
JOIN generations p ON p.key = j.generation_key AND p.parse_status != 'error'
WHERE j.audit_id = ? AND j.role IN ({PERTURBED_ROLES_SQL}) AND j.status = 'done'
  AND fi.job_id IS NULL
"""

# Baselines and items are read once, not once per edit (an item has ~30 edits per arm).
_BASELINES_SQL = """
SELECT bj.arm_id, bj.item_id, b.id, b.answer, b.parse_status, b.option_probs_json AS probs
FROM jobs bj JOIN generations b ON b.key = bj.generation_key AND b.parse_status != 'error'
WHERE bj.audit_id = ? AND bj.role = 'baseline' AND bj.sample_index = 0 AND bj.status = 'done'
"""

_ITEMS_SQL = """
SELECT id, source_id, options_json FROM items
WHERE id IN (SELECT DISTINCT item_id FROM jobs WHERE audit_id = ?)
"""

_INSERT_SQL = """
INSERT OR IGNORE INTO flip_index (job_id, audit_id, arm_id, item_id, variant_id, role,
    family, operator_id, intent, generation_id, base_generation_id, generation_key, answer,
    base_answer, excluded, flipped, chain_updated, jsd, search)
VALUES (:job_id, :audit_id, :arm_id, :item_id, :variant_id, :role, :family, :operator_id,
    :intent, :generation_id, :base_generation_id, :generation_key, :answer, :base_answer,
    :excluded, :flipped, :chain_updated, :jsd, :search)
"""


def index_flips(db: sqlite_utils.Database, audit_id: int) -> int:
    """Bring the audit's rows of `flip_index` up to date; returns the rows added.

    Cheap when nothing changed (two index-only counts). Otherwise rows whose job is no
    longer done under the same key are dropped, and every done perturbed job whose answer
    and baseline answer are stored (not 'error') and that has no row yet gets one.
    """
    done = db.execute(
        f"SELECT COUNT(*) FROM jobs WHERE audit_id = ? AND role IN ({PERTURBED_ROLES_SQL}) "
        "AND status = 'done'", [audit_id]).fetchone()[0]
    indexed = db.execute("SELECT COUNT(*) FROM flip_index WHERE audit_id = ?",
                         [audit_id]).fetchone()[0]
    if done == indexed:
        return 0
    stale = [r[0] for r in db.execute(
        "SELECT fi.job_id FROM flip_index fi JOIN jobs j ON j.id = fi.job_id "
        "WHERE fi.audit_id = ? AND (j.status != 'done' OR j.generation_key IS NOT "
        "fi.generation_key)", [audit_id])]
    json_cache: dict[str, Any] = {}

    def parsed(text: str | None) -> Any:
        if text is None:
            return None
        if text not in json_cache:
            json_cache[text] = loads(text)
        return json_cache[text]

    baselines = {(r[0], r[1]): r[2:] for r in db.execute(_BASELINES_SQL, [audit_id])}
    items = {r[0]: (r[1], parsed(r[2])) for r in db.execute(_ITEMS_SQL, [audit_id])}
    rows, pairs = [], []
    for r in db.query(_PENDING_SQL, [audit_id]):
        base = baselines.get((r["arm_id"], r["item_id"]))
        if base is None:
            continue  # indexed once the baseline is stored
        source_id, item_options = items[r["item_id"]]
        row, pair = _index_row(r, base, source_id, item_options, parsed)
        rows.append(row)
        pairs.append(pair)
    if not rows and not stale:
        return 0
    for row, value in zip(rows, jsd_many(pairs), strict=True):
        row["jsd"] = value
    with transaction(db) as conn:
        if stale:
            conn.executemany("DELETE FROM flip_index WHERE job_id = ?", [[s] for s in stale])
        conn.executemany(_INSERT_SQL, rows)
    return len(rows)


def _index_row(r: dict, base: tuple, source_id: str, item_options: Any,
               parsed: Any) -> tuple[dict, tuple[list[float], list[float]] | None]:
    base_id, base_answer, base_status, base_probs = base
    variant_options = parsed(r["v_options"])
    excluded, flipped = derive(r["role"], r["answer"], r["parse_status"], base_answer,
                               base_status, item_options, variant_options)
    updated = None
    if r["output"] is not None:
        updated = chain_updated(r["family"], r["output"], r["new"])
    words = " ".join(w for w in (r["operator_id"], r["old"], r["new"], source_id) if w)
    row = {
        "job_id": r["job_id"], "audit_id": r["audit_id"], "arm_id": r["arm_id"],
        "item_id": r["item_id"], "variant_id": r["variant_id"], "role": r["role"],
        "family": r["family"], "operator_id": r["operator_id"], "intent": r["intent"],
        "generation_id": r["generation_id"], "base_generation_id": base_id,
        "generation_key": r["generation_key"], "answer": r["answer"],
        "base_answer": base_answer, "excluded": excluded,
        "flipped": None if flipped is None else int(flipped),
        "chain_updated": None if updated is None else int(updated),
        "search": words.casefold(),
    }
    pair = matched_distributions(parsed(base_probs), loads(r["probs"]), item_options,
                                 variant_options)
    return row, pair
