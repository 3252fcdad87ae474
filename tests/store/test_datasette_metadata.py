"""Datasette metadata generated from docs/schema.md, and m014's declared link from a job to
its generation: the committed file is the page's output, the page, the file and a migrated
store name the same tables and columns, the foreign key is declared and enforced, and a
store migrated from m013 keeps its rows."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import sqlite_utils

import store.migrations as migrations
from store.datasette_metadata import SCHEMA_DOC, dumps, main, metadata_from_schema
from tests.builders import AuditBuilder

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "datasette-metadata.json"


def _columns(db: sqlite_utils.Database, table: str) -> set[str]:
    return {r[1] for r in db.execute(f"PRAGMA table_xinfo([{table}])") if r[6] in (0, 2, 3)}


def test_the_committed_file_is_what_the_schema_page_gives():
    generated = dumps(metadata_from_schema(SCHEMA_DOC.read_text("utf-8")))
    assert COMMITTED.read_text("utf-8") == generated, (
        "docs/datasette-metadata.json is stale: python -m store.datasette_metadata "
        "> docs/datasette-metadata.json")


def test_metadata_and_store_name_the_same_tables_and_columns(db):
    tables = json.loads(COMMITTED.read_text("utf-8"))["databases"]["paw"]["tables"]
    assert set(tables) == set(db.table_names())
    for table in db.table_names():
        described = tables[table]["columns"]
        assert set(described) == _columns(db, table), table
        assert all(text.strip() for text in described.values()), table
        assert tables[table]["title"].startswith(f"{table}: ") and tables[table]["description"]
    jobs = tables["jobs"]
    assert jobs["title"] == "jobs: The plan"
    assert jobs["columns"]["generation_key"] == ("TEXT; the generations.key that answers it "
                                                 "(set at planning time)")
    assert jobs["columns"]["done_generation_key"].startswith("TEXT → generations.key")


def test_a_change_to_the_page_changes_the_metadata():
    text = SCHEMA_DOC.read_text("utf-8").replace(
        "| `status` | TEXT | `pending`, `done`,",
        "| `status` | TEXT | the state: `pending`, `done`,")
    changed = metadata_from_schema(text, database="demo")
    status = changed["databases"]["demo"]["tables"]["jobs"]["columns"]["status"]
    assert status.startswith("TEXT; the state: pending, done,")
    assert dumps(changed) != COMMITTED.read_text("utf-8")


def test_the_module_prints_it_and_names_a_missing_page(capsys, tmp_path):
    assert main(["--database", "demo"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(printed["databases"]) == {"demo"}
    assert main([str(tmp_path / "nope.md")]) == 1
    assert "nope.md: no such file (expected docs/schema.md)" in capsys.readouterr().err


def test_a_done_job_is_linked_to_its_generation(db):
    keys = [tuple(r[2:5]) for r in db.execute("PRAGMA foreign_key_list(jobs)")]
    assert ("generations", "done_generation_key", "key") in keys
    b = AuditBuilder(db, audit="link")
    arm = b.arm("m/cot")
    item = b.item("q1")
    b.baseline(arm, item, answer="A")
    key, linked = db.execute("SELECT generation_key, done_generation_key FROM jobs").fetchone()
    assert linked == key and db.execute(
        "SELECT COUNT(*) FROM generations WHERE key = ?", [linked]).fetchone()[0] == 1
    # A planned job names a generation still to come: allowed, and not linked yet.
    pending = b.job(arm, item, "direct", generation_key="f" * 64, status="pending")
    assert db.execute("SELECT done_generation_key FROM jobs WHERE id = ?",
                      [pending]).fetchone()[0] is None
    # Done without its generation stored: refused (the key is enforced, not decorative).
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
        db.execute("UPDATE jobs SET status = 'done' WHERE id = ?", [pending])


def test_a_store_from_m013_keeps_its_rows(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    old = sqlite_utils.Database(path)
    old.execute("PRAGMA foreign_keys = ON")
    at_m013 = [m for m in migrations.MIGRATIONS if m.__name__ != "m014_job_generation_link"]
    monkeypatch.setattr(migrations, "MIGRATIONS", at_m013)
    migrations.migrate(old)
    b = AuditBuilder(old, audit="before-m014")
    arm = b.arm("m/cot")
    for n in range(3):
        b.baseline(arm, b.item(f"q{n}"), answer="A")
    b.job(arm, b.item("q9"), "baseline", generation_key="e" * 64, status="pending")
    before = list(old.execute("SELECT id, generation_key, status FROM jobs ORDER BY id"))
    monkeypatch.undo()
    assert migrations.migrate(old) == ["m014_job_generation_link"]
    after = list(old.execute("SELECT id, generation_key, status, done_generation_key FROM jobs "
                             "ORDER BY id"))
    assert [row[:3] for row in after] == before
    assert [row[3] for row in after] == [key if status == "done" else None
                                         for _, key, status in before]
    assert old.execute("PRAGMA foreign_key_check").fetchall() == []
