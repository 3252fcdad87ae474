"""The server pool on real llama.cpp C++ `llama-server` processes serving the embedded SmolLM2.

Skipped, saying how to get one, where no llama-server binary is found (never faked):
`paw serve --build-llama-server` builds it from the llama-cpp-python source package.
One request per generation (`/completion` with token ids, `n_probs`, `return_tokens`);
every slot busy; sampler defaults pinned or refused; faults against real processes: a
killed server mid-run, a hung one (SIGSTOP) re-admitted after SIGCONT, a too-long request
refused before sending, an alias matched explicitly, an API key.
"""

from __future__ import annotations

import json
import os
import signal

import pytest

from store import open_db
from store.errors import UserError
from store.generations import get_generations
from tests.models.servers import Events, demo_requests, llama_server_or_skip
from workbench.audit import AuditSpec, run_audit
from workbench.engine import AuditEngine
from workbench.perturb import resolve_operators
from workbench.datasets.demo import import_demo
from workbench.models import GenerationRequest, Runner, Sampler, default_model
from workbench.models.pool import start_pool
from workbench.models.server import PoolSettings, ServerPoolBackend

pytestmark = pytest.mark.model

BOUND = 0.01
"""Stated bound on |p_llama-server − p_in-process| where both wrote the same text, serial
slots, same llama.cpp source: measured largest 4e-4 over 10 demo items × (CoT, direct)
(`bench/pool_agreement.py`, docs/runner.md)."""


def _demo_db():
    db = open_db(memory=True)
    import_demo(db)
    return db, default_model(db)


@pytest.fixture(scope="module")
def binary() -> str:
    return llama_server_or_skip()


@pytest.fixture(scope="module")
def pair(binary, tmp_path_factory):
    """Two llama-servers, one thread and two slots each."""
    _, model = _demo_db()
    with start_pool(model.path, 2, engine="llama-server", threads=1, parallel=2, ctx=1024,
                    binary=binary, log_dir=tmp_path_factory.mktemp("llama")) as pool:
        yield pool


def test_the_server_is_recognised_from_props(pair) -> None:
    _, model = _demo_db()
    backend = ServerPoolBackend(model, pair.urls)
    assert backend.kind == "llama-server"
    assert backend.build and backend.build != "unknown"
    assert backend.concurrency == dict.fromkeys(pair.urls, 2)  # /props total_slots
    assert backend.n_ctx == 1024  # the slot's context, -c / -np
    assert backend.key_tag == f"llama-server {backend.build} shared"
    serial = ServerPoolBackend(model, PoolSettings(tuple(pair.urls), concurrency=1))
    numerics = serial.numerics[pair.urls[0]]
    assert serial.numerics == dict.fromkeys(pair.urls, numerics)  # one arithmetic
    assert serial.key_tag == f"llama-server {backend.build} serial numerics:{numerics}"


def test_an_audit_keeps_every_slot_busy_and_stores_each_row_once(pair) -> None:
    db, _ = _demo_db()
    backends = []

    def factory(model):
        backends.append(ServerPoolBackend(model, pair.urls))
        return backends[-1]

    spec = AuditSpec(dataset="demo", models=("default",), templates=("neutral_cot@1",),
                     operators=resolve_operators("F1_truncate_50,M2_sex,shuffle"),
                     item_ids=("demo-003", "demo-001", "triage-001", "demo-019"),
                     max_tokens=24)
    outcome = run_audit(db, spec, engine=AuditEngine(db, backend_factory=factory),
                        judge=False)
    assert not outcome.job_counts.get("error") and outcome.generated > 8
    rows = db.execute("SELECT key, item_id, option_logits_json FROM generations").fetchall()
    assert len(rows) == len({r[0] for r in rows}) == outcome.generated
    endpoints: dict[int, set[str]] = {}
    for _, item_id, details in rows:
        endpoints.setdefault(item_id, set()).add(json.loads(details)["endpoint"])
    assert all(len(e) == 1 for e in endpoints.values())  # pinned across both stages
    assert backends[0].peak == dict.fromkeys(pair.urls, 2)  # both slots of both servers


def test_serial_llama_server_agrees_with_in_process(pair) -> None:
    db, model = _demo_db()
    runner = Runner(db, model, threads=1)
    local = get_generations(db, runner.run(demo_requests(db, 4, 40)).keys)
    runner.close()
    db2, model2 = _demo_db()
    backend = ServerPoolBackend(model2, PoolSettings(tuple(pair.urls), concurrency=1))
    remote = get_generations(db2, Runner(db2, model2, backend=backend).run(
        demo_requests(db2, 4, 40)).keys)
    by_request = {(g.item_id, g.mode): g for g in local.values()}
    worst = 0.0
    for gen in remote.values():
        mine = by_request[(gen.item_id, gen.mode)]
        assert gen.output_token_ids == mine.output_token_ids  # ids, not re-tokenized text
        assert gen.answer == mine.answer
        assert gen.option_logits["position"] == mine.option_logits["position"]
        assert gen.option_logits["source"] == "llama-server"
        worst = max(worst, max(abs(gen.option_probs[k] - mine.option_probs[k])
                               for k in mine.option_probs))
    assert worst <= BOUND


def test_server_sampler_defaults_are_pinned_or_refused(binary, pair, tmp_path) -> None:
    db, model = _demo_db()
    requests = demo_requests(db, 2, 32)
    neutral = Runner(db, model, backend=ServerPoolBackend(
        model, PoolSettings(tuple(pair.urls[:1]), concurrency=1))).run(requests)
    with start_pool(model.path, 1, engine="llama-server", threads=1, binary=binary,
                    log_dir=tmp_path, extra_args=("--dry-multiplier", "0.8",
                                                  "--xtc-probability", "0.5",
                                                  "--temp", "1.5", "--top-k", "5")) as odd:
        db2, model2 = _demo_db()
        skewed = Runner(db2, model2, backend=ServerPoolBackend(
            model2, PoolSettings(tuple(odd.urls), concurrency=1))).run(requests)
    texts = {g.key: g.output for g in get_generations(db, neutral.keys).values()}
    again = {g.key: g.output for g in get_generations(db2, skewed.keys).values()}
    assert texts == again  # same build, same keys, same greedy texts
    with start_pool(model.path, 1, engine="llama-server", threads=1, binary=binary,
                    log_dir=tmp_path / "r", extra_args=("--reverse-prompt", "Answer")) as stop, \
            pytest.raises(UserError, match="stop = \\['Answer'\\].*--reverse-prompt"):
        ServerPoolBackend(model, stop.urls)


def test_a_request_longer_than_a_slot_is_refused_before_sending(binary, tmp_path) -> None:
    db, model = _demo_db()
    item = demo_requests(db, 1)[1].item
    long = GenerationRequest(item=item, mode="direct", template="direct@1",
                             question=item.question + " The patient is stable." * 150,
                             sampler=Sampler(max_tokens=3))
    with start_pool(model.path, 1, engine="llama-server", threads=1, ctx=512,
                    binary=binary, log_dir=tmp_path) as small:
        backend = ServerPoolBackend(model, small.urls)
        assert backend.n_ctx == 512
        with pytest.raises(UserError, match=f"item '{item.source_id}'.*context of 512"):
            Runner(db, model, backend=backend).run([long])
    assert db.execute("SELECT COUNT(*) FROM generations").fetchone()[0] == 0


def test_an_alias_api_key_and_no_silent_fallback(binary, tmp_path) -> None:
    db, model = _demo_db()
    # An --alias hides the file name from /v1/models; /props still names the model file.
    with start_pool(model.path, 1, engine="llama-server", threads=1, binary=binary,
                    log_dir=tmp_path, extra_args=("--alias", "clinic-model")) as aliased:
        backend = ServerPoolBackend(model, aliased.urls)
        assert backend.infos[aliased.urls[0]].model_ids == ("clinic-model",)
    with start_pool(model.path, 1, engine="llama-server", threads=1, binary=binary,
                    log_dir=tmp_path / "k", api_key="k3y") as keyed:
        with pytest.raises(UserError, match="--api-key"):
            ServerPoolBackend(model, keyed.urls)
        backend = ServerPoolBackend(model, PoolSettings(tuple(keyed.urls), api_key="k3y"))
        assert Runner(db, model, backend=backend).run(demo_requests(db, 1)[1:]).errors == 0
    engine = AuditEngine(db, servers=PoolSettings(("http://127.0.0.1:9",)))
    with pytest.raises(UserError, match="no server of the pool answers"):
        engine.runner(model)  # --servers never silently runs in-process


def test_a_server_killed_mid_run_loses_nothing(binary, tmp_path) -> None:
    db, model = _demo_db()
    with start_pool(model.path, 2, engine="llama-server", threads=1, binary=binary,
                    log_dir=tmp_path) as pool:
        backend = ServerPoolBackend(model, PoolSettings(tuple(pool.urls), timeout_s=60))
        victim = pool.processes[0]

        def kill(event, events) -> None:
            if events.finished() == 3 and victim.poll() is None:
                victim.kill()

        events = Events(kill)
        summary = Runner(db, model, backend=backend).run(demo_requests(db, 6, 16),
                                                          on_event=events)
    assert summary.generated == 12 and summary.errors == 0
    keys = [r[0] for r in db.execute("SELECT key FROM generations")]
    assert len(keys) == len(set(keys)) == 12
    assert any(pool.urls[0] in line and "dropped" in line for line in events.notices())


def test_a_hung_server_is_taken_over_and_readmitted(binary, tmp_path) -> None:
    db, model = _demo_db()
    with start_pool(model.path, 2, engine="llama-server", threads=1, binary=binary,
                    log_dir=tmp_path) as pool:
        backend = ServerPoolBackend(model, PoolSettings(tuple(pool.urls), timeout_s=12))
        hung = pool.processes[1]

        def freeze_then_thaw(event, events) -> None:
            if type(event).__name__ == "GenerationFinished" and events.finished() == 2:
                os.kill(hung.pid, signal.SIGSTOP)  # accepts connections, never answers
            if type(event).__name__ == "PoolNotice" and "dropped" in event.message:
                os.kill(hung.pid, signal.SIGCONT)

        events = Events(freeze_then_thaw)
        summary = Runner(db, model, backend=backend).run(demo_requests(db, 8, 24),
                                                          on_event=events)
    assert summary.generated == 16 and summary.errors == 0
    keys = [r[0] for r in db.execute("SELECT key FROM generations")]
    assert len(keys) == len(set(keys)) == 16
    lines = events.notices()
    assert any(pool.urls[1] in line and "dropped" in line and "timed out" in line
               for line in lines), lines
    assert any(pool.urls[1] in line and "is back" in line for line in lines), lines
