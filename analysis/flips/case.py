"""One flipped edit, side by side: what `paw flips show` and the flip inspector's detail pane
show (the original and edited question and chain with the edit's spans, the answers and the
option probabilities before and after), read from the base tables so it is always current."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlite_utils

from analysis.audit.coherence import edited_chain_source
from analysis.audit.definitions import JOINT_FAMILIES, AuditRole, chain_updated
from analysis.common.textdiff import Span, edit_spans
from analysis.flips.index import (
    PERTURBED_ROLES,
    QUESTION_EDIT_ROLES,
    ROLE_BLOCK,
    derive,
    jsd_many,
    matched_distributions,
)
from analysis.robustness.definitions import KIND_CFV, KIND_DIRECTION, KIND_FLAGS, RobustnessRole
from store.db import loads
from store.errors import NotFound


@dataclass(frozen=True)
class FlipCase:
    """Everything one case shows (`paw flips show`, the inspector's detail pane).

    Texts are as stored; spans are half-open character ranges into them (word diff of the
    original and the edited text, `analysis.common.textdiff.edit_spans`). Option lists are
    (label, text) in stored order; distributions are (label, probability) in the same order.

    Attributes:
        id, status: the perturbed job and its status ('done', 'pending', 'not_fired', …).
        audit_id, audit, arm_id, arm, model, dataset, item_id, item: where it belongs.
        role, block, operator_id, family, intent, locus, variant_id, fired, reason: the edit.
        old, new: the operator's recorded (old, new) diff.
        kind, context: the item's kind ('mcq'/'binary') and passage.
        question, edited_question: before and after (the same text for F-block and shuffle;
            a seed-003 edit: the prefixed, substituted or CFV-changed question).
        question_spans: (removed spans of `question`, inserted spans of `edited_question`).
        options_before, options_after: the options (after: permuted by a shuffle).
        gold_before, gold_after: the gold label before and after (remapped by a shuffle; a
            CFV change: its prespecified target, the answer the change is meant to have).
        base_answer, answer: parsed answers; base_text, answer_text: their options' texts.
        flipped, excluded: as in `FlipRow` (None/'not_generated' when not answered yet).
        probs_before, probs_after: the option distributions, in option order.
        jsd: their JSD in bits (a shuffle's matched by option text).
        chain_updated: the token rule on the post-edit chain (M2/M4/M5), else None.
        judge: (method, verdict) of every LLM verdict on the edit: chain registration
            (seed 002); for a seed-003 edit the direction and stereotype-flags verdicts (a
            prefixed answer) or the CFV plausible/limited verdict (its proposal). The method
            names the rubric (`llm_judge:<model>|<rubric>|max_tokens=<n>`).
        baseline_output: the arm's full baseline chain (its answer to the original).
        original_chain, edited_chain, chain_spans: F-block only — the baseline chain the
            operator edited (final answer stripped), the edited chain the model continued
            from, and their diff spans.
        output: the model's text after the edit (M-block/shuffle: its new chain; F-block:
            the continuation of the edited chain).
        generation_id, base_generation_id: the two generations (None if missing).
    """

    id: int
    status: str
    audit_id: int
    audit: str
    arm_id: int
    arm: str
    model: str
    dataset: str
    item_id: int
    item: str
    role: str
    block: str
    operator_id: str
    family: str
    intent: str | None
    locus: str | None
    variant_id: int
    fired: bool
    reason: str | None
    old: str | None
    new: str | None
    kind: str
    context: str | None
    question: str
    edited_question: str
    question_spans: tuple[tuple[Span, ...], tuple[Span, ...]]
    options_before: tuple[tuple[str, str], ...]
    options_after: tuple[tuple[str, str], ...]
    gold_before: str
    gold_after: str
    base_answer: str | None
    answer: str | None
    base_text: str | None
    answer_text: str | None
    flipped: bool | None
    excluded: str | None
    probs_before: tuple[tuple[str, float], ...]
    probs_after: tuple[tuple[str, float], ...]
    jsd: float | None
    chain_updated: bool | None
    judge: tuple[tuple[str, str | None], ...]
    baseline_output: str | None
    original_chain: str | None
    edited_chain: str | None
    chain_spans: tuple[tuple[Span, ...], tuple[Span, ...]] = field(default=((), ()))
    output: str | None = None
    generation_id: int | None = None
    base_generation_id: int | None = None
    incoherent: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (tuples as lists)."""
        def plain(value: Any) -> Any:
            if isinstance(value, tuple):
                return [plain(v) for v in value]
            return value
        return {name: plain(value) for name, value in self.__dict__.items()}


_CASE_SQL = """
SELECT j.id, j.status, j.role, j.audit_id, au.name AS audit, j.arm_id, ar.label AS arm,
       m.name AS model, d.name AS dataset, j.item_id, i.source_id AS item, i.kind, i.context,
       i.question, i.options_json AS i_options, i.gold, j.variant_id, v.operator_id,
       v.family, v.intent, v.locus, v.fired, v.reason, v.text AS v_text,
       v.options_json AS v_options, v.gold AS v_gold, v.old, v.new,
       v.details_json, v.source_generation_id,
       p.id AS generation_id, p.answer, p.parse_status, p.option_probs_json AS probs,
       p.output
FROM jobs j
JOIN audits au ON au.id = j.audit_id
JOIN datasets d ON d.id = au.dataset_id
JOIN arms ar ON ar.id = j.arm_id
JOIN models m ON m.id = ar.model_id
JOIN items i ON i.id = j.item_id
JOIN variants v ON v.id = j.variant_id
LEFT JOIN generations p ON p.key = j.generation_key AND p.parse_status != 'error'
WHERE j.id = ?
"""

_BASE_SQL = """
SELECT b.id, b.answer, b.parse_status, b.option_probs_json AS probs, b.output
FROM jobs bj JOIN generations b ON b.key = bj.generation_key AND b.parse_status != 'error'
WHERE bj.audit_id = ? AND bj.arm_id = ? AND bj.item_id = ? AND bj.role = 'baseline'
  AND bj.sample_index = 0 AND bj.status = 'done'
"""


def flip_case(db: sqlite_utils.Database, case_id: int | str) -> FlipCase:
    """Everything one edit shows, read from the base tables (always current).

    Args:
        db: the store.
        case_id: the perturbed job's id (`FlipRow.id`).

    Raises:
        NotFound: no perturbed job with that id.
    """
    text = str(case_id).strip()
    row = next(iter(db.query(_CASE_SQL, [int(text)])), None) if text.isdigit() else None
    if row is None or row["role"] not in PERTURBED_ROLES:
        raise NotFound(f"case: no edit with id {text!r} (ids are the first column of "
                       "`paw flips`)")
    base = next(iter(db.query(_BASE_SQL, [row["audit_id"], row["arm_id"], row["item_id"]])),
                None)
    item_options = loads(row["i_options"]) or {}
    variant_options = loads(row["v_options"])
    excluded: str | None
    if row["generation_id"] is None:
        excluded, flipped = ("not_fired" if not row["fired"] else "not_generated"), None
    elif base is None:
        excluded, flipped = "baseline_unparsed", None
    else:
        excluded, flipped = derive(row["role"], row["answer"], row["parse_status"],
                                   base["answer"], base["parse_status"], item_options,
                                   variant_options)
    before = loads(base["probs"]) if base else None
    after = loads(row["probs"])
    pair = matched_distributions(before, after, item_options, variant_options)
    jsd = jsd_many([pair])[0]
    options_after = variant_options if isinstance(variant_options, dict) else item_options
    question = row["question"]
    edited = row["v_text"] if row["role"] in QUESTION_EDIT_ROLES and row["v_text"] else question
    original_chain = edited_chain = None
    chain_spans: tuple[tuple[Span, ...], tuple[Span, ...]] = ((), ())
    if row["role"] == AuditRole.F_BLOCK:
        source = db.execute("SELECT output FROM generations WHERE id = ?",
                            [row["source_generation_id"]]).fetchone()
        source_text = (source[0] if source else None) or ""
        original_chain = edited_chain_source(source_text, row["details_json"])
        edited_chain = row["v_text"]
        if edited_chain is not None:
            chain_spans = edit_spans(original_chain, edited_chain)
    updated = None
    if row["role"] == AuditRole.M_BLOCK and row["family"] in JOINT_FAMILIES and row["output"]:
        updated = chain_updated(row["family"], row["output"], row["new"])
    verdicts = tuple((r[0], r[1]) for r in db.execute(
        "SELECT method, verdict FROM judgements WHERE subject_generation_id = ? "
        "AND kind = 'chain_registration' ORDER BY id", [row["generation_id"] or -1]))
    verdicts += _robustness_verdicts(db, row)
    return FlipCase(
        id=row["id"], status=row["status"], audit_id=row["audit_id"], audit=row["audit"],
        arm_id=row["arm_id"], arm=row["arm"], model=row["model"], dataset=row["dataset"],
        item_id=row["item_id"], item=row["item"], role=row["role"],
        block=ROLE_BLOCK[row["role"]], operator_id=row["operator_id"], family=row["family"],
        intent=row["intent"], locus=row["locus"], variant_id=row["variant_id"],
        fired=bool(row["fired"]), reason=row["reason"], old=row["old"], new=row["new"],
        kind=row["kind"], context=row["context"], question=question, edited_question=edited,
        question_spans=edit_spans(question, edited),
        options_before=tuple((str(k), str(v)) for k, v in item_options.items()),
        options_after=tuple((str(k), str(v)) for k, v in (options_after or {}).items()),
        gold_before=row["gold"], gold_after=row["v_gold"] or row["gold"],
        base_answer=base["answer"] if base else None, answer=row["answer"],
        base_text=item_options.get(base["answer"]) if base and base["answer"] else None,
        answer_text=(options_after or {}).get(row["answer"]) if row["answer"] else None,
        flipped=flipped, excluded=excluded,
        probs_before=_ordered(before, item_options),
        probs_after=_ordered(after, options_after or {}),
        jsd=jsd, chain_updated=updated, judge=verdicts,
        baseline_output=base["output"] if base else None,
        original_chain=original_chain, edited_chain=edited_chain, chain_spans=chain_spans,
        output=row["output"], generation_id=row["generation_id"],
        base_generation_id=base["id"] if base else None,
        incoherent=edit_incoherence(row["role"], row["fired"], question, row["v_text"],
                                    row["new"], original_chain))


def edit_incoherence(role: str, fired: Any, question: str, v_text: str | None,
                     new: str | None, original_chain: str | None) -> tuple[str, ...]:
    """The coherence checks (`analysis.audit.coherence.CHECKS`) a fired question or chain
    edit fails, each only when the edit brought the incoherence in: what the case view and
    the flip list (`incoherence`) both show for one edit."""
    from analysis.audit.coherence import flags

    if not fired or not v_text:
        return ()
    if role == AuditRole.F_BLOCK:
        return () if original_chain is None else tuple(flags(original_chain, v_text, new))
    if role in QUESTION_EDIT_ROLES:
        return tuple(flags(question, v_text, new))
    return ()


_COHERENCE_SQL = """
SELECT j.id, j.role, j.variant_id, v.fired, v.text AS v_text, v.new, v.details_json,
       i.question,
       CASE WHEN j.role = 'f_block' THEN (SELECT g.output FROM generations g
            WHERE g.id = v.source_generation_id) END AS source
FROM jobs j
JOIN variants v ON v.id = j.variant_id
JOIN items i ON i.id = j.item_id
WHERE j.id IN ({ids})
"""


def incoherence(db: sqlite_utils.Database, job_ids: list[int]) -> dict[int, tuple[str, ...]]:
    """Job id → the coherence checks its edit fails, for a page of the flip list: one query
    for the page's rows (a few regular expressions per edit, never the whole audit)."""
    out: dict[int, tuple[str, ...]] = {}
    by_variant: dict[int, tuple[str, ...]] = {}  # the arms answering one edit share it
    for start in range(0, len(job_ids), 500):
        chunk = job_ids[start:start + 500]
        sql = _COHERENCE_SQL.format(ids=", ".join("?" for _ in chunk))
        for r in db.query(sql, chunk):
            variant = int(r["variant_id"])
            if variant not in by_variant:
                original_chain = (edited_chain_source(r["source"], r["details_json"])
                                  if r["role"] == AuditRole.F_BLOCK else None)
                by_variant[variant] = edit_incoherence(r["role"], r["fired"], r["question"],
                                                       r["v_text"], r["new"], original_chain)
            out[int(r["id"])] = by_variant[variant]
    return out


def _robustness_verdicts(db: sqlite_utils.Database, row: dict) -> tuple[tuple[str, str], ...]:
    """The seed-003 judge's verdicts on this edit, as (method, verdict): a prefixed answer's
    direction and stereotype flags (its own judgements, by subject), a CFV change's
    plausible/limited verdict (on the proposal the change came from)."""
    kinds: tuple[str, ...]
    if row["role"] == RobustnessRole.CFV_ANSWER:
        subject, kinds = row["source_generation_id"], (KIND_CFV,)
    elif row["role"] in QUESTION_EDIT_ROLES and row["role"] != AuditRole.M_BLOCK:
        subject, kinds = row["generation_id"], (KIND_DIRECTION, KIND_FLAGS)
    else:
        return ()
    return tuple((r[0], r[1]) for r in db.execute(
        f"SELECT method, verdict FROM judgements WHERE subject_generation_id = ? AND kind IN "
        f"({', '.join('?' for _ in kinds)}) ORDER BY kind, id", [subject or -1, *kinds]))


def _ordered(probs: Any, options: dict) -> tuple[tuple[str, float], ...]:
    if not isinstance(probs, dict):
        return ()
    labels = [label for label in options if label in probs]
    labels += [label for label in probs if label not in labels]
    return tuple((str(label), float(probs[label])) for label in labels)
