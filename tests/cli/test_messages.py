"""Issue 34, criterion 7: the unclear or silent outcomes the review found (those outside
importing), each now one line that names the file, option or event and what was expected,
with nothing stored changed. (`paw annotate merge EMPTYDIR`: tests/annotate/
test_record_head.py; merge refusals naming file and event: tests/annotate/
test_rater_file_order.py.)"""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from store import open_db
from tests.paw_cli import paw

ROWS = '{"id": "1", "question": "Q?", "options": {"A": "a", "B": "b"}, "answer": "A"}\n'


def one_line(err: str) -> bool:
    return err.startswith("paw: error: ") and err.count("\n") == 1 and "Traceback" not in err


@pytest.fixture
def store(tmp_path) -> str:
    path = str(tmp_path / "paw.db")
    rows = tmp_path / "rows.jsonl"
    rows.write_text(ROWS, encoding="utf-8")
    db = open_db(path, create=True)
    db.conn.close()
    return path


def test_a_symlink_loop_is_named_as_one(capsys, tmp_path, store):
    os.symlink("loop.db", tmp_path / "loop.db")
    os.symlink("loop.jsonl", tmp_path / "loop.jsonl")
    for argv, fragment in (
            (["audits", "--db", str(tmp_path / "loop.db")], "loop.db: a symbolic link loop"),
            (["verify", "--db", str(tmp_path / "loop.db")], "loop.db: a symbolic link loop"),
            (["import", "jsonl", str(tmp_path / "loop.jsonl"), "--db", store],
             "loop.jsonl: a symbolic link loop"),
            (["backup", str(tmp_path / "loop.db"), "--db", store],
             "DEST " + str(tmp_path / "loop.db") + ": a symbolic link loop")):
        code, _, err = paw(capsys, *argv)
        assert code == 1 and one_line(err) and fragment in err, (argv, err)
    os.symlink("gone.db", tmp_path / "dangling.db")
    code, _, err = paw(capsys, "audits", "--db", str(tmp_path / "dangling.db"))
    assert code == 1 and "dangling.db: no such database" in err


def test_a_zero_byte_file_is_not_turned_into_a_store(capsys, tmp_path):
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    for argv in (["audits"], ["datasets"], ["flips"]):
        code, _, err = paw(capsys, *argv, "--db", str(empty))
        assert code == 1 and one_line(err), err
        assert f"{empty}: an empty file (0 bytes), not a PAW database" in err
    assert empty.read_bytes() == b"" and not Path(f"{empty}-wal").exists()


def test_a_deleted_migrations_row_is_named(capsys, store):
    conn = sqlite3.connect(store)
    conn.execute("DELETE FROM _migrations WHERE name LIKE 'm007%'")
    conn.commit()
    conn.close()
    code, _, err = paw(capsys, "audits", "--db", store)
    assert code == 1 and one_line(err), err
    assert "damaged migration record: m007_" in err and "already exists" not in err
    from store.migrations import MIGRATIONS

    conn = sqlite3.connect(store)  # only the deleted row is missing; nothing was re-run
    assert conn.execute("SELECT COUNT(*) FROM _migrations").fetchone()[0] == len(MIGRATIONS) - 1
    conn.close()


def test_bytes_that_are_not_utf8_in_the_record_say_it_is_damaged(capsys, store, monkeypatch):
    monkeypatch.setenv("PW", "correct horse battery staple")
    code, _, err = paw(capsys, "raters", "add", "carol", "--role", "coordinator",
                       "--passphrase-env", "PW", "--db", store)
    assert code == 0, err
    conn = sqlite3.connect(store)
    conn.execute("UPDATE record_log SET content_json = CAST(x'7b2261223a2280ff227d' AS TEXT)")
    conn.commit()
    conn.close()
    code, _, err = paw(capsys, "verify", "--db", store)
    assert code == 1 and one_line(err), err
    assert ("the annotation record is damaged: a value of column 'content_json' is not "
            "UTF-8 text") in err


@pytest.mark.parametrize("argv", [
    ["import", "jsonl", "{dir}/rows.jsonl", "--name", ""],
    ["import", "jsonl", "{dir}/rows.jsonl", "--name", "   "],
    ["audit", "--dataset", "demo", "--models", "x", "--name", ""],
    ["study", "--dataset", "demo", "--models", "x", "--targets", "gender_swap", "--name", ""],
    ["annotate", "create", "--audit", "1", "--size", "4", "--raters", "a,b", "--name", ""],
])
def test_an_empty_name_is_refused_not_replaced(capsys, tmp_path, store, argv):
    code, _, err = paw(capsys, *[a.replace("{dir}", str(tmp_path)) for a in argv],
                       "--db", store)
    assert code == 2 and one_line(err), err
    assert "Invalid value for '--name': expected a name, got" in err
    conn = sqlite3.connect(store)
    assert conn.execute("SELECT COUNT(*) FROM datasets").fetchone()[0] == 0
    conn.close()


def test_an_absurd_time_on_item_is_refused(capsys, store):
    from annotate.codebook import MAX_TIME_ON_ITEM_MS

    for value in ("9223372036854775807", str(MAX_TIME_ON_ITEM_MS + 1)):
        code, _, err = paw(capsys, "label", "C-1", "--rater", "alice", "--field", "note",
                           "--value", "x", "--time-ms", value, "--db", store)
        assert code == 2 and one_line(err) and "--time-ms" in err, err
        assert f"{value} is not in the range" in err


@pytest.fixture
def tiny_disk(tmp_path):
    """A 64 KiB tmpfs (root only; skipped where mounting is not allowed)."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                          capture_output=True)
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    yield mount
    subprocess.run(["umount", str(mount)], check=False)


def test_a_full_destination_disk_is_blamed_on_the_destination(capsys, store, tiny_disk):
    db = open_db(store)
    db.conn.execute("CREATE TABLE filler(x)")
    db.conn.executemany("INSERT INTO filler VALUES (?)", [("x" * 1000,)] * 300)
    db.conn.commit()
    db.conn.close()
    dest = tiny_disk / "copy.db"
    code, _, err = paw(capsys, "backup", str(dest), "--db", store)
    assert code == 1 and one_line(err), err
    assert err.startswith(f"paw: error: {dest}: cannot write the backup: the disk holding it "
                          "is full"), err
    assert f"{store} is unchanged" in err and not list(tiny_disk.iterdir())
