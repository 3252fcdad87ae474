"""The server pool on real `llama_cpp.server` processes serving the embedded SmolLM2.

Two servers are started once for the module (`workbench.models.pool.start_pool`, what
`paw serve --engine python` runs). The tests run a small audit across them, check pinning,
fail-over, the pool-down stop, a 4xx that fails one request only, API keys, and compare the
servers' generations with in-process ones (docs/runner.md, "Server pool"). The same
client against llama.cpp's C++ llama-server is in test_llama_server.py.
"""

from __future__ import annotations

import json
import time

import pytest

from store import open_db
from store.datasets import get_items
from store.errors import UserError
from store.generations import get_generations
from tests.models.servers import Events, demo_requests
from workbench.audit import AuditSpec, run_audit
from workbench.engine import AuditEngine
from workbench.perturb import resolve_operators
from workbench.datasets.demo import import_demo
from workbench.models import GenerationRequest, Runner, Sampler, default_model
from workbench.models.dispatch import PoolDown
from workbench.models.pool import free_port, start_pool
from workbench.models.server import PoolSettings, ServerPoolBackend

pytestmark = pytest.mark.model

pytest.importorskip("fastapi", reason="the server extra: pip install 'paw-workbench[server]'")

BOUND = 0.01
"""Stated bound on |p_server − p_in-process| where both wrote the same text: measured
largest 4e-4 over 10 demo items × (CoT, direct) (`bench/pool_agreement.py`, docs/runner.md)."""


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    """Two servers of the embedded model, one thread each."""
    db = open_db(memory=True)
    with start_pool(default_model(db).path, 2, engine="python", threads=1,
                    log_dir=tmp_path_factory.mktemp("servers")) as started:
        yield started


def _demo_db():
    db = open_db(memory=True)
    import_demo(db)
    return db, default_model(db)


def _spec() -> AuditSpec:
    return AuditSpec(dataset="demo", models=("default",), templates=("neutral_cot@1",),
                     operators=resolve_operators("F1_truncate_50,M2_sex,shuffle"),
                     item_ids=("demo-003", "demo-001", "triage-001"), max_tokens=32)


def test_the_server_is_recognised_and_keyed_by_its_build(pool) -> None:
    _, model = _demo_db()
    backend = ServerPoolBackend(model, pool.urls)
    assert backend.kind == "llama_cpp.server"
    assert backend.build.startswith("llama-cpp-python ")
    assert backend.key_tag == f"llama_cpp.server {backend.build} serial"
    assert backend.concurrency == dict.fromkeys(pool.urls, 1)  # one request at a time


def test_a_small_audit_runs_across_two_servers(pool) -> None:
    db, _ = _demo_db()
    engine = AuditEngine(db, backend_factory=lambda m: ServerPoolBackend(m, pool.urls))
    outcome = run_audit(db, _spec(), engine=engine, judge=False)
    assert not outcome.stopped and outcome.generated > 6
    assert outcome.job_counts.get("done", 0) > 0 and not outcome.job_counts.get("error")
    rows = db.execute("SELECT key, item_id, option_logits_json FROM generations").fetchall()
    assert len(rows) == len({r[0] for r in rows}) == outcome.generated  # nothing twice
    endpoints: dict[int, set[str]] = {}
    for _, item_id, details in rows:
        endpoints.setdefault(item_id, set()).add(json.loads(details)["endpoint"])
    # Each item stays on one server across stage 1 and the F-block (its prefix cache).
    assert all(len(e) == 1 for e in endpoints.values())
    assert set().union(*endpoints.values()) == set(pool.urls)  # both servers worked
    again = run_audit(db, _spec(), engine=engine, judge=False)
    assert again.generated == 0


def test_a_dead_endpoint_s_items_move_to_a_live_one_and_a_line_says_so(pool) -> None:
    db, model = _demo_db()
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    settings = PoolSettings((dead, pool.urls[0]), timeout_s=30)
    runner = Runner(db, model, backend=ServerPoolBackend(model, settings))
    events = Events()
    summary = runner.run([GenerationRequest(item=i, mode="direct", template="direct@1",
                                            sampler=Sampler(max_tokens=3))
                          for i in get_items(db, "demo")[:4]], on_event=events)
    assert summary.generated == 4 and summary.errors == 0
    endpoints = {g.option_logits["endpoint"] for g in get_generations(db, summary.keys).values()}
    assert endpoints == {pool.urls[0]}
    assert any(dead in line and "does not answer" in line for line in events.notices())


def test_a_pool_that_stays_down_stops_the_run_and_stores_nothing(pool) -> None:
    db, model = _demo_db()
    request = demo_requests(db, 1)[1]
    with pytest.raises(UserError, match="no server of the pool answers"):
        ServerPoolBackend(model, [f"http://127.0.0.1:{free_port()}"])
    # Up at the start, then gone: the run waits the time-out, stops, and stores nothing.
    with start_pool(model.path, 1, engine="python", threads=1) as short:
        backend = ServerPoolBackend(model, PoolSettings(tuple(short.urls), timeout_s=2))
    started = time.monotonic()
    with pytest.raises(PoolDown, match="down for over 2 s"):
        Runner(db, model, backend=backend).run([request])
    assert time.monotonic() - started < 30
    assert db.execute("SELECT COUNT(*) FROM generations").fetchone()[0] == 0
    retried = Runner(db, model, backend=ServerPoolBackend(model, pool.urls)).run([request])
    assert retried.generated == 1 and retried.status_counts.get("error") is None


def test_a_4xx_fails_that_request_only(tmp_path) -> None:
    db, model = _demo_db()
    items = get_items(db, "demo")[:3]
    long_question = items[0].question + " " + " ".join(["The patient is stable."] * 150)
    requests = [GenerationRequest(item=i, mode="direct", template="direct@1",
                                  sampler=Sampler(max_tokens=3)) for i in items]
    requests.append(GenerationRequest(item=items[0], mode="direct", template="direct@1",
                                      question=long_question, sampler=Sampler(max_tokens=3)))
    # The server holds 320 tokens (llama.cpp pads it to 512); PAW is told 4096 (a wrong
    # --ctx): the server refuses the ~950-token prompt with a 400.
    with start_pool(model.path, 1, engine="python", threads=1, ctx=320,
                    log_dir=tmp_path) as small:
        summary = Runner(db, model, backend=ServerPoolBackend(model, small.urls)).run(requests)
    assert summary.generated == 4 and summary.status_counts.get("error") == 1
    errors = db.execute("SELECT error FROM generations WHERE parse_status = 'error'").fetchall()
    assert len(errors) == 1 and "HTTP 400" in errors[0][0]


def test_an_api_key_is_sent_and_its_absence_named(tmp_path) -> None:
    db, model = _demo_db()
    with start_pool(model.path, 1, engine="python", threads=1, api_key="s3cret",
                    log_dir=tmp_path) as keyed:
        with pytest.raises(UserError, match="--api-key"):
            ServerPoolBackend(model, keyed.urls)
        backend = ServerPoolBackend(model, PoolSettings(tuple(keyed.urls), api_key="s3cret"))
        summary = Runner(db, model, backend=backend).run(demo_requests(db, 1)[1:])
    assert summary.generated == 1 and summary.errors == 0


def test_server_and_in_process_agree_within_the_bound(pool) -> None:
    db, model = _demo_db()
    local_runner = Runner(db, model, threads=1)
    local = get_generations(db, local_runner.run(demo_requests(db, 4, 40)).keys)
    local_runner.close()
    db2, model2 = _demo_db()
    backend = ServerPoolBackend(model2, pool.urls)
    remote = get_generations(db2, Runner(db2, model2, backend=backend).run(
        demo_requests(db2, 4, 40)).keys)
    assert not set(local) & set(remote)  # server generations never share in-process keys
    by_request = {(g.item_id, g.mode): g for g in local.values()}
    worst = 0.0
    for gen in remote.values():
        mine = by_request[(gen.item_id, gen.mode)]
        assert gen.output == mine.output and gen.answer == mine.answer
        assert gen.option_logits["position"] == mine.option_logits["position"]
        assert gen.option_logits["source"] == "llama_cpp.server"
        worst = max(worst, max(abs(gen.option_probs[k] - mine.option_probs[k])
                               for k in mine.option_probs))
    assert worst <= BOUND
