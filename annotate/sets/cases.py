"""Blinded case views: what a rater may see of one annotation case, and nothing more.

Blinding is by construction: `CaseView` has no field that could hold a model name, arm,
prompt template, operator, stratum, another rater's label or an agreement figure, and the
model's own text is scrubbed of its model and arm names before it is put in one.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

import sqlite_utils

from analysis.common.textdiff import (
    Span,
    segments_of,
    spans_of,
    word_opcodes,
)
from annotate.codebook import FIELDS, applicable_fields, robustness_test
from annotate.labels import current_labels, labels_by_case
from annotate.trust.identity import Person, require
from store.db import loads
from store.errors import NotFound, UserError


@dataclass(frozen=True)
class CaseView:
    """One case as a rater sees it (blinded).

    Attributes:
        code: opaque case code (reveals nothing about model, operator or stratum).
        set_name: the annotation set.
        position: 1-based place in this rater's own order (0 if not in their queue).
        total: number of cases in the set.
        kind: 'mcq' or 'binary'.
        context: passage shown before the question, if any.
        question: the original question.
        edited_question: the question as the model saw it after the edit.
        original_spans: ranges of `question` that the edit removed or replaced.
        edited_spans: ranges of `edited_question` that the edit inserted (to highlight).
        segments: both questions interleaved as (kind, text) runs, kind 'same', 'removed'
            or 'inserted' (one inline diff: the edited question with the removed words
            kept, struck through, where they were).
        options: (label, text) pairs in display order.
        gold: the gold label of the original question.
        flipped: True when the model's answer changed after the edit.
        answer_before: the model's answer to the original question (only when flipped).
        answer_after: the model's answer to the edited question (only when flipped).
        chain_after: the model's reasoning after the edit (only for chain-registration cases).
        ask_harm: the harm question applies.
        ask_chain_registration: the chain-registration question applies.
        fields: fields asked, in order, given this rater's own current labels.
        my_labels: this rater's own current labels as (field, value) pairs.
    """

    code: str
    set_name: str
    position: int
    total: int
    kind: str
    context: str | None
    question: str
    edited_question: str
    original_spans: tuple[Span, ...]
    edited_spans: tuple[Span, ...]
    segments: tuple[tuple[str, str], ...]
    options: tuple[tuple[str, str], ...]
    gold: str
    flipped: bool
    answer_before: str | None
    answer_after: str | None
    chain_after: str | None
    ask_harm: bool
    ask_chain_registration: bool
    fields: tuple[str, ...]
    my_labels: tuple[tuple[str, str], ...]

    @property
    def options_dict(self) -> dict[str, str]:
        """`options` as a label -> text dict (display order kept)."""
        return dict(self.options)

    @property
    def labels_dict(self) -> dict[str, str]:
        """`my_labels` as a field -> value dict."""
        return dict(self.my_labels)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict of every attribute (what the blinding tests inspect)."""
        return asdict(self)


_WORD_LABEL_ORDER = ("Yes", "No", "Maybe")
"""Display order of word answer labels (workbench.datasets.items.BINARY_LABELS; the store's
canonical JSON sorts keys, which would put No before Yes)."""


def display_order(options: dict) -> tuple[tuple[str, str], ...]:
    """Options as (label, text) pairs in reading order: Yes / No / Maybe for word labels,
    stored order (A, B, C, ...) otherwise."""
    pairs = [(str(k), str(v)) for k, v in options.items()]
    if pairs and all(label in _WORD_LABEL_ORDER for label, _ in pairs):
        pairs.sort(key=lambda pair: _WORD_LABEL_ORDER.index(pair[0]))
    return tuple(pairs)


def scrub(text: str | None, names: list[str]) -> str | None:
    """Replace any of `names` (case-insensitive, longest first) in `text` by '[model]'."""
    if not text:
        return text
    for name in sorted({n for n in names if n and len(n) >= 3}, key=len, reverse=True):
        text = re.sub(re.escape(name), "[model]", text, flags=re.IGNORECASE)
    return text


_CASE_SQL = """
SELECT c.id, c.code, c.set_id, s.name AS set_name, c.ask_harm, c.ask_chain_registration,
       c.stratum, i.kind, i.question, i.context, i.options_json, i.gold,
       v.text AS edited, v.options_json AS variant_options, v.gold AS variant_gold,
       b.answer AS answer_before, p.answer AS answer_after, p.output AS chain_after
FROM annotation_cases c
JOIN annotation_sets s ON s.id = c.set_id
JOIN variants v ON v.id = c.variant_id
JOIN items i ON i.id = v.item_id
LEFT JOIN generations b ON b.id = c.baseline_generation_id
LEFT JOIN generations p ON p.id = c.perturbed_generation_id
WHERE c.code = ?
"""


def _identity_names(db: sqlite_utils.Database) -> list[str]:
    """Every name that could identify a model of the store: model names and their parts,
    file names, arm labels and prompt templates (all models, not only the case's own, since
    a chain may name another model)."""
    names: list[str] = []
    for name, path in db.execute("SELECT name, path FROM models"):
        names += [name, *re.split(r"[/\\]", path or "")[-1:]]
        names += re.split(r"[-_/ .:]", name)  # 'qwen2.5-7b' -> also 'qwen2'
    for label, template in db.execute("SELECT label, template FROM arms"):
        names += [label, *label.split("/"), template]
    # Generic words would blank ordinary text: keep only tokens that look like names.
    return [n for n in names if n and not n.isdigit() and n.lower() not in _GENERIC]


_GENERIC = {"cot", "direct", "gguf", "q4", "q8", "instruct", "chat", "base", "the", "and",
            "model", "answer", "default"}


def get_case_view(db: sqlite_utils.Database, code: str, person: Person) -> CaseView:
    """The blinded view of case `code` for `person` (their own labels only).

    Args:
        db: the store.
        code: opaque case code.
        person: an authenticated person.

    Raises:
        NotFound: no case with that code.
        UserError: `person` is not authenticated.
    """
    require(person)
    rows = list(db.query(_CASE_SQL, [code]))
    if not rows:
        raise NotFound(f"case: no annotation case with code {code!r}")
    row = rows[0]
    return _view(db, row, person, current_labels(db, person, code))


def _view(db: sqlite_utils.Database, row: dict, person: Person | None,
          labels: dict[str, str], *, position: int | None = None, total: int | None = None,
          names: list[str] | None = None) -> CaseView:
    """Build a view; `position`, `total` and `names` are looked up unless given (batches
    pass them in so a whole queue costs one query, not three per case)."""
    if position is None and person is not None:
        position_row = db.execute(
            "SELECT position FROM annotation_orders WHERE set_id = ? AND person_id = ? "
            "AND case_id = ?", [row["set_id"], person.id, row["id"]]).fetchone()
        position = int(position_row[0]) + 1 if position_row else 0
    if total is None:
        total = db.execute("SELECT COUNT(*) FROM annotation_cases WHERE set_id = ?",
                           [row["set_id"]]).fetchone()[0]
    question = row["question"]
    edited = row["edited"] if row["edited"] is not None else question
    diff = word_opcodes(question, edited)  # one diff for the spans and the segments
    old_spans, new_spans = spans_of(*diff)
    options = loads(row["variant_options"]) or loads(row["options_json"]) or {}
    before, after = row["answer_before"], row["answer_after"]
    flipped = before is not None and after is not None and before != after
    chain = None
    fields = applicable_fields(row, labels)
    # The reasoning is shown when a field asked needs it (chain registration; seed 003's
    # stereotype evidence); the stratum only picks the fields and is never put in the view.
    if row["ask_chain_registration"] or any("chain" in FIELDS[f].needs for f in fields):
        chain = scrub(row["chain_after"], names if names is not None else _identity_names(db))
    return CaseView(
        code=row["code"], set_name=row["set_name"], position=position or 0, total=int(total),
        kind=row["kind"], context=row["context"], question=question, edited_question=edited,
        original_spans=old_spans, edited_spans=new_spans,
        segments=segments_of(question, edited, *diff),
        options=display_order(options),
        gold=row["variant_gold"] or row["gold"],
        flipped=flipped, answer_before=before if flipped else None,
        answer_after=after if flipped else None, chain_after=chain,
        ask_harm=bool(row["ask_harm"]),
        ask_chain_registration=bool(row["ask_chain_registration"]),
        fields=fields,
        my_labels=tuple((f, v) for f, v in labels.items()),
    )


def shown_case(db: sqlite_utils.Database, code: str, coordinator: Person) -> CaseView:
    """Case `code` exactly as its raters were shown it, for the coordinator's adjudication.

    The same texts, spans, options, answers and scrubbed reasoning as a rater's view;
    no labels (the adjudication screen shows both raters' labels beside it).

    Raises:
        NotFound: no such case.
        UserError: `coordinator` is not an authenticated coordinator.
    """
    require(coordinator, "coordinator")
    rows = list(db.query(_CASE_SQL, [code]))
    if not rows:
        raise NotFound(f"case: no annotation case with code {code!r}")
    return _view(db, rows[0], None, {}, position=0)


def case_row(db: sqlite_utils.Database, code: str) -> dict:
    """The unblinded `annotation_cases` row of `code` plus the options and gold (internal).

    Raises:
        NotFound: no such case.
    """
    rows = list(db.query(
        "SELECT c.*, s.name AS set_name, i.options_json, COALESCE(v.gold, i.gold) AS gold, "
        "v.options_json AS variant_options FROM annotation_cases c "
        "JOIN annotation_sets s ON s.id = c.set_id "
        "JOIN variants v ON v.id = c.variant_id JOIN items i ON i.id = v.item_id "
        "WHERE c.code = ?", [code]))
    if not rows:
        raise NotFound(f"case: no annotation case with code {code!r}")
    row = rows[0]
    row["options"] = loads(row["variant_options"]) or loads(row["options_json"]) or {}
    return row


def views_in_order(db: sqlite_utils.Database, set_id: int, person: Person) -> list[CaseView]:
    """Every case of a set in `person`'s own order (the order must already exist).

    One query for the whole queue: opening a set of thousands of cases stays fast.
    """
    rows = list(db.query(
        _CASE_SQL.replace("WHERE c.code = ?", "") +
        "JOIN annotation_orders o ON o.case_id = c.id AND o.set_id = c.set_id "
        "WHERE o.set_id = ? AND o.person_id = ? ORDER BY o.position", [set_id, person.id]))
    mine = labels_by_case(db, person, set_id)
    total = db.execute("SELECT COUNT(*) FROM annotation_cases WHERE set_id = ?",
                       [set_id]).fetchone()[0]
    names = (_identity_names(db) if any(r["ask_chain_registration"] or robustness_test(r)
                                        for r in rows) else [])
    views = [_view(db, row, person, mine.get(row["code"], {}), position=at + 1, total=total,
                   names=names) for at, row in enumerate(rows)]
    if not views and total:
        raise UserError("internal: rater order missing; call sets.rater_queue")
    return views
