"""Generic JSONL/Parquet/CSV import: a column mapping from the file's fields to an item's.

The defaults read PAW's own format (the demo set's), so `paw import jsonl FILE` needs no
mapping for it. A field name may be a dotted path into nested objects
(`"context.contexts"`); a key that itself holds a dot is matched whole first.
docs/importing.md documents every key with examples.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from store.errors import UserError
from store.records import Item
from workbench.datasets.formats import Source
from workbench.datasets.items import (
    MISSING, make_item, options_from_list, text_of, whole_number,
)
from workbench.datasets.readers import RowError, json_error, shown

ANSWER_FORMATS = ("label", "index0", "index1", "text")
"""How the answer column names the correct option: its label, 0- or 1-based position,
or its exact text."""

OptionsSpec = str | list[str] | dict[str, str] | None


@dataclass(frozen=True)
class Mapping:
    """Which field of a row holds each part of an item (a `--map` value)."""

    id: str | None = "id"
    question: str = "question"
    options: OptionsSpec = "options"
    answer: str = "answer"
    answer_format: str = "label"
    fixed_options: tuple[str, ...] | None = None
    kind: str | None = "kind"
    subject: str | None = "subject"
    context: str | list[str] | None = "context"
    explicit: frozenset[str] = field(default=frozenset())
    """Keys the user set; their fields are required, unlike the optional defaults."""

    def columns(self) -> set[str]:
        """Every field name the mapping reads (the rest of a row goes to `meta`)."""
        used: set[str] = set()
        for value in (self.id, self.question, self.answer, self.kind, self.subject):
            if value is not None:
                used.add(value)
        for spec in (self.options, self.context):
            if isinstance(spec, str):
                used.add(spec)
            elif isinstance(spec, list):
                used.update(spec)
            elif isinstance(spec, dict):
                used.update(spec.values())
        return used

    def required_columns(self) -> set[str]:
        """Fields every row must have (optional defaults such as `subject` excluded)."""
        optional = {k for k in ("kind", "subject", "context") if k not in self.explicit}
        optional_columns = {getattr(self, k) for k in optional} - {None}
        return {c for c in self.columns() if c not in optional_columns}


_KEYS = {"id", "question", "options", "answer", "answer_format", "fixed_options", "kind",
         "subject", "context"}


def parse_mapping(text: str, origin: str = "--map") -> Mapping:
    """Read a mapping from JSON text.

    Args:
        text: a JSON object, e.g. `{"id": "qid", "options": ["opA", "opB"]}`.
        origin: where it came from (`--map` or the mapping file), for messages.

    Raises:
        UserError: not a JSON object, an unknown key, or a value of the wrong shape.
    """
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{origin}: expected a JSON object, got invalid JSON "
                        f"({json_error(exc, line=True)})") from None
    if not isinstance(raw, dict):
        raise UserError(f"{origin}: expected a JSON object, got {shown(raw)}")
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise UserError(f"{origin}: {unknown[0]}: expected one of the keys "
                        f"{', '.join(sorted(_KEYS))}, got {unknown[0]!r}")

    def need(key: str, ok: bool, expected: str) -> None:
        if not ok:
            raise UserError(f"{origin}: {key}: expected {expected}, got {shown(raw[key])}")

    for key in ("question", "answer"):
        if key in raw:
            need(key, isinstance(raw[key], str) and bool(raw[key]), "a field name")
    for key in ("id", "kind", "subject"):
        if key in raw:
            need(key, raw[key] is None or isinstance(raw[key], str), "a field name or null")
    if "answer_format" in raw:
        need("answer_format", raw["answer_format"] in ANSWER_FORMATS,
             " or ".join(ANSWER_FORMATS))
    if "options" in raw:
        spec = raw["options"]
        need("options", isinstance(spec, str)
             or (isinstance(spec, list) and len(spec) >= 2
                 and all(isinstance(c, str) for c in spec))
             or (isinstance(spec, dict) and len(spec) >= 2
                 and all(isinstance(c, str) for c in spec.values())),
             "a field name, a list of at least two field names, or {label: field}")
    if "context" in raw:
        spec = raw["context"]
        need("context", spec is None or isinstance(spec, str)
             or (isinstance(spec, list) and all(isinstance(c, str) for c in spec)),
             "a field name, a list of field names, or null")
    fixed = raw.get("fixed_options")
    if "fixed_options" in raw:
        need("fixed_options", isinstance(fixed, list) and len(fixed) >= 2
             and all(isinstance(c, str) and c for c in fixed), "a list of at least two labels")
        if "options" in raw:
            raise UserError(f"{origin}: fixed_options: expected either options or "
                            "fixed_options, got both")
    values = {k: v for k, v in raw.items() if k != "fixed_options"}
    if fixed is not None:
        values["options"] = None
    return Mapping(**values, fixed_options=tuple(fixed) if fixed else None,
                   explicit=frozenset(raw))


def check_header(mapping: Mapping, header: list[str], path: str) -> None:
    """Fail before reading rows if the CSV header lacks a field the mapping requires."""
    absent = sorted(mapping.required_columns() - set(header))
    if absent:
        raise UserError(f"{path}:1: header: expected a column {absent[0]!r} (from the "
                        f"mapping), got columns {', '.join(header)}")


def lookup(record: dict[str, Any], name: str) -> Any:
    """A field's value by name or dotted path (`context.contexts`), `MISSING` if absent.

    A key holding the whole name wins (a CSV column may be called `a.b`); otherwise each
    dot steps into a nested object, and a step into something that is not an object is
    an error naming the path so far.
    """
    if name in record or "." not in name:
        return record.get(name, MISSING)
    value: Any = record
    walked: list[str] = []
    for part in name.split("."):
        if value is None:
            return None  # a null on the way: the field is null (reported as such)
        if not isinstance(value, dict):
            raise RowError(".".join(walked), f"an object holding {part!r} (for {name!r})",
                           shown(value))
        if part not in value:
            return MISSING
        walked.append(part)
        value = value[part]
    return value


def need(record: dict[str, Any], name: str) -> Any:
    """`lookup`, with absent and null reported as 'missing field' (see `items.require`)."""
    value = lookup(record, name)
    if value is MISSING:
        raise RowError(name, "a value", "no such field", reason="missing field")
    if value is None:
        raise RowError(name, "a value", "null", reason="missing field")
    return value


def _get(record: dict[str, Any], name: str) -> Any:
    """A field's value, `MISSING` if absent; empty CSV cells count as absent."""
    value = lookup(record, name)
    return MISSING if value is None or value == "" else value


def _options(mapping: Mapping, record: dict[str, Any], from_csv: bool) -> dict[str, Any]:
    if mapping.fixed_options is not None:
        return {label: label for label in mapping.fixed_options}
    spec = mapping.options
    if isinstance(spec, str):
        value = need(record, spec)
        if from_csv and isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                raise RowError(spec, "a JSON object or list of options in the cell",
                               shown(value)) from None
        if isinstance(value, list):
            return options_from_list(value, spec)
        if isinstance(value, dict):
            return value
        raise RowError(spec, "an object {label: text} or a list of options", shown(value))
    if isinstance(spec, dict):
        return {label: need(record, column) for label, column in spec.items()}
    assert isinstance(spec, list)
    values = [_get(record, column) for column in spec]
    # Trailing empty columns are allowed (e.g. opE blank on four-option rows); a gap is not.
    while values and values[-1] is MISSING:
        values.pop()
    for column, value in zip(spec, values, strict=False):  # the trailing empties are gone
        if value is MISSING:
            raise RowError(column, "option text (only trailing options may be empty)",
                           "nothing", reason="missing field")
    return options_from_list(values, "options")


def _gold(mapping: Mapping, value: Any, options: dict[str, Any]) -> Any:
    if mapping.answer_format == "label":
        return value
    labels = list(options)
    if mapping.answer_format == "text":
        text = str(value).strip()
        for label, option in options.items():
            if str(option).strip() == text:
                return label
        raise RowError(mapping.answer, "the text of one of the options", shown(value),
                       reason="gold not among options")
    first = 0 if mapping.answer_format == "index0" else 1
    valid = range(first, first + len(labels))
    index = whole_number(value)
    if index is None or index not in valid:
        raise RowError(mapping.answer, f"an option number {valid.start}..{valid.stop - 1} "
                       f"({mapping.answer_format})", shown(value),
                       reason="gold not among options")
    return labels[index - first]


def parse_generic(mapping: Mapping, value: Any, line: int, source: Source,
                  from_csv: bool) -> Item:
    """One JSONL object or CSV row (a dict by header) read through `mapping`."""
    if not isinstance(value, dict):
        raise RowError("line", "a JSON object", shown(value), reason="invalid JSON")
    record = value

    def optional(key: str) -> Any:
        name = getattr(mapping, key)
        if name is None:
            return None
        found = _get(record, name)
        if found is MISSING:
            if key in mapping.explicit:
                raise RowError(name, "a value", "nothing", reason="missing field")
            return None
        return found

    context: Any = None
    if isinstance(mapping.context, list):
        parts = [text_of(_get(record, c), c) for c in mapping.context
                 if _get(record, c) is not MISSING]
        context = "\n\n".join(p for p in parts if p) or None
    else:
        context = optional("context")
        if isinstance(context, list):
            context = "\n\n".join(text_of(c, mapping.context or "context") for c in context)
    options = _options(mapping, record, from_csv)
    answer = need(record, mapping.answer)
    used = mapping.columns()
    return make_item(
        source_id=source.line_id(line) if mapping.id is None else need(record, mapping.id),
        question=need(record, mapping.question), options=options,
        gold=_gold(mapping, answer, options), line=line, gold_field=mapping.answer,
        options_field=mapping.options if isinstance(mapping.options, str) else "options",
        id_field=mapping.id or "id", question_field=mapping.question, kind=optional("kind"),
        context=context, subject=optional("subject"),
        meta={k: v for k, v in record.items()
              if k not in used and not any(u.startswith(f"{k}.") for u in used)},
    )
