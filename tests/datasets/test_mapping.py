"""The generic JSONL/CSV column mapping: every key, and the errors for malformed mappings."""

from __future__ import annotations

import json

import pytest

from store.errors import UserError
from workbench.datasets import parse_bytes, parse_mapping
from workbench.datasets.formats import Source

SOURCE = Source("f.jsonl", "f")


def _one(fmt: str, data: bytes, mapping: str | None = None):
    parsed = parse_bytes(fmt, data, SOURCE, parse_mapping(mapping) if mapping else None)
    assert parsed.bad == (), [str(b) for b in parsed.bad]
    (item,) = parsed.items
    return item


def _row(**fields) -> bytes:
    return json.dumps(fields).encode() + b"\n"


def test_options_as_list_are_lettered_in_order():
    item = _one("jsonl", _row(id=1, question="Q?", options=["x", "y", "z"], answer="c"))
    # Labels A, B, C assigned in list order; the answer 'c' is normalised to 'C'.
    assert item.options == {"A": "x", "B": "y", "C": "z"}
    assert item.gold == "C" and item.source_id == "1"


def test_options_from_label_to_field_dict():
    item = _one("jsonl", _row(n="q7", stem="Q?", yes_text="Yes", no_text="No", label="no"),
                '{"id": "n", "question": "stem", "options": {"Yes": "yes_text", '
                '"No": "no_text"}, "answer": "label"}')
    assert (item.kind, item.gold, item.labels) == ("binary", "No", ("Yes", "No"))


@pytest.mark.parametrize(("answer_format", "answer", "gold"), [
    ("index0", 2, "C"),     # 0-based: 0 -> A, 2 -> C
    ("index1", "2", "B"),   # 1-based, as text: 2 -> B
    ("text", " beta ", "B"),  # the option whose text is 'beta' (whitespace ignored)
    ("label", "b", "B"),
])
def test_answer_formats(answer_format, answer, gold):
    item = _one("jsonl", _row(id="a", question="Q?", options=["alpha", "beta", "gamma"],
                              answer=answer), f'{{"answer_format": "{answer_format}"}}')
    assert item.gold == gold


@pytest.mark.parametrize(("answer_format", "answer"), [
    ("index0", 3), ("index1", 0), ("text", "delta"), ("index1", "two")])
def test_answer_format_out_of_range_is_gold_not_among_options(answer_format, answer):
    parsed = parse_bytes("jsonl", _row(id="a", question="Q?", options=["a", "b", "c"],
                                       answer=answer), SOURCE,
                         parse_mapping(f'{{"answer_format": "{answer_format}"}}'))
    (bad,) = parsed.bad
    assert bad.reason == "gold not among options" and bad.error.field == "answer"


def test_fixed_options_make_yes_no_items_without_an_options_column():
    data = b"case,text,urgent\nt1,Chest pain at rest for 30 minutes. Call an ambulance?,yes\n"
    item = _one("csv", data, '{"id": "case", "question": "text", "answer": "urgent", '
                             '"fixed_options": ["Yes", "No"]}')
    assert (item.kind, item.options, item.gold) == ("binary", {"Yes": "Yes", "No": "No"},
                                                    "Yes")


def test_id_null_uses_stem_and_line():
    item = _one("jsonl", b"\n" + _row(question="Q?", options=["a", "b"], answer="A"),
                '{"id": null}')
    assert item.source_id == "f:2"


def test_context_from_several_fields_and_unmapped_fields_kept_as_meta():
    item = _one("jsonl", _row(id="c", question="Q?", options=["a", "b"], answer="A",
                              bg="Background.", res="Results.", year=2020),
                '{"context": ["bg", "res"]}')
    assert item.context == "Background.\n\nResults."
    assert item.meta == {"year": 2020}


def test_csv_options_column_holding_json():
    data = b'id,question,options,answer\nk,Q?,"{""A"": ""one"", ""B"": ""two""}",B\n'
    item = _one("csv", data)
    assert item.options == {"A": "one", "B": "two"} and item.gold == "B"


def test_explicitly_mapped_optional_field_is_required():
    parsed = parse_bytes("jsonl", _row(id="a", question="Q?", options=["a", "b"], answer="A"),
                         SOURCE, parse_mapping('{"subject": "specialty"}'))
    (bad,) = parsed.bad
    assert str(bad) == "f.jsonl:1: specialty: expected a value, got nothing"


def test_default_optional_fields_may_be_absent():
    item = _one("jsonl", _row(id="a", question="Q?", options=["a", "b"], answer="A"))
    assert (item.subject, item.context, item.meta) == (None, None, {})


@pytest.mark.parametrize(("text", "message"), [
    ("{oops", "--map: expected a JSON object, got invalid JSON"),
    ('["id"]', "--map: expected a JSON object, got ['id']"),
    ('{"ids": "x"}', "--map: ids: expected one of the keys answer, answer_format, context"),
    ('{"options": ["only"]}', "--map: options: expected a field name, a list of at least two"),
    ('{"answer_format": "letter"}', "--map: answer_format: expected label or index0 or "
                                    "index1 or text, got 'letter'"),
    ('{"question": 3}', "--map: question: expected a field name, got 3"),
    ('{"options": "o", "fixed_options": ["Yes", "No"]}',
     "--map: fixed_options: expected either options or fixed_options, got both"),
])
def test_malformed_mapping_is_a_one_line_user_error(text, message):
    with pytest.raises(UserError) as caught:
        parse_mapping(text)
    assert str(caught.value).startswith(message)


def test_mapping_refused_for_benchmark_formats():
    with pytest.raises(UserError, match="--map: expected no mapping for format 'medqa'"):
        parse_bytes("medqa", b"{}\n", SOURCE, parse_mapping("{}"))
