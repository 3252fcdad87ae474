"""Bounded reading and the one-line messages of `paw import` (issue 34, items 4, 5 and 7):
devices and links, lines over the limit, binary magic, over-long numbers, JSON wording."""

from __future__ import annotations

import json
import os
import time

import pytest

from store.errors import UserError
from workbench.cli import main
from workbench.datasets import import_file, parse_mapping
from workbench.datasets.sources import LINE_LIMIT

ROW = {"id": "x1", "question": "Q?", "options": {"A": "a", "B": "b"}, "answer": "A"}


def _paw(capsys, *args: str) -> tuple[int, str, str]:
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def test_dev_zero_is_refused_at_once(capsys, tmp_path):
    # Issue 34: `paw import jsonl /dev/zero` reached 4.5 GB in 15 s.
    started = time.perf_counter()
    code, _, err = _paw(capsys, "import", "jsonl", "/dev/zero", "--db", str(tmp_path / "p.db"))
    assert code == 1 and time.perf_counter() - started < 5
    assert err == ("paw: error: /dev/zero: expected a regular file, got a character device "
                   "(an import reads its file more than once; save the data to a file "
                   "first)\n")
    assert not (tmp_path / "p.db").exists()


def test_a_file_without_newlines_stops_at_line_one(tmp_path, db):
    path = tmp_path / "zeros.jsonl"
    with path.open("wb") as handle:  # 40 MiB of NUL bytes, no newline
        for _ in range(40):
            handle.write(b"\0" * (1 << 20))
    with pytest.raises(UserError) as caught:
        import_file(db, "jsonl", path, skip_bad=True)
    assert str(caught.value) == (
        f"{path}:1: line: expected a line of at most {LINE_LIMIT >> 20} MiB, got a longer one "
        "(no newline within the limit: not a file of one row per line?) (nothing imported)")


def test_a_line_at_the_limit_is_read(tmp_path, db):
    padding = LINE_LIMIT - len(json.dumps({**ROW, "note": ""}))
    path = tmp_path / "wide.jsonl"
    path.write_text(json.dumps({**ROW, "note": "n" * padding}) + "\n")
    assert len(path.read_bytes()) == LINE_LIMIT + 1
    assert import_file(db, "jsonl", path).n_new == 1


def test_gguf_given_as_jsonl_is_named_before_any_line(tmp_path, db):
    # Issue 34: a 98 MB GGUF imported as JSONL ran past 120 s at 1.6 GB.
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF\x03\x00\x00\x00" + os.urandom(1 << 20))
    with pytest.raises(UserError) as caught:
        import_file(db, "jsonl", path)
    assert str(caught.value) == (
        f"{path}: expected JSON lines or Parquet, got a GGUF model file (it starts with "
        "b'GGUF'); a model is registered with `paw models add`, not imported (nothing "
        "imported)")


def test_unterminated_string_reads_once_at(tmp_path, db):
    path = tmp_path / "u.jsonl"
    path.write_text('{"id": "x\n')
    with pytest.raises(UserError, match=r"u.jsonl:1: line: expected a JSON object, got invalid "
                       r"JSON \(Unterminated string starting at column 8\)"):
        import_file(db, "jsonl", path)
    with pytest.raises(UserError) as caught:
        parse_mapping('{"id": "x')
    assert str(caught.value) == ("--map: expected a JSON object, got invalid JSON "
                                 "(Unterminated string starting at line 1 column 8)")


@pytest.mark.parametrize("literal, wording", [("null", "null"), ("[1]", "an array"),
                                              ('"s"', "a string"), ("7", "a number"),
                                              ("false", "false")])
def test_a_row_that_is_not_an_object_is_named_as_json_names_it(literal, wording, tmp_path, db):
    path = tmp_path / "r.jsonl"
    path.write_text(literal + "\n")
    with pytest.raises(UserError) as caught:
        import_file(db, "jsonl", path)
    assert str(caught.value).startswith(f"{path}:1: line: expected a JSON object, got "
                                        f"{wording} (nothing imported")
    assert "NoneType" not in str(caught.value)


def test_float_and_integer_ids_are_not_two_items(tmp_path, db):
    path = tmp_path / "ids.jsonl"
    path.write_text(json.dumps({**ROW, "id": 1}) + "\n" + json.dumps({**ROW, "id": 1.0}) + "\n")
    with pytest.raises(UserError, match=r"ids.jsonl:2: id: expected text or a whole number "
                       r"\(not a float: 1.0 and 1 would be two different ids\), got 1.0"):
        import_file(db, "jsonl", path)
    assert db.execute("SELECT COUNT(*) FROM items").fetchone()[0] == 0


def test_over_long_integers_are_refused_by_field(tmp_path, db):
    # Issue 34: an internal error (exit 70) from a 4,301-digit MedQA meta_info.
    path = tmp_path / "m.jsonl"
    row = {"question": "Q?", "options": {"A": "a", "B": "b"}, "answer_idx": "A",
           "meta_info": "@@"}
    path.write_text(json.dumps(row).replace('"@@"', "1" * 4301) + "\n")
    with pytest.raises(UserError, match=r"m.jsonl:1: meta_info: expected a number of at most "
                       "4,300 digits, got one of 4,301 digits"):
        import_file(db, "medqa", path)
    csv_path = tmp_path / "g.csv"
    csv_path.write_text("id,question,a,b,gold\nq1,Q?,x,y," + "1" * 4301 + "\n")
    mapping = parse_mapping('{"options": ["a", "b"], "answer": "gold", '
                            '"answer_format": "index1"}')
    with pytest.raises(UserError, match=r"g.csv:2: gold: expected an option number 1..2"):
        import_file(db, "csv", csv_path, mapping=mapping)


def test_identical_option_texts_are_refused_at_the_row(tmp_path, db):
    path = tmp_path / "same.jsonl"
    path.write_text(json.dumps(ROW) + "\n" + json.dumps(
        {**ROW, "id": "x2", "options": ["Aspirin", "Heparin", " aspirin"]}) + "\n")
    with pytest.raises(UserError, match=r"same.jsonl:2: options: expected options with "
                       r"different texts .*got 'aspirin' for both A and C"):
        import_file(db, "jsonl", path)
    report = import_file(db, "jsonl", path, skip_bad=True)
    assert report.skipped_by_reason() == {"identical options": 1}


def test_nan_and_infinity_options_are_refused(tmp_path, db):
    path = tmp_path / "nan.jsonl"
    path.write_text(json.dumps(ROW).replace('"b"', "NaN") + "\n")
    with pytest.raises(UserError, match=r"nan.jsonl:1: options.B: expected text or a finite "
                       "number, got nan"):
        import_file(db, "jsonl", path)


def test_skip_bad_keeps_a_hundred_examples_and_counts_the_rest(tmp_path, db):
    path = tmp_path / "many.jsonl"
    path.write_text(json.dumps(ROW) + "\n" + "[]\n" * 250)
    report = import_file(db, "jsonl", path, skip_bad=True)
    assert report.n_skipped == 250 and len(report.skipped) == 100
    assert report.lines()[-1] == "  ... and 245 more"


def test_the_source_hash_is_recorded(tmp_path, db):
    import hashlib

    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps(ROW) + "\n")
    import_file(db, "jsonl", path)
    stored = db.execute("SELECT source_sha256 FROM datasets").fetchone()[0]
    assert stored == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_one_object_pubmedqa_file_over_the_limit_is_refused(tmp_path, db):
    from workbench.datasets.sources import OBJECT_FILE_LIMIT

    path = tmp_path / "ori_pqal.json"
    with path.open("wb") as handle:
        handle.write(b'{"1": {"QUESTION": "')
        handle.write(b"x" * OBJECT_FILE_LIMIT)
        handle.write(b'"}}')
    with pytest.raises(UserError) as caught:
        import_file(db, "pubmedqa", path)
    assert str(caught.value) == (
        f"{path}: expected a JSON file of at most 64 MiB (one object, read whole), got a "
        "larger one; import PubMedQA's Hub form (Parquet or JSON lines), which is read row "
        "by row (nothing imported)")
