"""`paw audit --items` / `--items-file`: the audit's items chosen by id (the demo's yes/no
triage questions are reached without another file), through the real entry point, planner and
engine, the fake backend standing in for llama.cpp; and each mistake one line."""

from __future__ import annotations

import json

import pytest

from store import open_db
from store.models import add_model
from tests.audit.test_cli_audit import paw
from workbench.datasets.demo import import_demo
from workbench.engine import AuditEngine
from workbench.models.fake import FakeBackend
from workbench.models.prompts import PLAIN_CHAT_TEMPLATE

CHAIN = "Step 1: The findings point to the first option.\nAnswer: "


def _respond(prompt: str, sampler) -> str:
    return CHAIN + ("Yes" if "Yes" in prompt[-300:] else "A")


@pytest.fixture
def store(tmp_path, monkeypatch) -> str:
    """The demo set and a fake model in a real file; `paw audit` runs on the fake backend."""
    path = str(tmp_path / "paw.db")
    db = open_db(path, create=True)
    import_demo(db)
    add_model(db, name="fake", path="/nowhere/fake.gguf", sha256="f" * 64,
              chat_template=PLAIN_CHAT_TEMPLATE)
    db.conn.close()
    monkeypatch.setattr("workbench.cli.audit.make_engine", lambda db, **_: AuditEngine(
        db, backend_factory=lambda model: FakeBackend(_respond)))
    return path


def _planned_items(path: str) -> tuple[list[str], list[str]]:
    db = open_db(path)
    config = json.loads(db.execute("SELECT config_json FROM audits").fetchone()[0])
    planned = [r[0] for r in db.execute(
        "SELECT DISTINCT i.source_id FROM jobs j JOIN items i ON i.id = j.item_id "
        "WHERE j.role = 'baseline' ORDER BY j.id")]
    return config["item_ids"], planned


AUDIT = ("audit", "--dataset", "demo", "--models", "fake", "--operators", "M4",
         "--no-direct", "--no-judge", "--max-tokens", "32")


def test_items_by_id_in_the_order_given(capsys, store):
    code, out, err = paw(capsys, *AUDIT, "--items", "triage-002, demo-003", "--db", store)
    assert code == 0, err
    assert _planned_items(store) == (["triage-002", "demo-003"], ["triage-002", "demo-003"])


def test_items_from_a_file_with_comments(capsys, store, tmp_path):
    chosen = tmp_path / "triage.txt"
    chosen.write_text("# the yes/no triage questions\ntriage-001\ntriage-003, triage-002\n\n",
                      encoding="utf-8")
    code, _, err = paw(capsys, *AUDIT, "--items-file", str(chosen), "--db", store)
    assert code == 0, err
    assert _planned_items(store)[1] == ["triage-001", "triage-003", "triage-002"]


def test_item_mistakes_are_one_line_and_plan_nothing(capsys, store, tmp_path):
    twice = tmp_path / "twice.txt"
    twice.write_text("demo-001\n\ndemo-001\n", encoding="utf-8")
    binary = tmp_path / "ids.parquet"
    binary.write_bytes(b"PAR1\x15\x00\xff\xfe" * 8)
    cases = [
        (("--items", "demo-001", "--limit", "2"),
         "--items, --limit: expected one way to choose the items, got 2"),
        (("--items", "demo-001", "--items-file", str(twice)),
         "--items, --items-file: expected one way to choose the items, got 2"),
        (("--items", " , "), "--items: expected at least one item id, got none"),
        (("--items-file", str(twice)),
         f"{twice} line 3: item 'demo-001' is named twice (first at {twice} line 1)"),
        (("--items-file", str(tmp_path / "none.txt")),
         f"--items-file {tmp_path / 'none.txt'}: no such file"),
        (("--items-file", str(binary)), f"--items-file {binary}: expected UTF-8 text"),
        (("--items", "demo-001,nope-9"),
         ("items: expected ids of dataset 'demo' (such as demo-001, demo-002, demo-003), "
          "got nope-9")),
    ]
    for args, message in cases:
        code, out, err = paw(capsys, *AUDIT, *args, "--db", store)
        assert code == 1 and out == "", (args, err)
        assert err.startswith(f"paw: error: {message}") and err.count("\n") == 1, (args, err)
    assert open_db(store).execute("SELECT COUNT(*) FROM audits").fetchone()[0] == 0
