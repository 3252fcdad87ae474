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
from workbench.datasets.items import make_item, require, text_of
from workbench.datasets.readers import RowError, shown


@dataclass(frozen=True)
class Source:
    """Where rows come from: the path shown in messages and the file's stem."""

    path: str
    stem: str

    def line_id(self, line: int) -> str:
        """Id for formats whose rows carry none: stem and line, unique across files."""
        return f"{self.stem}:{line}"


def _object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RowError("line", "a JSON object", shown(value), reason="invalid JSON")
    return value


def parse_medqa(value: Any, line: int, source: Source) -> Item:
    """MedQA JSONL: `question`, `options` {A..D or A..E}, `answer_idx`, `meta_info`.

    MedQA rows have no id, so the id is `<stem>:<line>` unless the row has an `id`.
    The `answer` text, when present, must be the text of option `answer_idx`.
    """
    record = _object(value)
    options = require(record, "options")
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


def _medmcqa(value: Any, line: int, first_index: int) -> Item:
    record = _object(value)
    options = {label: text_of(require(record, column), column)
               for label, column in MEDMCQA_OPTIONS.items()}
    cop = require(record, "cop")
    valid = range(first_index, first_index + 4)
    index: int | None = None
    if isinstance(cop, int) and not isinstance(cop, bool):
        index = cop
    elif isinstance(cop, str) and cop.strip().lstrip("-").isdigit():
        index = int(cop)
    if index is None or index not in valid:
        hint = ""
        if first_index == 1 and index == 0:
            hint = " (a 0-based export? import it as medmcqa0)"
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


def parse_medmcqa(value: Any, line: int, source: Source) -> Item:
    """MedMCQA JSON lines as officially released: `cop` is 1-based (1 = `opa`)."""
    return _medmcqa(value, line, first_index=1)


def parse_medmcqa0(value: Any, line: int, source: Source) -> Item:
    """MedMCQA rows exported from the Hugging Face copy, where `cop` is 0-based."""
    return _medmcqa(value, line, first_index=0)


PUBMEDQA_LABELS = {"yes": "Yes", "no": "No", "maybe": "Maybe"}
"""PubMedQA decisions and the answer labels they become."""


def parse_pubmedqa(value: Any, line: int, source: Source) -> Item:
    """One `ori_pqal.json` entry: `(pmid, {QUESTION, CONTEXTS, final_decision, ...})`.

    Every item gets the three options Yes / No / Maybe (PubMedQA is scored three-way);
    the abstract's `CONTEXTS` are joined into the item's context.
    """
    pmid, entry = value
    record = _object(entry)
    contexts = require(record, "CONTEXTS")
    if isinstance(contexts, str):
        contexts = [contexts]
    if not isinstance(contexts, list) or not contexts:
        raise RowError("CONTEXTS", "a non-empty list of passages", shown(contexts),
                       reason="missing field")
    decision = text_of(require(record, "final_decision"), "final_decision")
    if decision.lower() not in PUBMEDQA_LABELS:
        raise RowError("final_decision", "yes, no or maybe", shown(decision),
                       reason="gold not among options")
    return make_item(
        source_id=pmid, question=require(record, "QUESTION"),
        options={label: label for label in PUBMEDQA_LABELS.values()},
        gold=PUBMEDQA_LABELS[decision.lower()], gold_field="final_decision", line=line,
        context="\n\n".join(text_of(c, "CONTEXTS") for c in contexts),
        meta={k.lower(): record[k] for k in ("LABELS", "MESHES", "YEAR", "LONG_ANSWER",
                                              "reasoning_required_pred",
                                              "reasoning_free_pred") if k in record},
    )


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
