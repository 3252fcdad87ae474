"""`--db` before or after the command, PAW_DB, and which wins; group commands that list what
they manage when called alone (`paw raters`)."""

from __future__ import annotations

from store import open_db
from tests.cli.test_flips_cli import paw
from workbench.datasets.demo import import_demo


def _demo_db(path) -> str:
    db = open_db(path, create=True)
    import_demo(db)
    db.conn.close()
    return str(path)


def test_db_before_or_after_the_command(capsys, tmp_path, monkeypatch):
    demo = _demo_db(tmp_path / "demo.db")
    empty = str(tmp_path / "empty.db")
    open_db(empty, create=True).conn.close()
    monkeypatch.delenv("PAW_DB", raising=False)
    after = paw(capsys, "datasets", "--db", demo)
    before = paw(capsys, "--db", demo, "datasets")
    assert after == before and after[0] == 0 and "demo" in after[1]
    monkeypatch.setenv("PAW_DB", demo)
    assert paw(capsys, "datasets") == after                     # PAW_DB alone
    assert "no datasets yet" in paw(capsys, "--db", empty, "datasets")[1]  # --db beats PAW_DB
    # Both given: the one after the command wins.
    assert paw(capsys, "--db", empty, "datasets", "--db", demo) == after
    # Subcommands of groups read it too.
    assert paw(capsys, "--db", demo, "audits")[1].startswith("nothing stored yet")


def test_db_before_the_command_creates_with_import(capsys, tmp_path):
    source = tmp_path / "q.jsonl"
    source.write_text('{"id": "q1", "question": "Q?", "options": {"A": "x", "B": "y"}, '
                      '"answer": "A"}\n', encoding="utf-8")
    target = tmp_path / "new.db"
    code, out, err = paw(capsys, "--db", str(target), "import", "jsonl", str(source))
    assert code == 0, err
    assert target.exists()
    assert "1 new item" in out
    # A missing database is an error for the other commands, wherever --db is written.
    code, _, err = paw(capsys, "--db", str(tmp_path / "typo.db"), "datasets")
    assert code == 1 and "typo.db: no such database" in err


def test_the_help_says_it_once(capsys):
    _, out, _ = paw(capsys, "--help")
    text = " ".join(out.split())
    assert "--db PATH before the command" in text and "PAW_DB" in text
    _, sub, _ = paw(capsys, "datasets", "--help")
    assert "paw --db, else PAW_DB" in " ".join(sub.split())


def test_raters_alone_lists_people_and_roles(capsys, tmp_path, monkeypatch):
    from annotate.trust.people import register

    path = _demo_db(tmp_path / "paw.db")
    _, out, _ = paw(capsys, "raters", "--db", path)
    assert out.startswith("no raters or coordinators yet")
    db = open_db(path)
    carol = register(db, "carol", "coordinator", "correct horse battery")
    register(db, "alice", "rater", "correct horse battery", by=carol)
    db.conn.close()
    code, out, err = paw(capsys, "--db", path, "raters")
    assert code == 0, err
    assert sorted(out.splitlines()) == ["alice\trater", "carol\tcoordinator"]
    assert out == paw(capsys, "raters", "list", "--db", path)[1]
