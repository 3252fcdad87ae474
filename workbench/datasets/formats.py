"""The benchmark file formats: MedQA, MedMCQA, PubMedQA and MMLU rows -> `Item`s.

Each parser takes one row as a reader yields it and returns an `Item` or raises
`RowError`. Field names, answer conventions and what lands in `meta` are documented
in docs/importing.md; keep the two in step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from store.records import Item
from workbench.datasets.items import make_item, require, text_of, whole_number
from workbench.datasets.readers import RowError, shown


@dataclass(frozen=True)
class Source:
    """Where rows come from: the path shown in messages and the file's stem.

    `unit` precedes a row's number in messages: `""` for text files (the number is the
    line), `"row "` for Parquet (`x.parquet:row 3: …`).
    """

    path: str
    stem: str
    unit: str = ""

    def at(self, line: int) -> str:
        """`path:3` or `path:row 3`: where a row is, as messages name it."""
        return f"{self.path}:{self.unit}{line}"

    def line_id(self, line: int) -> str:
        """Id for formats whose rows carry none: stem and line, unique across files."""
        return f"{self.stem}:{line}"


def _object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RowError("line", "a JSON object", shown(value), reason="invalid JSON")
    return value


def _medqa_options(options: Any) -> Any:
    """Options as `{A: text, …}`; BigBio's `med_qa` source layout writes them as a list of
    `{"key": "A", "value": text}`, which becomes the same mapping.

    Trailing null options are dropped (a Parquet struct of A-E holds `E: null` on a
    4-option row); a null before a filled option stays, and is refused by `make_item`.
    """
    if isinstance(options, dict):
        kept = dict(options)
        while kept and kept[next(reversed(kept))] is None:
            kept.popitem()
        return kept
    if not (isinstance(options, list) and options
            and all(isinstance(o, dict) for o in options)):
        return options
    mapping: dict[str, Any] = {}
    for position, option in enumerate(options):
        if set(option) != {"key", "value"}:
            raise RowError(f"options[{position}]", "an object with key and value",
                           shown(option))
        key = text_of(option["key"], f"options[{position}].key")
        if key in mapping:
            raise RowError("options", "distinct option labels", f"{key!r} twice")
        mapping[key] = option["value"]
    return mapping


def parse_medqa(value: Any, line: int, source: Source) -> Item:
    """MedQA JSONL: `question`, `options` {A..D or A..E}, `answer_idx`, `meta_info`.

    MedQA rows have no id, so the id is `<stem>:<line>` unless the row has an `id`.
    The `answer` text, when present, must be the text of option `answer_idx`.
    """
    record = _object(value)
    options = _medqa_options(require(record, "options"))
    gold = require(record, "answer_idx")
    item = make_item(
        source_id=record.get("id") or source.line_id(line),
        question=require(record, "question"), options=options, gold=gold,
        gold_field="answer_idx", line=line,
        meta={k: record[k] for k in ("meta_info", "metamap_phrases") if k in record},
    )
    if record.get("answer") is not None:
        answer_text = text_of(record["answer"], "answer")
        if answer_text != item.options[item.gold]:
            raise RowError("answer", f"the text of option {item.gold} "
                           f"({shown(item.options[item.gold])})", shown(answer_text))
    return item


MEDMCQA_OPTIONS = {"A": "opa", "B": "opb", "C": "opc", "D": "opd"}
"""MedMCQA option columns and the letters they become."""

def medmcqa_cop(record: dict[str, Any]) -> int | None:
    """A row's `cop` as a number, or None (absent or not a whole number)."""
    return whole_number(record.get("cop"))


def parse_medmcqa(value: Any, line: int, source: Source, first_index: int = 1) -> Item:
    """One MedMCQA row: `cop` counts from `first_index` (1 as released, 0 on the Hub).

    The importer decides `first_index` for a file (see `importers.cop_base`).
    """
    record = _object(value)
    options = {label: text_of(require(record, column), column)
               for label, column in MEDMCQA_OPTIONS.items()}
    cop = require(record, "cop")
    valid = range(first_index, first_index + 4)
    index = whole_number(cop)
    if index is None or index not in valid:
        hint = ""
        if first_index == 1 and index == 0:
            hint = " (a 0-based export? import it as medmcqa0)"
        elif first_index == 0 and index == 4:
            hint = " (a 1-based file? import it as medmcqa1)"
        elif index is not None and index < 0:
            hint = " (the MedMCQA test split has no answers)"
        raise RowError("cop", f"{', '.join(map(str, valid[:-1]))} or {valid[-1]} (the "
                       f"{first_index}-based correct option)", shown(cop) + hint,
                       reason="gold not among options")
    letter = "ABCD"[index - first_index]
    return make_item(
        source_id=require(record, "id"), question=require(record, "question"),
        options=options, gold=letter, gold_field="cop", line=line,
        subject=record.get("subject_name"),
        meta={k: record[k] for k in ("topic_name", "choice_type", "exp") if k in record},
    )


PUBMEDQA_LABELS = {"yes": "Yes", "no": "No", "maybe": "Maybe"}
"""PubMedQA decisions and the answer labels they become."""


def _passages(contexts: Any, field: str) -> str:
    """PubMedQA's abstract sections joined by blank lines (the item's context)."""
    if isinstance(contexts, str):
        contexts = [contexts]
    if not isinstance(contexts, list) or not contexts:
        raise RowError(field, "a non-empty list of passages", shown(contexts),
                       reason="missing field")
    return "\n\n".join(text_of(c, field) for c in contexts)


def _pubmedqa_item(source_id: Any, question: Any, context: str, decision: Any, line: int,
                   meta: dict[str, Any], question_field: str) -> Item:
    decision = text_of(decision, "final_decision")
    if decision.lower() not in PUBMEDQA_LABELS:
        raise RowError("final_decision", "yes, no or maybe", shown(decision),
                       reason="gold not among options")
    return make_item(
        source_id=source_id, question=question, question_field=question_field,
        id_field="pubid" if question_field == "question" else "id",
        options={label: label for label in PUBMEDQA_LABELS.values()},
        gold=PUBMEDQA_LABELS[decision.lower()], gold_field="final_decision", line=line,
        context=context, meta=meta,
    )


def parse_pubmedqa(value: Any, line: int, source: Source) -> Item:
    """One PubMedQA question, in either of its two published forms.

    - an `ori_pqal.json` entry: `(pmid, {QUESTION, CONTEXTS, final_decision, ...})`;
    - a Hub row (`qiaojin/PubMedQA`, Parquet or JSON lines): `{pubid, question,
      context: {contexts, labels, meshes}, long_answer, final_decision}`.

    Every item gets the three options Yes / No / Maybe (PubMedQA is scored three-way);
    the abstract's sections are joined into the item's context; the rest goes to `meta`
    under the same lower-case keys in both forms.
    """
    if isinstance(value, tuple):
        pmid, entry = value
        record = _object(entry)
        return _pubmedqa_item(
            pmid, require(record, "QUESTION"),
            _passages(require(record, "CONTEXTS"), "CONTEXTS"),
            require(record, "final_decision"), line,
            {k.lower(): record[k] for k in ("LABELS", "MESHES", "YEAR", "LONG_ANSWER",
                                             "reasoning_required_pred",
                                             "reasoning_free_pred") if k in record},
            "QUESTION")
    record = _object(value)
    context = require(record, "context")
    if not isinstance(context, dict):
        raise RowError("context", "an object {contexts, labels, meshes} (the Hub's "
                       "layout)", shown(context))
    passages = _passages(require(context, "contexts", "context.contexts"),
                         "context.contexts")
    meta = {k: v for k, v in context.items() if k != "contexts"}
    meta.update({k: v for k, v in record.items()
                 if k not in {"pubid", "question", "context", "final_decision"}})
    return _pubmedqa_item(require(record, "pubid"), require(record, "question"), passages,
                          require(record, "final_decision"), line, meta, "question")


_MMLU_SPLIT = re.compile(r"_(test|dev|val|validation|train)$")


def parse_mmlu(value: Any, line: int, source: Source) -> Item:
    """MMLU CSV row (no header): question, A, B, C, D, answer letter.

    The subject is the file name without its split (`clinical_knowledge_test.csv` ->
    `clinical_knowledge`); the id is `<stem>:<line>`, so several subject files can share
    one dataset.
    """
    cells = list(value)
    if len(cells) != 6:
        raise RowError("line", "6 cells (question, A, B, C, D, answer)", str(len(cells)),
                       reason="missing field" if len(cells) < 6 else "invalid value")
    question, *options, answer = cells
    return make_item(
        source_id=source.line_id(line), question=question,
        options=dict(zip("ABCD", options, strict=True)), gold=answer, gold_field="answer",
        line=line,
        subject=_MMLU_SPLIT.sub("", source.stem),
    )
