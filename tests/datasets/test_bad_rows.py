"""Every kind of bad row, for every importer: the error names file, line and field, nothing
is stored; `--skip-bad` stores the good rows and counts the bad ones by reason."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pytest

from store.errors import UserError
from workbench.datasets import import_file, parse_mapping


def _j(**fields) -> bytes:
    return json.dumps(fields).encode() + b"\n"


MEDQA_OK = _j(question="Q one?", options={"A": "a", "B": "b", "C": "c", "D": "d"},
              answer_idx="B", meta_info="step1")
MEDMCQA_OK = _j(id="m1", question="Q one?", opa="a", opb="b", opc="c", opd="d", cop=1,
                subject_name="Anatomy")
PAW_OK = _j(id="p1", question="Q one?", options={"A": "a", "B": "b"}, answer="A")
MMLU_OK = b"Q one?,a,b,c,d,A\n"
CSV_HEADER = b"qid,stem,o1,o2,o3,gold\n"
CSV_OK = b"c1,Q one?,a,b,c,A\n"
CSV_MAP = '{"id": "qid", "question": "stem", "options": ["o1", "o2", "o3"], "answer": "gold"}'


def _pubmedqa(*entries: tuple[str, str]) -> bytes:
    """An ori_pqal.json with one entry per line: `{"<id>": <entry json>, ...}`."""
    body = ",\n".join(f'"{key}": {value}' for key, value in entries)
    return ("{\n" + body + "\n}\n").encode()


PQ_OK = ("101", json.dumps({"QUESTION": "Q one?", "CONTEXTS": ["c"],
                            "final_decision": "yes"}))


@dataclass(frozen=True)
class Case:
    """A file with one good row and one bad row, and where the error must point."""

    name: str
    format: str
    filename: str
    data: bytes
    line: int
    field: str
    reason: str
    mapping: str | None = None
    fatal: bool = False  # the reader cannot go on: --skip-bad must stop too


CASES = [
    # MedQA
    Case("medqa missing field", "medqa", "m.jsonl",
         MEDQA_OK + _j(options={"A": "a", "B": "b"}, answer_idx="A"), 2, "question",
         "missing field"),
    Case("medqa gold not among options", "medqa", "m.jsonl",
         MEDQA_OK + _j(question="Q?", options={"A": "a", "B": "b", "C": "c", "D": "d"},
                       answer_idx="E"), 2, "answer_idx", "gold not among options"),
    Case("medqa one option", "medqa", "m.jsonl",
         MEDQA_OK + _j(question="Q?", options={"A": "a"}, answer_idx="A"), 2, "options",
         "fewer than two options"),
    Case("medqa duplicate id", "medqa", "m.jsonl",
         _j(id="x", question="Q?", options={"A": "a", "B": "b"}, answer_idx="A")
         + MEDQA_OK
         + _j(id="x", question="Q2?", options={"A": "a", "B": "b"}, answer_idx="B"),
         3, "id", "duplicate id"),
    Case("medqa invalid json", "medqa", "m.jsonl", MEDQA_OK + b'{"question": "Q?",\n', 2,
         "line", "invalid JSON"),
    Case("medqa not utf-8", "medqa", "m.jsonl",
         MEDQA_OK + _j(question="Q\u00e9?", options={"A": "a", "B": "b"}, answer_idx="A")
         .replace(b"\\u00e9", b"\xe9"), 2, "question", "not UTF-8"),
    Case("medqa answer text disagrees", "medqa", "m.jsonl",
         MEDQA_OK + _j(question="Q?", options={"A": "a", "B": "b"}, answer_idx="A",
                       answer="b"), 2, "answer", "invalid value"),
    # MedMCQA
    Case("medmcqa missing option", "medmcqa1", "mc.jsonl",
         MEDMCQA_OK + _j(id="m2", question="Q?", opa="a", opb="b", opd="d", cop=1), 2,
         "opc", "missing field"),
    Case("medmcqa cop out of range", "medmcqa1", "mc.jsonl",
         MEDMCQA_OK + _j(id="m2", question="Q?", opa="a", opb="b", opc="c", opd="d", cop=5),
         2, "cop", "gold not among options"),
    Case("medmcqa zero cop in 1-based file", "medmcqa1", "mc.jsonl",
         MEDMCQA_OK + _j(id="m2", question="Q?", opa="a", opb="b", opc="c", opd="d", cop=0),
         2, "cop", "gold not among options"),
    Case("medmcqa empty option", "medmcqa1", "mc.jsonl",
         MEDMCQA_OK + _j(id="m2", question="Q?", opa="a", opb=" ", opc="c", opd="d", cop=1),
         2, "opb", "missing field"),
    Case("medmcqa duplicate id", "medmcqa1", "mc.jsonl", MEDMCQA_OK + MEDMCQA_OK, 2, "id",
         "duplicate id"),
    Case("medmcqa invalid json", "medmcqa1", "mc.jsonl", MEDMCQA_OK + b"[1, 2\n", 2, "line",
         "invalid JSON"),
    Case("medmcqa not utf-8", "medmcqa1", "mc.jsonl",
         MEDMCQA_OK + _j(id="m2", question="Q?", opa="caf\u00e9", opb="b", opc="c", opd="d",
                         cop=1).replace(b"\\u00e9", b"\xe9"), 2, "opa", "not UTF-8"),
    # PubMedQA: entries are on lines 2 and 3 (line 1 is the opening brace).
    Case("pubmedqa missing field", "pubmedqa", "pq.json",
         _pubmedqa(PQ_OK, ("102", '{"CONTEXTS": ["c"], "final_decision": "no"}')), 3,
         "QUESTION", "missing field"),
    Case("pubmedqa decision not a label", "pubmedqa", "pq.json",
         _pubmedqa(PQ_OK, ("102", '{"QUESTION": "Q?", "CONTEXTS": ["c"], '
                                  '"final_decision": "probably"}')), 3, "final_decision",
         "gold not among options"),
    Case("pubmedqa empty contexts", "pubmedqa", "pq.json",
         _pubmedqa(PQ_OK, ("102", '{"QUESTION": "Q?", "CONTEXTS": [], '
                                  '"final_decision": "no"}')), 3, "CONTEXTS",
         "missing field"),
    Case("pubmedqa duplicate id", "pubmedqa", "pq.json", _pubmedqa(PQ_OK, PQ_OK), 3, "id",
         "duplicate id"),
    Case("pubmedqa invalid json", "pubmedqa", "pq.json",
         _pubmedqa(PQ_OK, ("102", '{"QUESTION": "Q?" "CONTEXTS": []}')), 3, "file",
         "invalid JSON", fatal=True),
    Case("pubmedqa not utf-8", "pubmedqa", "pq.json",
         _pubmedqa(PQ_OK, ("102", '{"QUESTION": "Q?", "CONTEXTS": ["caf\u00e9"], '
                                  '"final_decision": "no"}')).replace(
             "\u00e9".encode(), b"\xe9"), 3, "CONTEXTS", "not UTF-8"),
    # MMLU
    Case("mmlu missing cell", "mmlu", "x_test.csv", MMLU_OK + b"Q?,a,b,c,A\n", 2, "line",
         "missing field"),
    Case("mmlu answer not a letter of the options", "mmlu", "x_test.csv",
         MMLU_OK + b"Q?,a,b,c,d,E\n", 2, "answer", "gold not among options"),
    Case("mmlu empty option", "mmlu", "x_test.csv", MMLU_OK + b"Q?,a,,c,d,A\n", 2,
         "options.B", "missing field"),
    Case("mmlu not utf-8", "mmlu", "x_test.csv", MMLU_OK + b"Q\xe9?,a,b,c,d,A\n", 2, "line",
         "not UTF-8"),
    # Generic JSONL (PAW's own format)
    Case("jsonl missing answer", "jsonl", "g.jsonl",
         PAW_OK + _j(id="p2", question="Q?", options={"A": "a", "B": "b"}), 2, "answer",
         "missing field"),
    Case("jsonl gold not among options", "jsonl", "g.jsonl",
         PAW_OK + _j(id="p2", question="Q?", options={"Yes": "Yes", "No": "No"},
                     answer="Maybe"), 2, "answer", "gold not among options"),
    Case("jsonl one option", "jsonl", "g.jsonl",
         PAW_OK + _j(id="p2", question="Q?", options=["only"], answer="A"), 2, "options",
         "fewer than two options"),
    Case("jsonl duplicate id", "jsonl", "g.jsonl", PAW_OK + b"\n" + PAW_OK, 3, "id",
         "duplicate id"),
    Case("jsonl invalid json", "jsonl", "g.jsonl", PAW_OK + b"{'id': 'p2'}\n", 2, "line",
         "invalid JSON"),
    Case("jsonl not utf-8", "jsonl", "g.jsonl", PAW_OK + b'{"id": "p2", "question": "\xff", '
         b'"options": {"A": "a", "B": "b"}, "answer": "A"}\n', 2, "question", "not UTF-8"),
    Case("jsonl kind disagrees with labels", "jsonl", "g.jsonl",
         PAW_OK + _j(id="p2", kind="binary", question="Q?", options={"A": "a", "B": "b"},
                     answer="A"), 2, "kind", "invalid value"),
    Case("jsonl labels not A, B, ...", "jsonl", "g.jsonl",
         PAW_OK + _j(id="p2", question="Q?", options={"A": "a", "C": "c"}, answer="A"), 2,
         "options", "invalid value"),
    # Generic CSV through a mapping (line 1 is the header)
    Case("csv empty question", "csv", "g.csv", CSV_HEADER + CSV_OK + b"c2,,a,b,c,A\n", 3,
         "stem", "missing field", CSV_MAP),  # the file's column name, not ours
    Case("csv gold not among options", "csv", "g.csv",
         CSV_HEADER + CSV_OK + b"c2,Q?,a,b,,C\n", 3, "gold", "gold not among options",
         CSV_MAP),
    Case("csv one option", "csv", "g.csv", CSV_HEADER + CSV_OK + b"c2,Q?,a,,,A\n", 3,
         "options", "fewer than two options", CSV_MAP),
    Case("csv gap in options", "csv", "g.csv", CSV_HEADER + CSV_OK + b"c2,Q?,a,,c,A\n", 3,
         "o2", "missing field", CSV_MAP),
    Case("csv duplicate id", "csv", "g.csv", CSV_HEADER + CSV_OK + CSV_OK, 3, "id",
         "duplicate id", CSV_MAP),
    Case("csv wrong cell count", "csv", "g.csv", CSV_HEADER + CSV_OK + b"c2,Q?,a,b\n", 3,
         "line", "invalid CSV", CSV_MAP),
    Case("csv not utf-8", "csv", "g.csv", CSV_HEADER + CSV_OK + b"c2,Q?,a,\xfe,c,A\n", 3,
         "o2", "not UTF-8", CSV_MAP),
    Case("csv header lacks a mapped column", "csv", "g.csv",
         b"qid,question,o1,o2,o3,gold\n" + CSV_OK, 1, "header", "", CSV_MAP, fatal=True),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_row_stops_the_import_and_stores_nothing(case, tmp_path, db):
    path = tmp_path / case.filename
    path.write_bytes(case.data)
    mapping = parse_mapping(case.mapping) if case.mapping else None
    with pytest.raises(UserError) as caught:
        import_file(db, case.format, path, mapping=mapping)
    message = str(caught.value)
    assert message.startswith(f"{path}:{case.line}: {case.field}: expected "), message
    assert ", got " in message and "\n" not in message
    assert db.execute("SELECT COUNT(*) FROM items").fetchone()[0] == 0
    assert db.execute("SELECT COUNT(*) FROM datasets").fetchone()[0] == 0


@pytest.mark.parametrize("case", [c for c in CASES if not c.fatal],
                         ids=[c.name for c in CASES if not c.fatal])
def test_skip_bad_keeps_the_good_rows(case, tmp_path, db):
    path = tmp_path / case.filename
    path.write_bytes(case.data)
    mapping = parse_mapping(case.mapping) if case.mapping else None
    report = import_file(db, case.format, path, mapping=mapping, skip_bad=True)
    # Every case file holds exactly one bad row; the rest are good.
    assert len(report.skipped) == 1
    assert report.skipped_by_reason() == {case.reason: 1}
    assert report.n_new == report.n_valid >= 1
    assert db.execute("SELECT COUNT(*) FROM items").fetchone()[0] == report.n_new
    text = "\n".join(report.lines())
    assert f"skipped 1 bad row: 1 {case.reason}" in text
    assert f"{path}:{case.line}: {case.field}: expected" in text


@pytest.mark.parametrize("case", [c for c in CASES if c.fatal],
                         ids=[c.name for c in CASES if c.fatal])
def test_fatal_faults_stop_even_with_skip_bad(case, tmp_path, db):
    path = tmp_path / case.filename
    path.write_bytes(case.data)
    mapping = parse_mapping(case.mapping) if case.mapping else None
    with pytest.raises(UserError, match=re.escape(f"{path}:{case.line}: {case.field}:")):
        import_file(db, case.format, path, mapping=mapping, skip_bad=True)
    assert db.execute("SELECT COUNT(*) FROM items").fetchone()[0] == 0


def test_the_first_bad_row_stops_reading(tmp_path, db):
    path = tmp_path / "m.jsonl"
    # Line 2 is bad; line 3 is 9 MiB without a newline, which would stop a reader that
    # went on with a "line too long" error of its own: the message shows it never got there.
    path.write_bytes(MEDQA_OK + b"not json\n" + b"x" * (9 << 20))
    with pytest.raises(UserError) as caught:
        import_file(db, "medqa", path)
    assert str(caught.value) == (
        f"{path}:2: line: expected a JSON object, got invalid JSON (Expecting value at "
        "column 1) (nothing imported: the import stops at the first bad row; --skip-bad "
        "imports the valid rows and lists the bad ones)")
    assert db.execute("SELECT COUNT(*) FROM datasets").fetchone()[0] == 0


def test_skip_bad_report_lists_reasons_and_first_locations(tmp_path, db):
    rows = [MMLU_OK] + [b"Q?,a,b,c,d,Z\n"] * 7 + [b"Q?,a,b\n"] * 2
    path = tmp_path / "y_test.csv"
    path.write_bytes(b"".join(rows))
    report = import_file(db, "mmlu", path, skip_bad=True)
    # 1 good row; 7 with answer Z (lines 2-8) and 2 with three cells (lines 9-10).
    assert report.n_new == 1
    assert report.skipped_by_reason() == {"gold not among options": 7, "missing field": 2}
    lines = report.lines(examples=3)
    assert lines[1] == "skipped 9 bad rows: 7 gold not among options, 2 missing field"
    assert lines[2].startswith(f"  {path}:2: answer: expected one of A, B, C, D, got 'Z'")
    assert lines[5] == "  ... and 6 more"


def test_all_rows_bad_with_skip_bad_is_an_error(tmp_path, db):
    path = tmp_path / "z.jsonl"
    path.write_bytes(b"[]\n[]\n")
    with pytest.raises(UserError, match=r"expected at least one item, got none \(all 2 rows"):
        import_file(db, "jsonl", path, skip_bad=True)
    assert db.execute("SELECT COUNT(*) FROM datasets").fetchone()[0] == 0


def test_empty_file_is_an_error(tmp_path, db):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"\n\n")
    with pytest.raises(UserError, match="empty.jsonl: expected at least one item, got none"):
        import_file(db, "medqa", path)


def test_skip_bad_then_fixed_file_adds_only_the_fixed_rows(tmp_path, db):
    path = tmp_path / "g.jsonl"
    bad = _j(id="p2", question="Q?", options={"A": "a", "B": "b"}, answer="C")
    path.write_bytes(PAW_OK + bad)
    assert import_file(db, "jsonl", path, skip_bad=True).n_new == 1
    path.write_bytes(PAW_OK + bad.replace(b'"C"', b'"B"'))
    # p1 is already there; only the repaired p2 is new.
    report = import_file(db, "jsonl", path)
    assert (report.n_valid, report.n_new) == (2, 1)
