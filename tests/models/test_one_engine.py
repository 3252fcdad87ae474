"""One engine per audit (issue 36.2): each generation records its engine; a run resumed on
another engine is refused unless `--allow-mixed-engines`, and then its report states the
mix per arm with counts.

The fast test uses two scripted backends that differ only in their engine; the `model`
test kills a real pool run (llama_cpp.server) and resumes it in-process.
"""

from __future__ import annotations

import pytest

from store import open_db
from store.errors import UserError
from workbench.audit import AuditSpec, run_audit
from workbench.datasets.demo import import_demo
from workbench.engine import AuditEngine
from workbench.kinds import build_run_report
from workbench.models.fake import FakeBackend
from workbench.perturb import resolve_operators


def _spec(name: str = "mixed") -> AuditSpec:
    return AuditSpec(name=name, dataset="demo", models=("default",),
                     templates=("neutral_cot@1",), operators=resolve_operators("M2_sex"),
                     item_ids=("demo-003", "demo-001"), max_tokens=24)


def _fake(engine: str) -> FakeBackend:
    backend = FakeBackend()
    backend.engine = engine
    return backend


def _stopper(after: int):
    calls = {"n": 0}

    def stop() -> bool:
        calls["n"] += 1
        return calls["n"] > after
    return stop


def test_a_resume_on_another_engine_is_refused_unless_allowed_then_reported() -> None:
    db = open_db(memory=True)
    import_demo(db)
    first = run_audit(db, _spec(), judge=False, should_stop=_stopper(2),
                      engine=AuditEngine(db, backend_factory=lambda m: _fake("engine-one")))
    assert first.stopped and first.generated == 2
    assert {r[0] for r in db.execute("SELECT engine FROM generations")} == {"engine-one"}
    status = db.execute("SELECT status FROM audits").fetchone()[0]
    other = AuditEngine(db, backend_factory=lambda m: _fake("engine-two"))
    with pytest.raises(UserError, match="was run on engine-one; this command would go on "
                                        "on engine-two.*--allow-mixed-engines"):
        run_audit(db, _spec(), judge=False, engine=other)
    assert db.execute("SELECT status FROM audits").fetchone()[0] == status  # untouched
    assert db.execute("SELECT COUNT(*) FROM generations").fetchone()[0] == 2
    allowed = AuditEngine(db, backend_factory=lambda m: _fake("engine-two"),
                          allow_mixed_engines=True)
    done = run_audit(db, _spec(), judge=False, engine=allowed)
    assert not done.stopped and done.generated > 0
    report = build_run_report(db, "mixed")
    counts = dict(db.execute("SELECT engine, COUNT(*) FROM generations GROUP BY engine"))
    assert report.meta["engines"].startswith("MIXED: ")
    for engine, n in counts.items():
        assert f"{engine} ({n})" in report.meta["engines"]  # one arm: the counts are its
    assert "MIXED" in report.to_markdown()
    # A run made by one engine, stopped and resumed on it: no refusal, no mix line.
    fresh = open_db(memory=True)
    import_demo(fresh)
    for stop in (_stopper(2), None):
        run_audit(fresh, _spec("single"), judge=False, should_stop=stop,
                  engine=AuditEngine(fresh, backend_factory=lambda m: _fake("engine-one")))
    assert "engines" not in build_run_report(fresh, "single").meta


@pytest.mark.model
def test_a_killed_pool_run_resumed_in_process_is_refused_then_reported(tmp_path) -> None:
    pytest.importorskip("fastapi", reason="the server extra: pip install 'paw-workbench[server]'")
    from workbench.models import default_model
    from workbench.models.pool import start_pool
    from workbench.models.server import PoolSettings

    db = open_db(tmp_path / "paw.db")
    import_demo(db)
    model = default_model(db)
    with start_pool(model.path, 1, engine="python", threads=1, log_dir=tmp_path) as pool:
        engine = AuditEngine(db, servers=PoolSettings(tuple(pool.urls)))
        first = run_audit(db, _spec(), judge=False, engine=engine, should_stop=_stopper(2))
        engine.close()
    assert first.stopped
    pooled = {r[0] for r in db.execute("SELECT engine FROM generations")}
    assert len(pooled) == 1 and next(iter(pooled)).startswith("llama_cpp.server ")
    with pytest.raises(UserError, match="llama_cpp.server .* would go on on in-process "
                                        "llama-cpp-python"):
        run_audit(db, _spec(), judge=False, engine=AuditEngine(db, threads=1))
    done = run_audit(db, _spec(), judge=False,
                     engine=AuditEngine(db, threads=1, allow_mixed_engines=True))
    assert not done.stopped and not done.job_counts.get("error")
    mix = build_run_report(db, "mixed").meta["engines"]
    assert "llama_cpp.server" in mix and "in-process llama-cpp-python" in mix


def test_a_second_live_process_on_the_same_run_is_warned_about() -> None:
    import socket
    import subprocess
    import sys

    from workbench.engine.events import RunWarning

    db = open_db(memory=True)
    import_demo(db)
    engine = AuditEngine(db, backend_factory=lambda m: _fake("engine-one"))
    run_audit(db, _spec(), judge=False, engine=engine, should_stop=_stopper(1))
    audit_id = db.execute("SELECT id FROM audits").fetchone()[0]
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:  # another process holding a session of the same run, as a second `paw` would
        db.execute("INSERT INTO sessions (audit_id, command, settings_json, versions_json, "
                   "started_at, status, n_generated, pid, host, heartbeat_at) VALUES "
                   "(?, 'audit', '{}', '{}', '2026-01-01T00:00:00Z', 'running', 0, ?, ?, "
                   "'2026-01-01T00:00:00Z')", [audit_id, other.pid, socket.gethostname()])
        events: list = []
        run_audit(db, _spec(), judge=False, engine=engine, on_event=events.append)
    finally:
        other.kill()
        other.wait()
    warnings = [e.message for e in events if isinstance(e, RunWarning)]
    assert len(warnings) == 1 and f"pid {other.pid}" in warnings[0]
    assert "another live process" in warnings[0]
    events.clear()
    run_audit(db, _spec(), judge=False, engine=engine, on_event=events.append)
    assert not [e for e in events if isinstance(e, RunWarning)]  # that process is gone


def test_paw_run_s_plan_refuses_another_engine_too() -> None:
    from store.datasets import get_items
    from store.runs import find_run
    from workbench.models import Runner, default_model
    from workbench.models.plan import plan_run

    db = open_db(memory=True)
    import_demo(db)
    model = default_model(db)
    items = get_items(db, "demo")[:2]
    dataset = db.execute("SELECT id FROM datasets WHERE name = 'demo'").fetchone()[0]

    def plan(engine: str):
        runner = Runner(db, model, backend=_fake(engine))
        return plan_run(db, runner, dataset, items, mode="direct", template="direct@1",
                        temperature=0.0, seeds=[0], max_tokens=4, role="baseline")

    assert plan("engine-one").execute({}).generated == 2
    with pytest.raises(UserError, match="was run on engine-one; .* on engine-two"):
        plan("engine-two").execute({})
    assert find_run(db, None).status == "finished"  # the refusal changed nothing
    plan("engine-two").execute({}, allow_mixed_engines=True)
