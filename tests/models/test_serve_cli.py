"""`paw serve` and `--servers` as a user runs them: real processes, real exit codes.

- a run that ends with error rows exits 1 and says how many;
- a pool whose every server is dead ends the run with exit 1, nothing stored as an error;
- `paw serve` stops its servers on SIGTERM as on Ctrl-C.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from store import open_db
from workbench.models import default_model
from workbench.models.pool import free_port, is_up, start_pool

pytestmark = pytest.mark.model

pytest.importorskip("fastapi", reason="the server extra: pip install 'paw-workbench[server]'")

ROOT = Path(__file__).resolve().parents[2]


def _paw(*args: str, db: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PAW_SERVERS", None)
    return subprocess.run([sys.executable, "-m", "workbench", *args, "--db", str(db)],
                          capture_output=True, text=True, timeout=timeout, env=env,
                          check=False)


def _dataset(tmp_path: Path) -> Path:
    rows = [{"id": "short", "question": "Which organ makes insulin?",
             "options": {"A": "Pancreas", "B": "Liver"}, "answer": "A"},
            {"id": "long", "question": "Which organ makes insulin? " +
             "The patient is stable. " * 150, "options": {"A": "Pancreas", "B": "Liver"},
             "answer": "A"}]
    path = tmp_path / "two.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_error_rows_make_the_run_exit_1_saying_how_many(tmp_path) -> None:
    db = tmp_path / "paw.db"
    assert _paw("demo", "--import-only", db=db).returncode == 0
    assert _paw("import", "jsonl", str(_dataset(tmp_path)), "--name", "two",
                db=db).returncode == 0
    model = default_model(open_db(memory=True))
    with start_pool(model.path, 1, engine="python", threads=1, ctx=320,
                    log_dir=tmp_path / "logs") as pool:  # the long prompt gets HTTP 400
        done = _paw("run", "--dataset", "two", "--mode", "direct", "--servers",
                    pool.urls[0], db=db)
    assert done.returncode == 1, done.stderr
    assert "1 generation(s) ended in error" in done.stderr
    assert "new, 1 errors" in done.stdout  # the short one was stored


def test_a_dead_pool_exits_1_and_stores_no_error(tmp_path) -> None:
    db = tmp_path / "paw.db"
    assert _paw("demo", "--import-only", db=db).returncode == 0
    dead = f"http://127.0.0.1:{free_port()}"
    done = _paw("audit", "--dataset", "demo", "--limit", "1", "--no-judge", "--servers",
                dead, db=db)
    assert done.returncode == 1
    assert "no server of the pool answers" in done.stderr
    assert "Traceback" not in done.stderr
    count = open_db(str(db)).execute("SELECT COUNT(*) FROM generations").fetchone()[0]
    assert count == 0


def test_paw_serve_stops_its_servers_on_sigterm(tmp_path) -> None:
    db = tmp_path / "paw.db"
    assert _paw("demo", "--import-only", db=db).returncode == 0
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    serve = subprocess.Popen([sys.executable, "-m", "workbench", "serve", "--engine",
                              "python", "--servers", "1", "--port", str(port), "--db",
                              str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env)
    url = f"http://127.0.0.1:{port}"
    printed = [serve.stdout.readline() for _ in range(2)]  # its URL line, then PAW_SERVERS=
    assert printed[1].strip() == f"PAW_SERVERS={url}", printed
    assert is_up(url)
    with urllib.request.urlopen(url + "/v1/models", timeout=5) as reply:
        assert reply.status == 200
    serve.send_signal(signal.SIGTERM)
    serve.wait(timeout=30)
    assert not is_up(url)  # the server process went with it
    assert "stopping the servers" in serve.stderr.read()


def test_paw_serve_restarts_a_killed_server_and_says_when_it_is_ready(tmp_path) -> None:
    import queue
    import re
    import threading
    import time

    db = tmp_path / "paw.db"
    assert _paw("demo", "--import-only", db=db).returncode == 0
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    serve = subprocess.Popen([sys.executable, "-m", "workbench", "serve", "--engine",
                              "python", "--servers", "1", "--port", str(port), "--db",
                              str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in serve.stderr],
                     daemon=True).start()
    try:
        first = serve.stdout.readline()
        pid = int(re.search(r"\(pid (\d+),", first).group(1))
        os.kill(pid, signal.SIGKILL)
        said: list[str] = []
        deadline = time.monotonic() + 300
        while not any("is ready again" in line for line in said):
            assert time.monotonic() < deadline, said
            try:
                said.append(lines.get(timeout=5))
            except queue.Empty:
                continue
        assert any("exited (code -9" in line and "restarting it in 1 s" in line
                   for line in said), said
        restarted = [line for line in said if "restarted (pid" in line]
        assert restarted and f"(pid {pid})" not in restarted[0]
        assert is_up(f"http://127.0.0.1:{port}")  # the same URL answers again
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=30)
    assert not is_up(f"http://127.0.0.1:{port}")
