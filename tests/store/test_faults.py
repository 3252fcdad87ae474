"""Faults a user can meet, each one line naming the cause and nothing half-done: a database
from a newer PAW, read-only files, a write lock held too long, a full disk, a missing table,
a missing --db file, an import that fails midway; and `paw backup` while a writer is open."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

import store.db as store_db
from store import open_db, transaction
from store.backup import backup
from store.db import SCHEMA_VERSION
from store.errors import UserError
from workbench.cli import cli, main

MEDQA = Path(__file__).resolve().parents[1] / "fixtures" / "datasets" / "medqa.jsonl"


def paw(capsys, *args: str) -> tuple[int, str, str]:
    """Run `paw` through its real entry point (the one-line error handling included)."""
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _checkpointed(path: str) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def test_a_newer_schema_version_is_refused_naming_both_and_never_written(db_path, capsys):
    conn = sqlite3.connect(db_path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 2}")
    conn.close()
    _checkpointed(db_path)
    before = _digest(db_path)
    with pytest.raises(UserError, match=f"schema version {SCHEMA_VERSION + 2}.*knows schema "
                                        f"version {SCHEMA_VERSION}"):
        open_db(db_path)
    code, _, err = paw(capsys, "import", "medqa", str(MEDQA), "--db", db_path)
    assert code == 1 and err.count("\n") == 1 and "newer PAW" in err
    _checkpointed(db_path)
    assert _digest(db_path) == before


def test_an_unknown_migration_is_refused_naming_it(db_path):
    conn = sqlite3.connect(db_path)
    conn.execute("INSERT INTO _migrations (name, applied_at) VALUES ('m999_from_the_future', 't')")
    conn.commit()
    conn.close()
    with pytest.raises(UserError, match="m999_from_the_future.*knows schema version"):
        open_db(db_path)


def test_a_read_only_database_names_the_cause(db_path, capsys, monkeypatch):
    # Root (as in CI) ignores file modes, so the read-only file is opened the way SQLite
    # opens one it may not write (mode=ro), and the permission check sees what a user would.
    real_connect = sqlite3.connect

    def read_only(path, *args, **kwargs):
        if str(path) == db_path:
            return real_connect(f"file:{path}?mode=ro", *args, uri=True, **kwargs)
        return real_connect(path, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", read_only)
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: real_access(path, mode) and not (
        str(path) == db_path and mode == os.W_OK))
    code, _, err = paw(capsys, "import", "medqa", str(MEDQA), "--db", db_path)
    assert code == 1
    assert err.strip() == (f"paw: error: {db_path}: the database file is read-only (SQLite "
                           "said: attempt to write a readonly database)")


def test_a_read_only_folder_names_the_folder(tmp_path, monkeypatch):
    path = tmp_path / "paw.db"
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: real_access(p, mode) and not (
        Path(p) == tmp_path and mode == os.W_OK))
    message = store_db.describe_sqlite_error(
        sqlite3.OperationalError("unable to open database file"), str(path))
    assert f"folder {tmp_path} is read-only" in message and "paw.db-wal" in message


def test_a_write_lock_held_past_the_busy_timeout_is_one_line(db_path, capsys, monkeypatch):
    monkeypatch.setattr(store_db, "BUSY_TIMEOUT_MS", 200)
    holder = sqlite3.connect(db_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        code, _, err = paw(capsys, "import", "medqa", str(MEDQA), "--db", db_path)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert code == 1 and err.count("\n") == 1
    assert "another process held the write lock longer than the 0.2 s busy timeout" in err
    assert open_db(db_path).execute("SELECT COUNT(*) FROM datasets").fetchone()[0] == 0


def test_a_full_disk_is_named_and_the_import_leaves_nothing(db_path, capsys, monkeypatch):
    # SQLite's max_page_count gives the same SQLITE_FULL a full disk does.
    real_connect = store_db.connect

    def small(path):
        conn = real_connect(path)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
        return conn

    monkeypatch.setattr(store_db, "connect", small)
    big = Path(db_path).with_name("big.jsonl")
    line = MEDQA.read_text(encoding="utf-8").splitlines()[0]
    import json

    record = json.loads(line)
    with big.open("w", encoding="utf-8") as out:
        for i in range(400):
            out.write(json.dumps({**record, "question": f"{record['question']} {i} " * 20})
                      + "\n")
    code, _, err = paw(capsys, "import", "medqa", str(big), "--db", db_path)
    assert code == 1 and "the disk is full" in err and err.count("\n") == 1
    monkeypatch.undo()
    assert open_db(db_path).execute("SELECT COUNT(*) FROM datasets").fetchone()[0] == 0


def test_a_missing_table_is_named(db_path, capsys):
    conn = sqlite3.connect(db_path)
    conn.execute("DROP TABLE adjudications")
    conn.close()
    code, _, err = paw(capsys, "datasets", "--db", db_path)
    assert code == 1 and "table adjudications missing" in err and err.count("\n") == 1


def test_a_missing_db_file_is_an_error_but_import_creates_one(tmp_path, capsys):
    path = str(tmp_path / "new.db")
    code, _, err = paw(capsys, "datasets", "--db", path)
    assert code == 1 and "no such database" in err and not Path(path).exists()
    code, out, err = paw(capsys, "import", "medqa", str(MEDQA), "--db", path)
    assert code == 0 and Path(path).exists(), err


def test_an_import_failing_midway_leaves_no_dataset_row(db_path, monkeypatch):
    import workbench.datasets.importers as importers
    from store.datasets import add_items

    def fails_after_some(db, dataset_id, items):
        add_items(db, dataset_id, items[:1])
        raise RuntimeError("killed midway")

    monkeypatch.setattr(importers, "add_items", fails_after_some)
    db = open_db(db_path)
    with pytest.raises(RuntimeError):
        importers.import_file(db, "medqa", MEDQA)
    assert db.execute("SELECT COUNT(*) FROM datasets").fetchone()[0] == 0
    assert db.execute("SELECT COUNT(*) FROM items").fetchone()[0] == 0


def test_nested_transactions_roll_back_only_their_part(db):
    with transaction(db) as conn:
        conn.execute("INSERT INTO datasets (name, format, created_at) VALUES ('a', 'x', 't')")
        with pytest.raises(ValueError):
            with transaction(db) as inner:
                inner.execute("INSERT INTO datasets (name, format, created_at) "
                              "VALUES ('b', 'x', 't')")
                raise ValueError
    assert [r[0] for r in db.execute("SELECT name FROM datasets")] == ["a"]


def test_backup_is_consistent_while_a_writer_is_open_and_cp_is_not(db_path, tmp_path, capsys):
    writer = open_db(db_path)
    writer.execute("PRAGMA wal_autocheckpoint = 0")  # keep every commit in the WAL
    for i in range(50):
        writer.execute("INSERT INTO datasets (name, format, created_at) VALUES (?, 'x', 't')",
                       [f"d{i}"])
    # What `cp paw.db` copies while the app runs: the main file without its WAL.
    naive = tmp_path / "cp-copy.db"
    shutil.copyfile(db_path, naive)
    assert sqlite3.connect(naive).execute("SELECT COUNT(*) FROM datasets").fetchone()[0] == 0
    dest = tmp_path / "backup.db"
    code, out, err = paw(capsys, "backup", str(dest), "--db", db_path)
    assert code == 0 and "integrity ok" in out, err
    copy = sqlite3.connect(dest)
    assert copy.execute("SELECT COUNT(*) FROM datasets").fetchone()[0] == 50
    assert copy.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    code, _, err = paw(capsys, "backup", str(dest), "--db", db_path)
    assert code == 1 and "already exists" in err
    assert not dest.with_name("backup.db.partial").exists()
    with pytest.raises(UserError, match="no such database"):
        backup(tmp_path / "none.db", tmp_path / "x.db")
    writer.conn.close()


def test_every_command_has_help(capsys):
    result = CliRunner().invoke(cli, ["backup", "--help"])
    assert result.exit_code == 0 and "online backup" in result.output
