"""The flipped edits of an audit, one page at a time: the list queries of `paw flips` and the
UI's flip inspector (one place, so both show the same rows).

An *edit* is an answered perturbed job (`m_block`, `f_block`, `shuffle`); it *flips* when its
answer differs from its arm's baseline answer (for the shuffle: when the chosen option's text
differs) — the rule of `analysis.audit.frames.observations`, applied per row. What the list filters,
counts and sorts on is kept in the derived table `flip_index` (m007; its upkeep is
`analysis/flips/index.py`), so a filter change is one indexed `COUNT(*)` and one
`LIMIT`/`OFFSET` page over that table, never a load of the audit's chains; a test checks the
index against `observations` and `definitions.chain_updated`. One case is `analysis.flips.case`,
read from the base tables, so it is always current.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from analysis.audit.frames import resolve_audit
from analysis.flips.index import (
    PERTURBED_ROLES_SQL,
    ROLE_BLOCK,
    index_flips,
)
from store.errors import NotFound, UserError

ORDERS: dict[str, str] = {
    "id": "fi.job_id",
    "-id": "fi.job_id DESC",
    "jsd": "fi.jsd DESC NULLS LAST, fi.job_id",
    "family": "fi.family, fi.operator_id, fi.job_id",
    "operator": "fi.operator_id, fi.job_id",
    "item": "fi.item_id, fi.job_id",
    "arm": "fi.arm_id, fi.job_id",
}
"""Sort orders of `list_flips` (each ends on the job id, so pages never overlap)."""

JUDGE_VALUES: tuple[str, ...] = ("yes", "no", "none")
"""Judge-verdict filter values: an LLM judge said yes / said no / no verdict stored."""

_JUDGE_METHODS = "ju.kind = 'chain_registration' AND ju.method LIKE 'llm_judge:%'"
# Without `INDEXED BY` SQLite (no ANALYZE statistics) walks the UNIQUE (kind, method,
# subject) index by kind: every verdict per row, 34 s for a count at 50,000 edits.
_JUDGEMENTS = "judgements ju INDEXED BY idx_judgements_subject"


@dataclass(frozen=True)
class FlipFilter:
    """Which edits to list. Empty tuples and None mean "any".

    Attributes:
        flipped: True: flips only (default); False: edits whose answer was kept; None: every
            answered edit, excluded ones (unparsed answers) included.
        arms: arm labels, arm ids or model names.
        blocks: 'M', 'F', 'shuffle' (seed 002), 'demographic', 'CFV' (seed 003).
        families: operator families ('M4', 'F1', 'shuffle', …).
        operators: operator ids ('M4_negation_a', …).
        intents: 'D' (destructive) and/or 'P' (preserving).
        chain_updated: the token rule's verdict on the post-edit chain (M2/M4/M5 only).
        judge: 'yes', 'no' (some LLM judge's verdict) or 'none' (no verdict stored).
        dataset: dataset name (narrows `list_flips(audit=None)` to that dataset's audits).
        text: free text, case-insensitive, matched against the item id and question, the
            operator id and the edit's words (old, new).
    """

    flipped: bool | None = True
    arms: tuple[str, ...] = ()
    blocks: tuple[str, ...] = ()
    families: tuple[str, ...] = ()
    operators: tuple[str, ...] = ()
    intents: tuple[str, ...] = ()
    chain_updated: bool | None = None
    judge: str | None = None
    dataset: str | None = None
    text: str | None = None


@dataclass(frozen=True)
class FlipRow:
    """One line of the flip list.

    Attributes:
        id: the perturbed job's id (the case id `flip_case` takes).
        audit_id, audit: the audit.
        arm_id, arm, model: the arm (label) and its model's name.
        item_id, item, dataset: the item (its id in the dataset) and the dataset.
        role, block, family, operator_id, intent: what the edit was.
        base_answer, answer: the arm's baseline answer and the answer after the edit.
        flipped: the answer changed (None when excluded).
        excluded: None when usable, else 'unparsed' or 'baseline_unparsed'.
        chain_updated: token-rule verdict (M2/M4/M5), else None.
        judge: LLM-judge verdicts, e.g. ('no',), empty when none is stored.
        jsd: JSD in bits between the option distributions before and after (or None).
        base_text, answer_text: for the option shuffle, the texts of the options chosen
            before and after (its flip is by text: 'A->A' can be a flip); None otherwise.
    """

    id: int
    audit_id: int
    audit: str
    arm_id: int
    arm: str
    model: str
    item_id: int
    item: str
    dataset: str
    role: str
    block: str
    family: str
    operator_id: str
    intent: str | None
    base_answer: str | None
    answer: str | None
    flipped: bool | None
    excluded: str | None
    chain_updated: bool | None
    judge: tuple[str, ...]
    jsd: float | None
    base_text: str | None = None
    answer_text: str | None = None

    def answer_cell(self, arrow: str = "→", width: int = 18, letters: bool = True) -> str:
        """The answer before and after: letters, and for the shuffle the chosen options'
        texts (each cut to `width`; only the texts when `letters` is False), since a
        shuffle flips by text and its letters alone can read 'A→A'."""
        if self.excluded is not None:
            return self.excluded
        pair = f"{self.base_answer or '?'}{arrow}{self.answer or '?'}"
        if self.block != "shuffle" or (self.base_text is None and self.answer_text is None):
            return pair
        texts = f"{_clip(self.base_text, width)}{arrow}{_clip(self.answer_text, width)}"
        return f"{pair} ({texts})" if letters else texts

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {name: (list(value) if isinstance(value, tuple) else value)
                for name, value in self.__dict__.items()}


@dataclass(frozen=True)
class FlipPage:
    """A page of `list_flips`: the rows, the total the filter matches, and where it starts."""

    rows: tuple[FlipRow, ...]
    total: int
    offset: int
    limit: int
    audit_ids: tuple[int, ...] = ()

    @property
    def next_offset(self) -> int | None:
        """Offset of the next page, or None on the last."""
        end = self.offset + len(self.rows)
        return end if end < self.total else None


# ---------------------------------------------------------------- the list


def _audit_ids(db: sqlite_utils.Database, audit: str | int | None,
               dataset: str | None) -> list[int]:
    if audit is not None:
        ids = [int(resolve_audit(db, audit)["id"])]
    else:
        ids = [r[0] for r in db.execute(
            f"SELECT DISTINCT audit_id FROM jobs WHERE role IN ({PERTURBED_ROLES_SQL})")]
    if dataset is not None:
        row = db.execute("SELECT id FROM datasets WHERE name = ?", [dataset]).fetchone()
        if row is None:
            known = ", ".join(r[0] for r in db.execute("SELECT name FROM datasets ORDER BY id"))
            raise NotFound(f"dataset: no dataset named {dataset!r}; known: {known or 'none'}")
        in_dataset = {r[0] for r in db.execute(
            "SELECT id FROM audits WHERE dataset_id = ?", [row[0]])}
        ids = [i for i in ids if i in in_dataset]
    return sorted(ids)


def _arm_ids(db: sqlite_utils.Database, audit_ids: list[int], refs: Iterable[str]) -> list[int]:
    refs = [str(r) for r in refs]
    marks = ", ".join("?" for _ in audit_ids) or "NULL"
    rows = list(db.execute(
        f"SELECT a.id, a.label, m.name FROM arms a JOIN models m ON m.id = a.model_id "
        f"WHERE a.audit_id IN ({marks}) ORDER BY a.id", audit_ids))
    found = [arm_id for arm_id, label, model in rows
             if any(ref in (label, model, str(arm_id)) for ref in refs)]
    missing = [ref for ref in refs if not any(ref in (label, model, str(i))
                                              for i, label, model in rows)]
    if missing:
        known = ", ".join(dict.fromkeys(label for _, label, _ in rows))
        raise NotFound(f"arm: no arm or model {missing[0]!r} in this audit; arms: "
                       f"{known or 'none'}")
    return found


def _in(column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
    return f"{column} IN ({', '.join('?' for _ in values)})", list(values)


def _where(db: sqlite_utils.Database, audit_ids: list[int],
           flt: FlipFilter) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []

    def add(clause: str, values: Sequence[Any] = ()) -> None:
        clauses.append(clause)
        params.extend(values)

    add(*_in("fi.audit_id", audit_ids or [-1]))
    if flt.flipped is not None:
        add("fi.flipped = ?", [int(flt.flipped)])
    if flt.arms:
        add(*_in("fi.arm_id", _arm_ids(db, audit_ids, flt.arms) or [-1]))
    if flt.blocks:
        unknown = [b for b in flt.blocks if b not in ROLE_BLOCK.values()]
        if unknown:
            known = ", ".join(dict.fromkeys(ROLE_BLOCK.values()))
            raise UserError(f"block: expected one of {known}, got {unknown[0]!r}")
        add(*_in("fi.role", [r for r, b in ROLE_BLOCK.items() if b in flt.blocks]))
    if flt.families:
        add(*_in("fi.family", flt.families))
    if flt.operators:
        add(*_in("fi.operator_id", flt.operators))
    if flt.intents:
        add(*_in("fi.intent", [i.upper() for i in flt.intents]))
    if flt.chain_updated is not None:
        add("fi.chain_updated = ?", [int(flt.chain_updated)])
    if flt.judge is not None:
        if flt.judge not in JUDGE_VALUES:
            raise UserError(f"judge: expected yes, no or none, got {flt.judge!r}")
        if flt.judge == "none":
            add(f"NOT EXISTS (SELECT 1 FROM {_JUDGEMENTS} WHERE ju.subject_generation_id = "
                f"fi.generation_id AND {_JUDGE_METHODS})")
        else:
            add(f"EXISTS (SELECT 1 FROM {_JUDGEMENTS} WHERE ju.subject_generation_id = "
                f"fi.generation_id AND {_JUDGE_METHODS} AND ju.verdict = ?)", [flt.judge])
    if flt.text and flt.text.strip():
        escaped = flt.text.strip().casefold().replace("\\", "\\\\").replace(
            "%", "\\%").replace("_", "\\_")
        pattern = f"%{escaped}%"
        marks = ", ".join("?" for _ in audit_ids) or "NULL"
        add("(fi.search LIKE ? ESCAPE '\\' OR fi.item_id IN (SELECT i.id FROM items i "
            f"WHERE i.dataset_id IN (SELECT dataset_id FROM audits WHERE id IN ({marks})) "
            "AND i.question LIKE ? ESCAPE '\\'))", [pattern, *audit_ids, pattern])
    return " AND ".join(clauses), params


_PAGE_SQL = """
SELECT fi.job_id, fi.audit_id, au.name AS audit, fi.arm_id, ar.label AS arm, m.name AS model,
       fi.item_id, i.source_id AS item, d.name AS dataset, fi.role, fi.family,
       fi.operator_id, fi.intent, fi.base_answer, fi.answer, fi.flipped, fi.excluded,
       fi.chain_updated, fi.jsd, fi.generation_id,
       CASE WHEN fi.role = 'shuffle' THEN i.options_json END AS i_options,
       CASE WHEN fi.role = 'shuffle' THEN (SELECT v.options_json FROM jobs jb
            JOIN variants v ON v.id = jb.variant_id WHERE jb.id = fi.job_id) END AS v_options,
       (SELECT group_concat(ju.verdict, ',') FROM {judgements}
        WHERE ju.subject_generation_id = fi.generation_id AND {judge}) AS judge
FROM flip_index fi
JOIN audits au ON au.id = fi.audit_id
JOIN datasets d ON d.id = au.dataset_id
JOIN arms ar ON ar.id = fi.arm_id
JOIN models m ON m.id = ar.model_id
JOIN items i ON i.id = fi.item_id
WHERE fi.job_id IN ({ids})
"""


def list_flips(db: sqlite_utils.Database, audit: str | int | None = None,
               flt: FlipFilter | None = None, limit: int = 50, offset: int = 0,
               order: str = "id") -> FlipPage:
    """One page of an audit's edits matching `flt` (default: its flips), with the total.

    Args:
        db: the store.
        audit: audit name or id (None: every audit with perturbed jobs).
        flt: the filter (default `FlipFilter()`: flipped edits).
        limit: rows per page.
        offset: rows to skip.
        order: a key of `ORDERS` ('id', '-id', 'jsd', 'family', 'operator', 'item', 'arm').

    Raises:
        NotFound: no such audit, dataset or arm (the message lists what exists).
        UserError: an unknown order, block or judge value.
    """
    flt = flt or FlipFilter()
    if order not in ORDERS:
        raise UserError(f"order: expected one of {', '.join(ORDERS)}, got {order!r}")
    if limit < 0 or offset < 0:
        raise UserError("limit/offset: expected numbers >= 0")
    audit_ids = _audit_ids(db, audit, flt.dataset)
    for audit_id in audit_ids:
        index_flips(db, audit_id)
    where, params = _where(db, audit_ids, flt)
    total = db.execute(f"SELECT COUNT(*) FROM flip_index fi WHERE {where}", params).fetchone()[0]
    ids = [r[0] for r in db.execute(
        f"SELECT fi.job_id FROM flip_index fi WHERE {where} ORDER BY {ORDERS[order]} "
        "LIMIT ? OFFSET ?", [*params, limit, offset])]
    rows = {}
    if ids:
        sql = _PAGE_SQL.format(judge=_JUDGE_METHODS, judgements=_JUDGEMENTS,
                               ids=", ".join("?" for _ in ids))
        rows = {r["job_id"]: r for r in db.query(sql, ids)}
    return FlipPage(tuple(_row(rows[i]) for i in ids), int(total), offset, limit,
                    tuple(audit_ids))


def _clip(text: str | None, width: int = 18) -> str:
    if text is None:
        return "?"
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def _option_text(options_json: str | None, label: str | None) -> str | None:
    import json

    if not options_json or label is None:
        return None
    options = json.loads(options_json)
    return str(options[label]) if isinstance(options, dict) and label in options else None


def _bool(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _row(r: dict) -> FlipRow:
    return FlipRow(
        id=r["job_id"], audit_id=r["audit_id"], audit=r["audit"], arm_id=r["arm_id"],
        arm=r["arm"], model=r["model"], item_id=r["item_id"], item=r["item"],
        dataset=r["dataset"], role=r["role"], block=ROLE_BLOCK[r["role"]],
        family=r["family"], operator_id=r["operator_id"], intent=r["intent"],
        base_answer=r["base_answer"], answer=r["answer"], flipped=_bool(r["flipped"]),
        excluded=r["excluded"], chain_updated=_bool(r["chain_updated"]),
        judge=tuple(r["judge"].split(",")) if r["judge"] else (), jsd=r["jsd"],
        base_text=_option_text(r["i_options"], r["base_answer"]),
        answer_text=_option_text(r["v_options"] or r["i_options"], r["answer"]))


def filter_values(db: sqlite_utils.Database, audit: str | int) -> dict[str, list[str]]:
    """What the filters can take for one audit: arms, families, operators, intents (for the
    inspector's selectors and the CLI's error messages)."""
    audit_id = int(resolve_audit(db, audit)["id"])
    index_flips(db, audit_id)
    return {
        "arms": [r[0] for r in db.execute(
            "SELECT label FROM arms WHERE audit_id = ? ORDER BY id", [audit_id])],
        "families": [r[0] for r in db.execute(
            "SELECT DISTINCT family FROM flip_index WHERE audit_id = ? ORDER BY family",
            [audit_id])],
        "operators": [r[0] for r in db.execute(
            "SELECT DISTINCT operator_id FROM flip_index WHERE audit_id = ? "
            "ORDER BY operator_id", [audit_id])],
        "intents": [r[0] for r in db.execute(
            "SELECT DISTINCT intent FROM flip_index WHERE audit_id = ? AND intent IS NOT NULL "
            "ORDER BY intent", [audit_id])],
    }
