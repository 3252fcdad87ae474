"""Turning one parsed row into a validated `Item`: the rules every importer shares.

Kinds: an item is `binary` when its answer labels are words (Yes/No, or Yes/No/Maybe as
in PubMedQA) and `mcq` when they are letters A, B, C, ... in order. Labels are
normalised (`yes` -> `Yes`, `b` -> `B`) so the runner always reads the same tokens.
"""

from __future__ import annotations

import math
import re
import string
from typing import Any

from store.records import Item
from workbench.datasets.readers import RowError, shown

BINARY_LABELS = ("Yes", "No", "Maybe")
"""Word labels of binary items, in their canonical spelling."""

MISSING = object()
"""Sentinel for a field absent from the row (distinct from a present null)."""


def missing(field: str) -> RowError:
    """The error for a required field the row does not have."""
    return RowError(field, "a value", "no such field", reason="missing field")


def require(record: dict[str, Any], field: str, name: str | None = None) -> Any:
    """`record[field]`, or a 'missing field' `RowError` (absent and null told apart).

    `name` is how messages call the field (e.g. `context.contexts` for a nested one).
    """
    if field not in record:
        raise missing(name or field)
    if record[field] is None:
        raise RowError(name or field, "a value", "null", reason="missing field")
    return record[field]


def text_of(value: Any, field: str, *, allow_empty: bool = False) -> str:
    """A field as stripped text; numbers become text, anything else is an error.

    NaN and Infinity (which Python's json and pandas accept) are refused: stored they
    would read as the words "nan" and "inf".
    """
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise RowError(field, "text", shown(value))
    if isinstance(value, float) and not math.isfinite(value):
        raise RowError(field, "text or a finite number", shown(value))
    text = str(value).strip()
    if not text and not allow_empty:
        raise RowError(field, "non-empty text", shown(value), reason="missing field")
    return text


_WHOLE = re.compile(r"-?[0-9]{1,9}")


def whole_number(value: Any) -> int | None:
    """An integer written as one (`2`, `"2"`, or pandas' `2.0`), else None.

    Digit strings are matched as ASCII digits of bounded length, so neither a 5,000-digit
    string nor a superscript digit reaches `int()` and fails there.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e9:
        return int(value)
    if isinstance(value, str) and _WHOLE.fullmatch(value.strip()):
        return int(value.strip())
    return None


def id_of(value: Any, field: str) -> str:
    """An item id as text: text or a whole number; a float is refused (`1.0` and `1`
    would be two items, while `1` and `"1"` are one id)."""
    if isinstance(value, float):
        raise RowError(field, "text or a whole number (not a float: 1.0 and 1 would be two "
                       "different ids)", shown(value))
    return text_of(value, field)


def _same_text(text: str) -> str:
    return " ".join(text.split()).casefold()


def options_from_list(values: list[Any], field: str) -> dict[str, str]:
    """Options given as a list: labelled A, B, C, ... in order."""
    if len(values) > len(string.ascii_uppercase):
        raise RowError(field, "at most 26 options", str(len(values)))
    return {string.ascii_uppercase[i]: value for i, value in enumerate(values)}


def _normalise_label(label: str) -> str:
    text = label.strip()
    if text.lower() in {b.lower() for b in BINARY_LABELS}:
        return text.title()
    if len(text) == 1 and text.isalpha():
        return text.upper()
    return text


def make_item(
    *,
    source_id: Any,
    question: Any,
    options: Any,
    gold: Any,
    line: int,
    gold_field: str = "answer",
    options_field: str = "options",
    id_field: str = "id",
    question_field: str = "question",
    kind: Any = None,
    context: Any = None,
    subject: Any = None,
    meta: dict[str, Any] | None = None,
) -> Item:
    """Validate and normalise one question into an `Item`.

    Args:
        source_id: the row's id in its file (text or integer).
        question: the stem.
        options: mapping label -> option text, in display order.
        gold: the correct label as the file writes it.
        line: the 1-based line the row starts on.
        gold_field, options_field, id_field, question_field: the file's names for
            those fields, so errors name the column the user sees.
        kind: the kind the file declares ('mcq' or 'binary'), checked against the labels.
        context: passage text shown before the question (PubMedQA abstracts), or None.
        subject: the item's subject or specialty, or None.
        meta: anything else worth keeping from the row.

    Returns:
        The item (not yet stored: no id, no dataset).

    Raises:
        RowError: naming the field and what was expected.
    """
    ident = id_of(source_id, id_field)
    stem = text_of(question, question_field)
    if not isinstance(options, dict):
        raise RowError(options_field, "an object of label -> option text", shown(options))
    if len(options) < 2:
        raise RowError(options_field, "at least two options", str(len(options)),
                       reason="fewer than two options")
    normalised: dict[str, str] = {}
    seen: dict[str, str] = {}
    for raw_label, raw_text in options.items():
        label = _normalise_label(str(raw_label))
        if label in normalised:
            raise RowError(options_field, "distinct option labels", f"{raw_label!r} twice")
        normalised[label] = text_of(raw_text, f"{options_field}.{raw_label}")
        # A shuffle and a flip "by option text" are undefined when two options read alike
        # (compared ignoring case and runs of white space).
        same = seen.setdefault(_same_text(normalised[label]), label)
        if same != label:
            raise RowError(options_field, "options with different texts (a shuffle and a "
                           "flip by option text need them)",
                           f"{shown(normalised[label])} for both {same} and {label}",
                           reason="identical options")
    labels = list(normalised)
    if set(labels) <= set(BINARY_LABELS) and {"Yes", "No"} <= set(labels):
        inferred = "binary"
    else:
        inferred = "mcq"
        expected = list(string.ascii_uppercase[: len(labels)])
        if labels != expected:
            raise RowError(options_field, f"option labels {', '.join(expected)} "
                           "(or Yes/No[/Maybe])", ", ".join(map(str, options)))
    if kind is not None:
        declared = text_of(kind, "kind").lower()
        if declared != inferred:
            raise RowError("kind", f"{inferred!r} for options {', '.join(labels)}",
                           shown(kind))
    answer = _normalise_label(text_of(gold, gold_field))
    if answer not in normalised:
        raise RowError(gold_field, f"one of {', '.join(labels)}", shown(gold),
                       reason="gold not among options")
    return Item(
        source_id=ident,
        kind=inferred,  # type: ignore[arg-type]
        question=stem,
        options=normalised,
        gold=answer,
        context=None if context is None else text_of(context, "context", allow_empty=True)
        or None,
        subject=None if subject is None else text_of(subject, "subject", allow_empty=True)
        or None,
        meta=dict(meta or {}),
        source_line=line,
    )
