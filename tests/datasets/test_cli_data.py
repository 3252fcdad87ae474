"""`paw import`, `paw datasets`, `paw demo` through the real entry point (and one subprocess)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from store import open_db
from store.datasets import get_items
from workbench.cli import main
from workbench.datasets import FORMATS, load_demo_items

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "datasets"
ROOT = Path(__file__).resolve().parents[2]


def paw(capsys, *args: str) -> tuple[int, str, str]:
    """Run `paw ARGS` in-process; returns (exit code, stdout, stderr)."""
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_import_then_datasets(capsys, tmp_path):
    db = str(tmp_path / "paw.db")
    code, out, _ = paw(capsys, "import", "jsonl", str(FIXTURES / "paw_format.jsonl"),
                       "--db", db)
    assert code == 0
    assert out.strip() == (f"{FIXTURES / 'paw_format.jsonl'}: 3 new items in dataset "
                           "'paw_format' (3 valid rows, 0 already present)")
    paw(capsys, "import", "mmlu", str(FIXTURES / "clinical_knowledge_test.csv"), "--name",
        "ck", "--db", db)
    code, out, _ = paw(capsys, "datasets", "--db", db)
    lines = out.splitlines()
    assert code == 0
    assert lines[0].split() == ["name", "format", "items", "mcq", "binary", "source"]
    # Sorted by name; paw_format.jsonl holds 1 MCQ and 2 yes/no items, the MMLU file 3 MCQ.
    assert lines[2].split()[:5] == ["ck", "mmlu", "3", "3", "0"]
    assert lines[3].split()[:5] == ["paw_format", "jsonl", "3", "1", "2"]


def test_datasets_on_empty_store(capsys, tmp_path):
    open_db(tmp_path / "paw.db").conn.close()  # `paw datasets` never creates a database
    code, out, _ = paw(capsys, "datasets", "--db", str(tmp_path / "paw.db"))
    assert code == 0 and "no datasets yet" in out


def test_paw_db_environment_variable(capsys, tmp_path, monkeypatch):
    target = tmp_path / "env.db"
    monkeypatch.setenv("PAW_DB", str(target))
    paw(capsys, "import", "medqa", str(FIXTURES / "medqa.jsonl"))
    assert len(get_items(open_db(target), "medqa")) == 3


def test_import_twice_reports_zero_new(capsys, tmp_path):
    db = str(tmp_path / "paw.db")
    args = ("import", "medmcqa", str(FIXTURES / "medmcqa.jsonl"), "--db", db)
    paw(capsys, *args)
    code, out, _ = paw(capsys, *args)
    assert code == 0 and "0 new items in dataset 'medmcqa' (3 valid rows, 3 already " \
                         "present)" in out


def test_import_with_map_file_and_skip_bad(capsys, tmp_path):
    db = str(tmp_path / "paw.db")
    mapping = tmp_path / "map.json"
    mapping.write_text('{"id": "qid", "question": "stem", "options": ["opA", "opB", "opC", '
                       '"opD", "opE"], "answer": "correct", "subject": "specialty"}')
    data = tmp_path / "mixed.csv"
    data.write_text((FIXTURES / "generic.csv").read_text() + "g4,Bad?,x,y,,,,E,Z\n")
    code, out, _ = paw(capsys, "import", "csv", str(data), "--map-file", str(mapping),
                       "--skip-bad", "--db", db)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith(f"{data}: 3 new items in dataset 'mixed'")
    assert lines[1] == "skipped 1 bad row: 1 gold not among options"
    assert lines[2] == f"  {data}:5: correct: expected one of A, B, got 'E'"


@pytest.mark.parametrize(("args", "expected"), [
    (("import", "medqa", "missing.jsonl"), "paw: error: missing.jsonl: no such file"),
    (("import", "medqa", "{dir}"), "paw: error: {dir}: expected a file, got a directory"),
    (("import", "nosuch", "{fixture}"), "paw: error: format: expected one of medqa, "),
    (("import", "jsonl", "{fixture}", "--map", "{bad"),
     "paw: error: --map: expected a JSON object, got invalid JSON"),
    (("import", "jsonl", "{fixture}", "--map", "{}", "--map-file", "x.json"),
     "paw: error: --map, --map-file: expected one of them, got both"),
])
def test_user_errors_are_one_line(capsys, tmp_path, args, expected):
    fixture = str(FIXTURES / "medqa.jsonl")
    argv = [a.replace("{fixture}", fixture).replace("{dir}", str(tmp_path)) for a in args]
    argv += ["--db", str(tmp_path / "p.db")]
    expected = expected.replace("{dir}", str(tmp_path))
    code, out, err = paw(capsys, *argv)
    assert code == 1 and out == ""
    assert err.startswith(expected) and err.count("\n") == 1, err


def test_argument_mistakes_do_not_create_a_database(capsys, tmp_path):
    db = tmp_path / "paw.db"
    paw(capsys, "import", "medqa", str(tmp_path / "nope.jsonl"), "--db", str(db))
    paw(capsys, "import", "medqb", str(FIXTURES / "medqa.jsonl"), "--db", str(db))
    assert not db.exists()


def test_map_file_not_utf8_is_one_line(capsys, tmp_path):
    mapping = tmp_path / "map.json"
    mapping.write_bytes(b'{"question": "st\xe9m"}')
    code, _, err = paw(capsys, "import", "csv", str(FIXTURES / "generic.csv"), "--map-file",
                       str(mapping), "--db", str(tmp_path / "p.db"))
    assert code == 1
    assert err == f"paw: error: {mapping}: expected UTF-8 JSON, got byte 0xe9\n"


def test_bad_file_via_python_dash_m_is_one_line_without_traceback(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"id": "a", "question": "Q?", "options": ["x", "y"], "answer": "A"}\n'
                    b'{"id": "b", "question": "Q?", "options": ["x"], "answer": "A"}\n')
    db = tmp_path / "paw.db"
    result = subprocess.run(
        [sys.executable, "-m", "workbench", "import", "jsonl", str(bad), "--db", str(db)],
        capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (f"paw: error: {bad}:2: options: expected at least two options, "
                             "got 1 (nothing imported: the import stops at the first bad "
                             "row; --skip-bad imports the valid rows and lists the bad "
                             "ones)\n")
    assert db.exists() and open_db(db).execute("SELECT COUNT(*) FROM items").fetchone()[0] == 0


def test_demo_imports_the_shipped_set_and_describes_it(capsys, tmp_path):
    db = str(tmp_path / "paw.db")
    shipped = load_demo_items()
    n_mcq = sum(i.kind == "mcq" for i in shipped)
    n_binary = sum(i.kind == "binary" for i in shipped)
    code, out, _ = paw(capsys, "demo", "--import-only", "--db", db)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"demo set: {len(shipped)} new items ({len(shipped)} in the package)"
    (row,) = [line for line in lines if line.split()[:2] == ["demo", "jsonl"]]
    assert row.split()[:5] == ["demo", "jsonl", str(len(shipped)), str(n_mcq), str(n_binary)]
    assert f"first item ({shipped[0].source_id}, {shipped[0].kind})" in out
    stored = get_items(open_db(db), "demo")
    assert [i.source_id for i in stored] == [i.source_id for i in shipped]
    # Running it again adds nothing.
    code, out, _ = paw(capsys, "demo", "--import-only", "--db", db)
    assert out.splitlines()[0] == f"demo set: 0 new items ({len(shipped)} in the package)"


def test_import_help_lists_every_format(capsys):
    code, out, _ = paw(capsys, "import", "--help")
    assert code == 0
    listed = {line.split()[0] for line in out.split("FORMAT is one of:")[1]
              .split("Options:")[0].splitlines() if line.startswith("    ") and
              not line.startswith("      ")}
    assert listed == set(FORMATS)
