"""Every importer, with every option, fed the project's bad-input corpus and the classes below:
each run through the real `paw` entry point ends in exit 1 and one line on stderr that
names the file (and its row or field where there is one) and what was expected; nothing is
stored; no internal error.

The corpus: the import files of `tests/cli/test_bad_inputs.py` (`FILES`) and the bad-row
files of `tests/datasets/test_bad_rows.py` (`CASES`), plus `NEW` here: 40+ classes found
since (over-long integers, NaN/Infinity, float ids, identical option texts, JSON values
that are not objects, binary files by magic, lines over the limit, Parquet mistakes, ...).
A class with an intended format also names the fragment its message must carry there.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.cli.test_bad_inputs import FILES
from tests.datasets.test_bad_rows import CASES
from workbench.cli import main
from workbench.datasets import FORMATS
from workbench.datasets.sources import LINE_LIMIT

ROW = {"id": "x1", "question": "Q?", "options": {"A": "a", "B": "b"}, "answer": "A"}
MEDQA = {"question": "Q?", "options": {"A": "a", "B": "b", "C": "c", "D": "d"},
         "answer_idx": "A"}
MCQA = {"id": "m1", "question": "Q?", "opa": "a", "opb": "b", "opc": "c", "opd": "d", "cop": 4}
HUB = {"pubid": 1, "question": "Q?", "context": {"contexts": ["c"], "labels": ["L"],
                                                 "meshes": []}, "final_decision": "yes"}
BIG = "9" * 5000


def _j(row: dict, **changes) -> bytes:
    return json.dumps({**row, **changes}).encode() + b"\n"


def _raw(row: dict, key: str, literal: str) -> bytes:
    """A row whose `key` holds `literal` as written (JSON that json.dumps would not write)."""
    return json.dumps({**row, key: "@@"}).replace('"@@"', literal).encode() + b"\n"


@dataclass(frozen=True)
class New:
    """A bad-input class: file name, bytes, and the format and fragment it was written for."""

    name: str
    data: bytes
    format: str = ""
    fragment: str = ""


def _sqlite_bytes(tmp_path) -> bytes:
    path = tmp_path / "s.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    return path.read_bytes()


def _parquet_bytes(tmp_path, rows: list[dict], schema: pa.Schema | None = None) -> bytes:
    path = tmp_path / "p.parquet"
    table = pa.Table.from_pylist(rows, schema=schema) if rows or schema else pa.table({})
    pq.write_table(table, path)
    return path.read_bytes()


def new_classes(tmp_path) -> list[New]:
    """The new bad-input classes (each bad for every format)."""
    parquet = _parquet_bytes(tmp_path, [{**MEDQA, "answer_idx": "Z"}])
    return [
        # Numbers Python cannot turn into text, or that would read as words.
        New("bigint-meta.jsonl", _raw(MEDQA, "meta_info", BIG), "medqa",
            "meta_info: expected a number of at most 4,300 digits, got one of 5,000 digits"),
        New("bigint-id.jsonl", _raw(ROW, "id", BIG), "jsonl", ":1: id: expected a number of"),
        New("bigint-cop.jsonl", _raw(MCQA, "cop", BIG), "medmcqa", ":1: cop: expected"),
        New("bigint-cop-text.jsonl", _j(MCQA, cop=BIG), "medmcqa1", ":1: cop: expected 1, 2"),
        New("bigint-answer.csv", f"id,question,A,B,answer\nq1,Q?,a,b,{BIG}\n".encode(),
            "csv-index", ":2: answer: expected an option number 0..1"),
        New("superscript-cop.jsonl", _j(MCQA, cop="\u00b2"), "medmcqa1", ":1: cop: expected"),
        New("nan-option.jsonl", _raw(ROW, "options", '{"A": NaN, "B": "b"}'), "jsonl",
            ":1: options.A: expected text or a finite number, got nan"),
        New("inf-option.jsonl", _raw(ROW, "options", '{"A": "a", "B": Infinity}'), "jsonl",
            ":1: options.B: expected text or a finite number, got inf"),
        New("neg-inf-option.jsonl", _raw(MCQA, "opc", "-Infinity"), "medmcqa1",
            ":1: opc: expected text or a finite number"),
        New("exp-inf-option.jsonl", _raw(ROW, "options", '["a", 1e999]'), "jsonl",
            ":1: options.B: expected text or a finite number"),
        New("float-id.jsonl", _j(ROW, id=1.0), "jsonl",
            ":1: id: expected text or a whole number (not a float"),
        New("float-id-huge.jsonl", _raw(ROW, "id", "1e999"), "jsonl", ":1: id: expected text"),
        # Two options with one text: shuffle and flip-by-text are undefined.
        New("identical-options.jsonl", _j(ROW, options={"A": "same", "B": "same"}), "jsonl",
            ":1: options: expected options with different texts"),
        New("identical-options-case.jsonl",
            _j(ROW, options={"A": "Aspirin", "B": "aspirin  "}), "jsonl",
            "got 'aspirin' for both A and B"),
        New("identical-medmcqa.jsonl", _j(MCQA, opb="a"), "medmcqa1",
            ":1: options: expected options with different texts"),
        # JSON values that are not objects, named as JSON names them.
        New("null-row.jsonl", b"null\n", "jsonl", ":1: line: expected a JSON object, got null"),
        New("string-row.jsonl", b'"text"\n', "jsonl", "got a string"),
        New("number-row.jsonl", b"42\n", "jsonl", "got a number"),
        New("true-row.jsonl", b"true\n", "jsonl", "expected a JSON object, got true"),
        New("array-of-rows.json", json.dumps([ROW]).encode(), "jsonl",
            "got an array (a JSON array of rows? write the file as JSON lines"),
        New("unterminated-string.jsonl", b'{"id": "x\n', "jsonl",
            "(Unterminated string starting at column 8)"),
        New("trailing-data.jsonl", json.dumps(ROW).encode() + b" extra\n", "jsonl",
            "Extra data at column"),
        New("cr-separated.jsonl", json.dumps(ROW).encode() + b"\r" + json.dumps(ROW).encode(),
            "jsonl", ":1: line: expected a JSON object, got invalid JSON (Extra data"),
        # Binary files, named by their first bytes.
        New("model.gguf", b"GGUF\x03\x00\x00\x00" + b"\x00" * 64, "medqa",
            "expected JSON lines or Parquet, got a GGUF model file"),
        New("junk.parquet", b"PAR1" + b"\x00" * 64, "medqa",
            "expected a readable Parquet file"),
        New("rows.parquet", parquet, "mmlu", "expected a CSV file, got a Parquet file"),
        New("rows.zip", b"PK\x03\x04" + b"\x00" * 64, "jsonl", "got a ZIP archive"),
        New("empty.zip", b"PK\x05\x06" + b"\x00" * 18, "csv", "got a ZIP archive (empty)"),
        New("rows.jsonl.gz", gzip.compress(json.dumps(ROW).encode()), "jsonl",
            "got a gzip-compressed file"),
        New("store.db", _sqlite_bytes(tmp_path), "jsonl", "got a SQLite database"),
        New("nul-bytes.jsonl", b"\x00" * 4096, "jsonl", ":1: line: expected a JSON object"),
        # Bounded reading.
        New("long-line.jsonl", b"x" * (LINE_LIMIT + 10), "jsonl",
            ":1: line: expected a line of at most 8 MiB, got a longer one"),
        New("long-line-second.jsonl", json.dumps(ROW).encode() + b"\n"
            + b" " * (LINE_LIMIT + 10) + b"\n", "jsonl", ":2: line: expected a line of at most"),
        # Fields of the wrong shape.
        New("options-lists.jsonl", _j(ROW, options=[["a"], ["b"]]), "jsonl",
            ":1: options.A: expected text"),
        New("option-object.jsonl", _j(ROW, options={"A": {"t": "a"}, "B": "b"}), "jsonl",
            ":1: options.A: expected text"),
        New("question-object.jsonl", _j(ROW, question={"t": "Q"}), "jsonl",
            ":1: question: expected text"),
        New("answer-bool.jsonl", _j(ROW, answer=True), "jsonl", ":1: answer: expected text"),
        New("id-bool.jsonl", _j(ROW, id=False), "jsonl", ":1: id: expected text"),
        New("id-empty.jsonl", _j(ROW, id="  "), "jsonl", ":1: id: expected non-empty text"),
        New("id-list.jsonl", _j(ROW, id=[1]), "jsonl", ":1: id: expected text"),
        New("27-options.jsonl", _j(ROW, options=[f"o{i}" for i in range(27)]), "jsonl",
            ":1: options: expected at most 26 options"),
        New("label-gap.jsonl", _j(ROW, options={"A": "a", "D": "d"}), "jsonl",
            ":1: options: expected option labels A, B"),
        New("nested-dup-key.jsonl", b'{"id": "x1", "question": "Q?", "options": {"A": "a", '
            b'"A": "b"}, "answer": "A"}\n', "jsonl", ":1: A: expected each key once"),
        New("medqa-key-value-bad.jsonl", _j(MEDQA, options=[{"key": "A"}, {"key": "B"}]),
            "medqa", ":1: options[0]: expected an object with key and value"),
        New("medqa-answer-text.jsonl", _j(MEDQA, answer="b"), "medqa",
            ":1: answer: expected the text of option A"),
        New("medmcqa-both-bases.jsonl", _j(MCQA, cop=0) + _j(MCQA, id="m2", cop=4),
            "medmcqa", ":2: cop: expected one numbering in the file"),
        New("medmcqa-test-split.jsonl", _j(MCQA, cop=-1), "medmcqa",
            "(the MedMCQA test split has no answers)"),
        New("hub-context-null.jsonl", _j(HUB, context=None), "pubmedqa",
            ":1: context: expected a value, got null"),
        New("hub-context-text.jsonl", _j(HUB, context="abstract"), "pubmedqa",
            ":1: context: expected an object {contexts, labels, meshes}"),
        New("hub-contexts-empty.jsonl", _j(HUB, context={"contexts": []}), "pubmedqa",
            ":1: context.contexts: expected a non-empty list of passages"),
        New("hub-decision-bad.jsonl", _j(HUB, final_decision="perhaps"), "pubmedqa",
            ":1: final_decision: expected yes, no or maybe"),
        New("only-blank.jsonl", b"\n \n\t\n", "jsonl", "expected at least one item, got none"),
        New("csv-header-only.csv", b"id,question,A,B,answer\n", "csv-map",
            "expected at least one item, got none"),
        New("csv-bad-header.csv", b"id,qu\xffestion,A,B,answer\nq,Q?,a,b,A\n", "csv-map",
            ":1: header: expected UTF-8 text"),
        # Parquet whose rows are wrong.
        New("no-question.parquet", _parquet_bytes(tmp_path, [{"id": "a", "answer": "A"}]),
            "parquet", ":row 1: options: expected a value, got no such field"),
        New("float-id.parquet", _parquet_bytes(tmp_path, [{**ROW, "id": 1.0}]), "parquet",
            ":row 1: id: expected text or a whole number"),
        New("nan-option.parquet", _parquet_bytes(
            tmp_path, [{**ROW, "options": [float("nan"), 1.0]}]), "parquet",
            ":row 1: options.A: expected text or a finite number"),
        New("zero-rows.parquet", _parquet_bytes(
            tmp_path, [], pa.schema([("id", pa.string())])), "parquet",
            "expected at least one item, got none"),
    ]


MAP = '{"id": "id", "question": "question", "options": ["A", "B"], "answer": "answer"}'
MAP_INDEX = MAP.replace('}', ', "answer_format": "index0"}')
VARIANTS: dict[str, tuple[str, ...]] = {
    **{name: (name,) for name in FORMATS},
    "jsonl-map": ("jsonl", "--map", MAP),
    "csv-map": ("csv", "--map", MAP),
    "csv-index": ("csv", "--map", MAP_INDEX),
    "parquet-map": ("parquet", "--map", MAP),
}
"""Every format, and the generic ones also through a mapping."""


def _paw(capsys, args: list[str]) -> tuple[int, str]:
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    return code, capsys.readouterr().err


@pytest.fixture
def corpus(tmp_path) -> dict[str, bytes]:
    files = {f"cli-{name}": data for name, data in FILES.items()}
    files.update({f"rows-{case.name.replace(' ', '-')}-{case.filename}": case.data
                  for case in CASES})
    files.update({case.name: case.data for case in new_classes(tmp_path)})
    return files


def test_there_are_forty_new_classes(tmp_path):
    classes = new_classes(tmp_path)
    assert len(classes) >= 40 and len({c.name for c in classes}) == len(classes)
    assert all(c.format in VARIANTS for c in classes)


VALID_HERE = {
    ("cli-dup-id.jsonl", "jsonl", "--skip-bad"),  # one good row and its repeat
    ("cli-pubmed-dup.json", "pubmedqa", "--skip-bad"),  # one good entry and a repeated PMID
    # cop 1 and cop 0: read as 0-based by detection (as medmcqa1 it is the bad-row case).
    ("rows-medmcqa-zero-cop-in-1-based-file-mc.jsonl", "medmcqa", ""),
    ("rows-medmcqa-zero-cop-in-1-based-file-mc.jsonl", "medmcqa0", ""),
    # A stated base keeps the row that agrees with it and skips the other.
    ("medmcqa-both-bases.jsonl", "medmcqa0", "--skip-bad"),
    ("medmcqa-both-bases.jsonl", "medmcqa1", "--skip-bad"),
}
"""(file, variant, option) runs that are good imports: the file is bad for other formats."""


def test_every_importer_and_option_refuses_the_corpus_in_one_line(capsys, tmp_path, corpus):
    folder = tmp_path / "bad"
    folder.mkdir()
    db = tmp_path / "paw.db"
    failures = []
    stored = set()
    runs = 0
    for name, data in corpus.items():
        path = folder / name
        path.write_bytes(data)
        # --skip-bad too, except on the bad-row files, which hold good rows by design.
        options = [[]] if name.startswith("rows-") else [[], ["--skip-bad"]]
        for variant, args in VARIANTS.items():
            for extra in options:
                runs += 1
                code, err = _paw(capsys, ["import", args[0], str(path), *args[1:], *extra,
                                          "--name", f"run{runs}", "--db", str(db)])
                # Files over 2 MB first show a progress line ("importing …"); then the error.
                lines = [line for line in err.strip().splitlines()
                         if not line.startswith(f"importing {path}: ")]
                if (name, variant, "".join(extra)) in VALID_HERE and code == 0:
                    stored.add(f"run{runs}")
                elif (code != 1 or len(lines) != 1 or not lines[0].startswith("paw: error: ")
                        or str(path) not in lines[0] or "expected" not in lines[0]
                        or "internal error" in err):
                    failures.append(f"{name} as {variant} {extra}: exit {code}: {err[:300]!r}")
    assert not failures, f"{len(failures)} of {runs} runs:\n" + "\n".join(failures[:60])
    assert len(stored) == len(VALID_HERE)
    conn = sqlite3.connect(db)
    # Nothing stored but the good imports.
    assert {r[0] for r in conn.execute("SELECT name FROM datasets")} == stored
    assert conn.execute("SELECT COUNT(DISTINCT dataset_id) FROM items").fetchone()[0] == \
        len(stored)


def test_each_new_class_says_why_in_its_own_format(capsys, tmp_path):
    db = tmp_path / "paw.db"
    failures = []
    for case in new_classes(tmp_path):
        path = tmp_path / case.name
        path.write_bytes(case.data)
        args = VARIANTS[case.format]
        code, err = _paw(capsys, ["import", args[0], str(path), *args[1:], "--db", str(db)])
        if code != 1 or case.fragment not in err:
            failures.append(f"{case.name} as {case.format}: exit {code}: {err.strip()!r}")
    assert not failures, "\n".join(failures)
