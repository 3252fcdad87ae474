"""A table of user mistakes walked through the real `paw` entry point: each ends in one line on
stderr that names the file, row, field or option and what was expected, a non-zero exit, no
traceback, and nothing stored changed.

The store is the small fake-model audit of `tests/cli/conftest.py` on a real file; every
case runs against it in turn, and the store's row counts are compared before and after the
whole table (a mistake must not half-write anything). A handful of cases also run as a real
subprocess, where a traceback would reach the terminal.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.cli import main

ROW = '{"id": "x1", "question": "Q?", "options": {"A": "a", "B": "b"}, "answer": "A"}'

FILES: dict[str, bytes] = {
    "surrogate.jsonl": ROW.replace('"Q?"', '"What \\ud800?"').encode(),
    "deep.jsonl": b"[" * 100_000 + b"\n",
    "utf16.jsonl": ROW.encode("utf-16"),
    "utf16-nobom.jsonl": ROW.encode("utf-16-le"),
    "utf32.jsonl": ROW.encode("utf-32"),
    "null-answer.jsonl": ROW.replace('"answer": "A"', '"answer": null').encode(),
    "no-answer.jsonl": ROW.replace(', "answer": "A"', "").encode(),
    "dup-key.jsonl": ROW.replace('{"id": "x1"', '{"id": "x1", "id": "x2"').encode(),
    "dup-id.jsonl": (ROW + "\n" + ROW).encode(),
    "quote.csv": b'id,question,A,B,answer\n1,"unterminated,x,y,A\n2,q,a,b,A\n',
    "cells.csv": b"id,question,A,B,answer\n1,q,a,b\n",
    "bad-json.jsonl": b'{"id": "x1", "question": \n',
    "array.jsonl": b"[1, 2]\n",
    "latin1.jsonl": ROW.replace("Q?", "F\xe9ver?").encode("latin-1"),
    "gold-missing.jsonl": ROW.replace('"answer": "A"', '"answer": "E"').encode(),
    "one-option.jsonl": ROW.replace(', "B": "b"', "").encode(),
    "empty.jsonl": b"",
    "medqa-bad.jsonl": b'{"question": "Q", "options": {"A": "a"}, "answer_idx": "Z"}\n',
    "pubmed-bad.json": b'{"1": {"QUESTION": "q"',
    "pubmed-dup.json": (b'{"1": {"QUESTION": "q", "CONTEXTS": ["c"], "final_decision": "yes"},\n'
                        b' "1": {"QUESTION": "r", "CONTEXTS": ["c"], "final_decision": "no"}}'),
    "pubmed-dupfield.json": b'{"1": {"QUESTION": "q", "QUESTION": "r"}}',
    "map-bad.json": b"{not json",
    "map-latin1.json": b'{"id": "\xe9"}',
    "corrupt.db": b"",  # written by the fixture: a store with corrupted pages
    "notdb.db": b"this is not a SQLite file at all, just text" * 100,
}

MAP = '{"id": "id", "question": "question", "options": ["A", "B"], "answer": "answer"}'

# (case id, arguments — "{db}" and "{dir}" are substituted —, a fragment the message must
# contain: the file, row, field or option named, and what was expected).
CASES: list[tuple[str, list[str], str]] = [
    # importer
    ("lone surrogate", ["import", "jsonl", "{dir}/surrogate.jsonl"], "surrogate.jsonl:1: question"),
    ("deep nesting", ["import", "jsonl", "{dir}/deep.jsonl"], "deep.jsonl:1: line: expected JSON nested"),
    ("utf-16 with BOM", ["import", "jsonl", "{dir}/utf16.jsonl"], "expected UTF-8 text, got UTF-16"),
    ("utf-16 no BOM", ["import", "jsonl", "{dir}/utf16-nobom.jsonl"], "got UTF-16 (little-endian, no"),
    ("utf-32", ["import", "jsonl", "{dir}/utf32.jsonl"], "got UTF-32"),
    ("answer null", ["import", "jsonl", "{dir}/null-answer.jsonl"], "answer: expected a value, got null"),
    ("answer missing", ["import", "jsonl", "{dir}/no-answer.jsonl"], "answer: expected a value, got no such field"),
    ("duplicate key", ["import", "jsonl", "{dir}/dup-key.jsonl"], "id: expected each key once"),
    ("duplicate id", ["import", "jsonl", "{dir}/dup-id.jsonl"], "dup-id.jsonl:2: id"),
    ("unterminated quote", ["import", "csv", "{dir}/quote.csv", "--map", MAP], "quote.csv:2: line: expected a CSV row, got unreadable CSV (a quote opened on this line is never closed)"),
    ("too few cells", ["import", "csv", "{dir}/cells.csv", "--map", MAP], "cells.csv:2: line: expected 5 cells"),
    ("invalid json", ["import", "jsonl", "{dir}/bad-json.jsonl"], "bad-json.jsonl:1: line: expected a JSON object"),
    ("json array row", ["import", "jsonl", "{dir}/array.jsonl"], "expected a JSON object, got an array"),
    ("latin-1 bytes", ["import", "jsonl", "{dir}/latin1.jsonl"], "expected UTF-8 text, got byte 0xe9"),
    ("gold not an option", ["import", "jsonl", "{dir}/gold-missing.jsonl"], "gold-missing.jsonl:1: answer"),
    ("one option", ["import", "jsonl", "{dir}/one-option.jsonl"], "one-option.jsonl:1: options"),
    ("empty file", ["import", "jsonl", "{dir}/empty.jsonl"], "expected at least one item"),
    ("medqa bad answer", ["import", "medqa", "{dir}/medqa-bad.jsonl"], "medqa-bad.jsonl:1"),
    ("pubmedqa truncated", ["import", "pubmedqa", "{dir}/pubmed-bad.json"], "pubmed-bad.json:1: file: expected a JSON object"),
    ("pubmedqa dup pmid", ["import", "pubmedqa", "{dir}/pubmed-dup.json"], "pubmed-dup.json:2: id: expected an id not used before"),
    ("pubmedqa dup field", ["import", "pubmedqa", "{dir}/pubmed-dupfield.json"], "pubmed-dupfield.json:1: QUESTION: expected each key once"),
    ("unknown format", ["import", "medqaa", "{dir}/dup-id.jsonl"], "format: expected one of"),
    ("missing file", ["import", "jsonl", "{dir}/nope.jsonl"], "nope.jsonl: no such file"),
    ("file is a folder", ["import", "jsonl", "{dir}"], "expected a file, got a directory"),
    ("map not json", ["import", "jsonl", "{dir}/dup-id.jsonl", "--map", "{x"], "--map"),
    ("map and map-file", ["import", "jsonl", "{dir}/dup-id.jsonl", "--map", MAP, "--map-file", "{dir}/map-bad.json"], "--map, --map-file: expected one of them"),
    ("map-file missing", ["import", "jsonl", "{dir}/dup-id.jsonl", "--map-file", "{dir}/none.json"], "none.json: no such file (--map-file)"),
    ("map-file latin-1", ["import", "jsonl", "{dir}/dup-id.jsonl", "--map-file", "{dir}/map-latin1.json"], "expected UTF-8 JSON"),
    ("map on medqa", ["import", "medqa", "{dir}/dup-id.jsonl", "--map", MAP], "--map: expected no mapping"),
    # numbers and flags
    ("offset overflow", ["flips", "--offset", "99999999999999999999"], "'--offset'"),
    ("offset negative", ["flips", "--offset", "-1"], "'--offset'"),
    ("limit zero", ["flips", "--limit", "0"], "'--limit'"),
    ("kept and all", ["flips", "--kept", "--all"], "--kept, --all: expected one of them"),
    ("unknown block", ["flips", "--block", "Q"], "'--block'"),
    ("unknown audit", ["flips", "--audit", "no-such-audit"], "no-such-audit"),
    ("case not a number", ["flips", "show", "abc"], "abc"),
    ("case not found", ["flips", "show", "999999"], "999999"),
    ("temperature negative", ["run", "--dataset", "demo", "--temperature", "-1"], "'--temperature'"),
    ("temperature nan", ["run", "--dataset", "demo", "--temperature", "nan"], "not a finite number"),
    ("temperature inf", ["run", "--dataset", "demo", "--temperature", "inf"], "'--temperature'"),
    ("samples zero", ["run", "--dataset", "demo", "--samples", "0"], "'--samples'"),
    ("seed overflow", ["run", "--dataset", "demo", "--seed", "9223372036854775808"], "'--seed'"),
    ("run unknown dataset", ["run", "--dataset", "no-such-dataset"], "no-such-dataset"),
    ("run unknown model", ["run", "--dataset", "demo", "--model", "no-such-model"], "no-such-model"),
    ("audit unknown operator", ["audit", "--dataset", "demo", "--operators", "M9_nothing"], "M9_nothing"),
    ("audit max-tokens zero", ["audit", "--dataset", "demo", "--max-tokens", "0"], "'--max-tokens'"),
    ("audit threads zero", ["audit", "--dataset", "demo", "--threads", "0"], "'--threads'"),
    ("audit ctx small", ["audit", "--dataset", "demo", "--ctx", "8"], "'--ctx'"),
    ("gpu layers -2", ["audit", "--dataset", "demo", "--gpu-layers", "-2"], "'--gpu-layers'"),
    ("chain-size negative", ["annotate", "create", "--audit", "1", "--size", "3", "--raters", "a,b", "--coordinator", "c", "--chain-size", "-3"], "'--chain-size'"),
    ("size zero", ["annotate", "create", "--audit", "1", "--size", "0", "--raters", "a,b", "--coordinator", "c"], "'--size'"),
    ("dbpa k one", ["dbpa", "--dataset", "demo", "--k", "1"], "'--k'"),
    ("dbpa alpha one", ["dbpa", "--dataset", "demo", "--alpha", "1"], "'--alpha'"),
    ("study tolerance", ["study", "--dataset", "demo", "--tolerance", "2"], "'--tolerance'"),
    ("power sims zero", ["power", "--sims", "0"], "'--sims'"),
    # paths
    ("report out unwritable", ["report", "--out", "/proc/nope/x.md"], "--out /proc/nope/x.md: cannot create the folder /proc/nope"),
    ("report out is a folder", ["report", "--out", "{dir}"], "'--out'"),
    ("export out unwritable", ["export", "--out", "/proc/nope"], "--out /proc/nope: cannot create the folder"),
    ("backup into read-only fs", ["backup", "/proc/paw-backup.db"], "/proc/paw-backup.db: cannot create the backup there"),
    ("backup onto the store", ["backup", "{db}"], "paw.db: is the database"),
    ("backup folder missing", ["backup", "{dir}/no/such/x.db"], "does not exist"),
    ("db folder missing", ["audits", "--db", "{dir}/missing-folder/x.db"], "missing-folder"),
    ("db missing", ["audits", "--db", "{dir}/none.db"], "no such database"),
    ("db not sqlite", ["audits", "--db", "{dir}/notdb.db"], "notdb.db: not a PAW database or damaged"),
    ("db corrupted pages", ["audits", "--db", "{dir}/corrupt.db"], "corrupt.db: the file is damaged (PRAGMA quick_check"),
    ("label into corrupted", ["label", "ABC", "--rater", "alice", "--field", "validity", "--value", "1", "--db", "{dir}/corrupt.db"], "corrupt.db: the file is damaged"),
    ("ui db folder missing", ["ui", "--db", "{dir}/missing-folder/x.db"], "missing-folder"),
    # usage
    ("unknown command", ["flipz"], "No such command 'flipz'"),
    ("unknown option", ["audits", "--colour"], "--colour"),
    ("report two refs", ["report", "--audit", "1", "--study", "2"], "--study"),
    ("operators unknown", ["perturb", "M9_nothing", "--text", "x"], "M9_nothing"),
]


def paw(capsys, *args: str) -> tuple[int, str, str]:
    """Run `paw ARGS` in-process; (exit code, stdout, stderr). An exception is a failure."""
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def counts(path: str) -> dict[str, int]:
    """Rows per table of the store (what a mistake must leave as it was)."""
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        return {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    finally:
        conn.close()


@pytest.fixture
def mistakes_dir(tmp_path, fake_audit) -> tuple[str, Path]:
    """The audit's store and a folder of bad files (a store with corrupted pages among them)."""
    import shutil
    import sqlite3

    path, _ = fake_audit
    folder = tmp_path / "bad"
    folder.mkdir()
    for name, data in FILES.items():
        (folder / name).write_bytes(data)
    corrupt = folder / "corrupt.db"
    shutil.copy(path, corrupt)
    conn = sqlite3.connect(corrupt)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size, pages = (conn.execute(f"PRAGMA {p}").fetchone()[0]
                        for p in ("page_size", "page_count"))
    conn.close()
    with open(corrupt, "r+b") as handle:  # garbage in the cell area of the later pages
        for page in range(pages - 3, pages):
            handle.seek(page * page_size + 8)
            handle.write(b"\xff" * 400)
    return path, folder


def test_the_table_has_at_least_sixty_mistakes():
    assert len(CASES) >= 60
    assert len({case[0] for case in CASES}) == len(CASES)


def test_every_mistake_is_one_line_naming_where(capsys, monkeypatch, mistakes_dir, tmp_path):
    path, folder = mistakes_dir
    monkeypatch.setenv("PAW_DB", path)
    monkeypatch.setenv("PAW_STATE_DIR", str(tmp_path / "state"))
    before = counts(path)
    failures = []
    for name, args, fragment in CASES:
        argv = [a.replace("{db}", path).replace("{dir}", str(folder)) for a in args]
        code, _, err = paw(capsys, *argv)
        lines = err.strip().splitlines()
        if (code == 0 or len(lines) != 1 or not lines[0].startswith("paw: error: ")
                or "Traceback" in err or fragment.replace("{dir}", str(folder)) not in err):
            failures.append(f"{name}: exit {code}: {err.strip()[:300]!r}")
    assert not failures, "\n".join(failures)
    assert counts(path) == before


@pytest.mark.parametrize("name", ["lone surrogate", "deep nesting", "offset overflow",
                                  "report out unwritable", "db corrupted pages",
                                  "utf-16 with BOM"])
def test_a_real_process_prints_no_traceback(name, mistakes_dir, tmp_path):
    path, folder = mistakes_dir
    _, args, fragment = next(case for case in CASES if case[0] == name)
    argv = [a.replace("{db}", path).replace("{dir}", str(folder)) for a in args]
    env = dict(os.environ, PAW_DB=path, PAW_STATE_DIR=str(tmp_path / "state"),
               PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    done = subprocess.run([sys.executable, "-c", "from workbench.cli import main; main()", *argv], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().startswith("paw: error: ") and fragment in done.stderr


def test_an_unforeseen_failure_is_one_line_and_debug_reraises(capsys, monkeypatch):
    import workbench.cli as cli

    def boom(*_: object, **__: object) -> None:
        raise ZeroDivisionError("deliberate")

    monkeypatch.setattr(cli.cli, "main", boom)
    code, _, err = paw(capsys, "audits")
    assert code == 70 and err.count("\n") == 1
    assert "paw: internal error: ZeroDivisionError: deliberate" in err
    monkeypatch.setenv("PAW_DEBUG", "1")
    with pytest.raises(ZeroDivisionError):
        main(["audits"])
