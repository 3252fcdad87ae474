"""`paw audits` / `paw runs` and `paw audits show` on stores written by the real code, and a
real `paw audit` process killed with SIGKILL showing as interrupted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from store import open_db
from store.runs import list_runs, role_counts
from tests.cli.test_flips_cli import paw
from workbench.datasets.demo import import_demo

PAW = [sys.executable, "-m", "workbench"]


def test_audits_lists_one_line_per_run(capsys, fake_audit):
    path, outcome = fake_audit
    code, out, err = paw(capsys, "audits", "--db", path)
    assert code == 0, err
    header, _, line = out.splitlines()
    assert header.split() == ["id", "name", "kind", "dataset", "models", "status", "jobs",
                              "gen", "wall", "created", "(UTC)"]
    fields = line.split()
    assert fields[:7] == ["1", outcome.audit, "audit", "demo", "fake", "finished", "14/14"]
    # The alias prints the same, and --db may come before the command.
    assert paw(capsys, "--db", path, "runs")[1] == out


def test_audits_json_and_kind_filter(capsys, fake_audit):
    path, _ = fake_audit
    _, out, _ = paw(capsys, "audits", "--json", "--db", path)
    [run] = json.loads(out)
    db = open_db(path)
    assert run == list_runs(db)[0].as_dict()
    assert (run["status"], run["jobs_done"], run["jobs_total"]) == ("finished", 14, 14)
    assert run["last_session"]["command"] == "audit"
    _, out, _ = paw(capsys, "audits", "--kind", "study", "--db", path)
    assert out.startswith("nothing stored yet")


def test_audits_show_gives_blocks_and_the_report_command(capsys, fake_audit):
    path, outcome = fake_audit
    code, out, err = paw(capsys, "audits", "show", outcome.audit, "--db", path)
    assert code == 0, err
    assert out.startswith(f"audit 1 {outcome.audit}: finished")
    counts = role_counts(open_db(path), 1)
    table = {line.split()[0]: line.split()[1:] for line in out.splitlines()
             if line.split() and line.split()[0] in ("baseline", "direct", "M", "F",
                                                     "shuffle")}
    assert table["M"][:2] == [str(counts["m_block"]["done"])] * 2
    assert table["F"][:2] == [str(counts["f_block"]["done"])] * 2
    assert list(table) == ["baseline", "direct", "M", "F", "shuffle"]  # the audit's order
    assert f"report: paw report --audit {outcome.audit} --db {path}" in out
    assert f"flips:  paw flips --audit {outcome.audit} --db {path}" in out
    _, js, _ = paw(capsys, "audits", "show", "1", "--json", "--db", path)
    blocks = {b["block"]: b for b in json.loads(js)["blocks"]}
    assert blocks["baseline"] == {"block": "baseline", "done": 2, "total": 2, "pending": 0,
                                  "error": 0, "not_fired": 0}
    code, _, err = paw(capsys, "audits", "show", "nope", "--db", path)
    assert code == 1 and "no audit, run or study 'nope'" in err


def test_status_rule_is_in_the_help(capsys):
    _, out, _ = paw(capsys, "audits", "--help")
    text = " ".join(out.split())  # click re-wraps the epilog
    assert "interrupted" in text and "pid no longer exists" in text and "heartbeat" in text


@pytest.mark.model
def test_a_sigkilled_audit_is_listed_as_interrupted(tmp_path, capsys):
    """A real `paw audit` on the embedded model is killed mid-run (SIGKILL: no cleanup)."""
    path = str(tmp_path / "paw.db")
    db = open_db(path, create=True)
    import_demo(db)
    db.conn.close()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen(
        [*PAW, "audit", "--dataset", "demo", "--limit", "3", "--operators", "M", "--no-judge",
         "--max-tokens", "24", "--threads", "1", "--name", "killed", "--db", path],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen_running = False
    deadline = time.monotonic() + 300
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            runs = list_runs(open_db(path)) if Path(path).exists() else []
            if runs and runs[0].status == "running" and runs[0].jobs_done >= 1:
                seen_running = True
                break
            time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert seen_running, "the audit finished or never started before it could be killed"
    assert proc.returncode == -signal.SIGKILL
    _, out, _ = paw(capsys, "audits", "--db", path)
    fields = out.splitlines()[2].split()
    assert fields[1] == "killed" and fields[5] == "interrupted"
    done, total = map(int, fields[6].split("/"))
    assert 1 <= done < total  # what finished is stored; the rest is not
    _, out, _ = paw(capsys, "audits", "show", "killed", "--db", path)
    assert "last session: `paw audit` running" in out  # what the dead process left
    assert "interrupted: run the same command again to resume" in out
