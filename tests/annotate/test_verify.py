"""Tamper evidence: events altered, deleted or rebuilt with raw SQL are named by `paw verify`."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest

from annotate.events import record_label, start_session
from annotate.sets import create_set, rater_queue
from annotate.verify import verify_chain
from store import open_db
from tests.annotate.conftest import child_env, save_to_file


@pytest.fixture
def chain_file(db, audit, people, tmp_path) -> str:
    """A store file with 6 events by alice and bob (ids 1..6)."""
    create_set(db, audit.audit_id, 40, per_family=None, name="s")
    for name in ("alice", "bob", "alice"):
        person = people[name]
        session = start_session(db, person, "s")
        for view in rater_queue(db, "s", person)[:2]:
            record_label(db, person, session, view.code, "validity", "valid")
    return save_to_file(db, tmp_path / "paw.db")


def paw_verify(path: str, *args: str) -> subprocess.CompletedProcess:
    env = child_env()
    return subprocess.run([sys.executable, "-m", "workbench", "verify", "--db", path, *args],
                          capture_output=True, text=True, env=env, cwd=env["PYTHONPATH"])


def raw_sql(path: str, sql: str) -> None:
    conn = sqlite3.connect(path)
    conn.execute(sql)
    conn.commit()
    conn.close()


def test_intact_chain_verifies(chain_file):
    result = paw_verify(chain_file)
    assert result.returncode == 0, result.stderr
    assert "label chain ok: 6 events" in result.stdout


def test_an_altered_event_is_named(chain_file):
    raw_sql(chain_file, "UPDATE label_events SET value = 'invalid' WHERE id = 3")
    result = paw_verify(chain_file)
    assert result.returncode == 1
    assert "event 3: content altered" in result.stdout
    assert "event 4" not in result.stdout  # its link to event 3's stored hash still holds


def test_a_deleted_event_is_named(chain_file):
    raw_sql(chain_file, "DELETE FROM label_events WHERE id = 4")
    result = paw_verify(chain_file)
    assert result.returncode == 1
    assert "event 4 deleted" in result.stdout


def test_a_rebuilt_tail_is_caught_by_the_anchored_head(chain_file):
    head = verify_chain(open_db(chain_file)).head_hash
    # Deleting the newest event leaves a valid shorter chain: only the anchor can tell.
    raw_sql(chain_file, "DELETE FROM label_events WHERE id = 6")
    assert paw_verify(chain_file).returncode == 0
    result = paw_verify(chain_file, "--head", head)
    assert result.returncode == 1
    assert "anchored head" in result.stdout


def test_a_forged_replacement_with_a_valid_own_hash_breaks_the_next_link(db, audit, people):
    from annotate.events import event_hash

    create_set(db, audit.audit_id, 10, name="s")
    alice = people["alice"]
    session = start_session(db, alice, "s")
    for view in rater_queue(db, "s", alice)[:3]:
        record_label(db, alice, session, view.code, "gold_shift", "no_shift")
    row = dict(next(iter(db.query("SELECT * FROM label_events WHERE id = 2"))))
    row["value"] = "shifted"
    forged_hash = event_hash(row)
    db.execute("UPDATE label_events SET value = 'shifted', hash = ? WHERE id = 2", [forged_hash])
    report = verify_chain(db)
    assert [(p.event_id, p.kind) for p in report.problems] == [(3, "relinked")]
