"""Durability on a real SQLite file: SIGKILL mid-session loses nothing committed; two rater
processes labelling 1,000 cases each at once lose nothing and never see "database is
locked"; the global hash chain stays intact under that interleaving."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from annotate.sets.audit import create_set
from annotate.trust.people import register
from annotate.verification.verify import verify_chain
from store import open_db
from tests.annotate.conftest import PASSPHRASE, child_env, make_audit, save_to_file

WORKER = [sys.executable, "-m", "tests.annotate.label_worker"]


def _store_with_set(tmp_path, n_items: int, families=("M2", "M3", "M4", "M5")) -> str:
    db = open_db(memory=True)
    audit = make_audit(db, n_items, arms=("smollm2/cot",), families=families)
    register(db, "alice", "rater", PASSPHRASE)
    register(db, "bob", "rater", PASSPHRASE)
    carol = register(db, "carol", "coordinator", PASSPHRASE)
    create_set(db, audit.audit_id, n_items * len(families), per_family=None, name="s",
               raters=("alice", "bob"), coordinator=carol)
    return save_to_file(db, tmp_path / "paw.db")


def test_sigkill_mid_session_keeps_every_label_reported_committed(tmp_path):
    path = _store_with_set(tmp_path, 100)  # 400 cases
    proc = subprocess.Popen([*WORKER, path, "alice", "s", "400"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=child_env(),
                            cwd=child_env()["PYTHONPATH"])
    reported = []
    for line in proc.stdout:
        if line.startswith("EVENT"):
            reported.append(line.split())
        if len(reported) >= 40:
            break
    os.kill(proc.pid, signal.SIGKILL)
    reported += [line.split() for line in proc.stdout.read().splitlines()
                 if line.startswith("EVENT")]
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert not any(line[0] == "DONE" for line in reported)  # really killed mid-session
    db = open_db(path)
    from annotate.labels import opened_events

    stored = {row["id"]: (row["code"], row["value"]) for row in opened_events(db, "1", [])}
    for _, event_id, code, value in reported:
        assert stored.get(int(event_id)) == (code, value)
    assert len(stored) >= len(reported) >= 40
    assert verify_chain(db).ok


def test_two_raters_label_1000_cases_each_concurrently(tmp_path):
    path = _store_with_set(tmp_path, 1000, families=("M5",))  # 1,000 cases
    procs = [subprocess.Popen([*WORKER, path, rater, "s", "1000"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=child_env(),
                              cwd=child_env()["PYTHONPATH"])
             for rater in ("alice", "bob")]
    outputs = [p.communicate(timeout=300) for p in procs]
    for proc, (out, err) in zip(procs, outputs):
        assert "database is locked" not in err
        assert proc.returncode == 0, err[-2000:]
        assert out.splitlines()[-1] == "DONE 1000"
    db = open_db(path)
    counts = dict(db.execute("SELECT p.name, COUNT(*) FROM label_events e JOIN people p "
                             "ON p.id = e.person_id GROUP BY p.name").fetchall())
    # Each gold-shift label is two events, itself and its (empty) new answer, written in
    # one transaction: the reported id and the next one.
    assert counts == {"alice": 2000, "bob": 2000}
    reported = {int(line.split()[1]) for out, _ in outputs for line in out.splitlines()
                if line.startswith("EVENT")}
    stored = {row[0] for row in db.execute("SELECT id FROM label_events")}
    assert reported | {i + 1 for i in reported} == stored and len(stored) == 4000
    report = verify_chain(db)
    assert report.ok and report.n_events == 4000
