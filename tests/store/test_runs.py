"""store.runs: the run listing and the derived status (running / interrupted / finished)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest

from store.db import open_db
from store.errors import NotFound
from store.jobs import create_audit, finish_session, heartbeat, start_session
from store.runs import STALE_AFTER_S, find_run, list_runs, process_alive, run_status
from tests.builders import AuditBuilder


def _dead_pid() -> int:
    """A pid that existed and is gone (a finished child)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_process_alive_on_this_host_checks_the_pid():
    host = socket.gethostname()
    assert process_alive(os.getpid(), host, None)
    assert not process_alive(_dead_pid(), host, None)
    assert not process_alive(None, host, None)  # a session older than m004


def test_process_alive_on_another_host_uses_the_heartbeat():
    now = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
    fresh = (now - timedelta(seconds=STALE_AFTER_S - 1)).isoformat()
    stale = (now - timedelta(seconds=STALE_AFTER_S + 1)).isoformat()
    assert process_alive(123, "elsewhere.invalid", fresh, now=now)
    assert not process_alive(123, "elsewhere.invalid", stale, now=now)
    assert not process_alive(123, "elsewhere.invalid", None, now=now)


@pytest.mark.parametrize("recorded, sessions, expected", [
    ("planned", [], "planned"),
    ("finished", [], "finished"),
    ("finished", [{"status": "finished"}], "finished"),
    ("stopped", [{"status": "stopped"}], "interrupted"),       # cancelled: resumable
    ("failed", [{"status": "failed"}], "interrupted"),
    # The process was killed: the row still says running, but nobody is working.
    ("running", [{"status": "running", "pid": None}], "interrupted"),
    # A re-run after an earlier finish is running now.
    ("running", [{"status": "finished"}, {"status": "running", "pid": os.getpid(),
                                          "host": socket.gethostname()}], "running"),
    ("finished", [{"status": "finished"}], "finished"),
    # A finished audit whose later session was killed is not 'finished'.
    ("finished", [{"status": "finished"}, {"status": "running", "pid": None}],
     "interrupted"),
])
def test_run_status(recorded, sessions, expected):
    rows = [{"pid": None, "host": None, "heartbeat_at": None} | s for s in sessions]
    assert run_status(recorded, rows) == expected


def test_a_store_without_sessions_is_finished_when_every_job_is_done():
    assert run_status("done", [], complete=True) == "finished"
    assert run_status("done", [], complete=False) == "interrupted"


def test_list_runs_counts_jobs_generations_and_wall_time(db):
    b = AuditBuilder(db, audit="panel")
    arm = b.arm("smol/cot")
    for i in range(3):
        q = b.item(f"q{i}")
        b.baseline(arm, q, answer="A")
        b.perturbed(arm, q, operator_id="M5_severity_a", answer="B")
        b.perturbed(arm, q, operator_id="M2_sex", fired=False)
    (run,) = list_runs(db)
    assert (run.name, run.kind, run.dataset, run.models) == ("panel", "audit", "synthetic",
                                                             ("smol",))
    assert (run.jobs_done, run.jobs_total, run.not_fired) == (6, 6, 3)
    assert run.generations == 6
    audit_id = run.id
    session = start_session(db, "audit", audit_id=audit_id)
    assert find_run(db, "panel").status == "running"  # this very process
    finish_session(db, session, "finished", 0)
    db.execute("UPDATE audits SET status = 'finished' WHERE id = ?", [audit_id])
    info = find_run(db, audit_id)
    assert info.status == "finished" and info.wall_s >= 0
    assert info.as_dict()["last_session"]["status"] == "finished"


def test_find_run_by_name_id_kind_and_latest(db):
    ds = AuditBuilder(db, audit="a1").dataset_id
    create_audit(db, "r1", "run", ds, {"x": 1})
    create_audit(db, "s1", "study", ds, {"x": 2})
    assert find_run(db, None).name == "s1"           # latest, not a plain run
    assert find_run(db, None, "audit").name == "a1"
    assert find_run(db, "1").name == "a1"             # by id
    assert find_run(db, "r1").kind == "run"
    with pytest.raises(NotFound, match="no study 'a1'"):
        find_run(db, "a1", "study")
    with pytest.raises(NotFound, match="stored: 1 a1"):
        find_run(db, "nope")


def test_a_killed_process_leaves_an_interrupted_run(tmp_path):
    """A real child process opens the store, starts a session and is SIGKILLed."""
    path = tmp_path / "paw.db"
    db = open_db(path)
    ds = AuditBuilder(db, audit="a1").dataset_id
    audit = create_audit(db, "killed", "study", ds, {})
    code = (
        "import os, signal, sys; sys.path.insert(0, %r)\n"
        "from store.db import open_db\n"
        "from store.jobs import start_session\n"
        "db = open_db(%r)\n"
        "start_session(db, 'study', audit_id=%d)\n"
        "db.execute(\"UPDATE audits SET status = 'running' WHERE id = %d\")\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    ) % (os.getcwd(), str(path), audit.id, audit.id)
    child = subprocess.run([sys.executable, "-c", code], check=False)
    assert child.returncode == -9
    info = find_run(db, "killed")
    assert info.last_session["status"] == "running"   # what the dead process left behind
    assert info.status == "interrupted"


def test_heartbeat_updates_the_session(db):
    ds = AuditBuilder(db, audit="a1").dataset_id
    audit = create_audit(db, "beat", "dbpa", ds, {})
    session = start_session(db, "dbpa", audit_id=audit.id)
    before = db.execute("SELECT heartbeat_at FROM sessions WHERE id = ?", [session]).fetchone()
    heartbeat(db, session)
    after = db.execute("SELECT heartbeat_at FROM sessions WHERE id = ?", [session]).fetchone()
    assert after[0] > before[0]
