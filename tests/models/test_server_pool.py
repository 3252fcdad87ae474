"""The server pool on real `llama_cpp.server` processes serving the embedded SmolLM2.

Two servers are started once for the module (`workbench.models.pool.start_pool`, what
`paw serve` runs). The tests run a small audit across them, check pinning, fail-over to
another endpoint and that nothing is stored twice, and compare the servers' generations
with in-process ones: identical greedy texts and answers, and option distributions within
the stated bound (docs/runner.md, "Server pool").
"""

from __future__ import annotations

import json

import pytest

from store import open_db
from store.datasets import get_items
from store.generations import get_generations
from workbench.audit import AuditEngine, AuditSpec, resolve_operators, run_audit
from workbench.datasets.demo import import_demo
from workbench.models import GenerationRequest, Runner, Sampler, default_model
from workbench.models.pool import free_port, start_pool
from workbench.models.server import KEY_TAG, ServerPoolBackend

pytestmark = pytest.mark.model

pytest.importorskip("fastapi", reason="the server extra: pip install 'paw-workbench[server]'")

BOUND = 0.05
"""Stated bound on |p_server − p_in-process| where both wrote the same text (measured
largest 0.038: an appended cue read on a cache whose positions were filled another way)."""


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    """Two servers of the embedded model, one thread each."""
    db = open_db(memory=True)
    with start_pool(default_model(db).path, 2, threads=1,
                    log_dir=tmp_path_factory.mktemp("servers")) as started:
        yield started


def _spec() -> AuditSpec:
    return AuditSpec(dataset="demo", models=("default",), templates=("neutral_cot@1",),
                     operators=resolve_operators("F1_truncate_50,M2_sex,shuffle"),
                     item_ids=("demo-003", "demo-001", "triage-001"), max_tokens=32)


def test_a_small_audit_runs_across_two_servers(pool) -> None:
    db = open_db(memory=True)
    import_demo(db)
    engine = AuditEngine(db, backend_factory=lambda m: ServerPoolBackend(m, pool.urls))
    outcome = run_audit(db, _spec(), engine=engine, judge=False)
    assert not outcome.stopped and outcome.generated > 6
    assert outcome.job_counts.get("done", 0) > 0 and not outcome.job_counts.get("error")
    rows = db.execute("SELECT key, item_id, option_logits_json FROM generations").fetchall()
    assert len(rows) == len({r[0] for r in rows}) == outcome.generated  # nothing twice
    endpoints: dict[int, set[str]] = {}
    for _, item_id, details in rows:
        endpoints.setdefault(item_id, set()).add(json.loads(details)["endpoint"])
    assert all(len(e) == 1 for e in endpoints.values())  # each item pinned to one server
    assert set().union(*endpoints.values()) == set(pool.urls)  # both servers worked
    # Every job points at a stored generation, and running again generates nothing.
    again = run_audit(db, _spec(), engine=engine, judge=False)
    assert again.generated == 0


def test_a_dead_endpoint_s_items_move_to_a_live_one(pool) -> None:
    db = open_db(memory=True)
    import_demo(db)
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    model = default_model(db)
    runner = Runner(db, model, backend=ServerPoolBackend(model, [dead, pool.urls[0]]))
    items = get_items(db, "demo")[:4]
    summary = runner.run([GenerationRequest(item=i, mode="direct", template="direct@1",
                                            sampler=Sampler(max_tokens=3)) for i in items])
    assert summary.generated == 4 and summary.errors == 0
    endpoints = {g.option_logits["endpoint"] for g in get_generations(db, summary.keys).values()}
    assert endpoints == {pool.urls[0]}


def test_every_endpoint_down_stores_errors_that_a_rerun_retries(pool) -> None:
    db = open_db(memory=True)
    import_demo(db)
    model = default_model(db)
    item = get_items(db, "demo")[0]
    request = GenerationRequest(item=item, mode="direct", template="direct@1",
                                sampler=Sampler(max_tokens=3))
    down = Runner(db, model, backend=ServerPoolBackend(
        model, [f"http://127.0.0.1:{free_port()}"]))
    first = down.run([request])
    assert first.errors == 1 and first.status_counts == {"error": 1}
    retried = Runner(db, model, backend=ServerPoolBackend(model, pool.urls)).run([request])
    assert retried.generated == 1 and retried.status_counts.get("error") is None


def test_server_and_in_process_agree_within_the_bound(pool) -> None:
    def requests(db):
        items = get_items(db, "demo")[:4]
        return [GenerationRequest(item=i, mode=mode, template=template,
                                  sampler=Sampler(max_tokens=tokens))
                for i in items for mode, template, tokens in
                (("cot", "neutral_cot@1", 40), ("direct", "direct@1", 4))]

    db = open_db(memory=True)
    import_demo(db)
    model = default_model(db)
    local_runner = Runner(db, model, threads=1)
    local = get_generations(db, local_runner.run(requests(db)).keys)
    local_runner.close()
    db2 = open_db(memory=True)
    import_demo(db2)
    model2 = default_model(db2)
    remote_runner = Runner(db2, model2, backend=ServerPoolBackend(model2, pool.urls))
    remote = get_generations(db2, remote_runner.run(requests(db2)).keys)
    assert not set(local) & set(remote)  # server generations never share in-process keys
    assert remote_runner.key_tag == KEY_TAG
    by_request = {(g.item_id, g.mode): g for g in local.values()}
    worst = 0.0
    for gen in remote.values():
        mine = by_request[(gen.item_id, gen.mode)]
        assert gen.output == mine.output and gen.answer == mine.answer
        assert gen.option_logits["position"] == mine.option_logits["position"]
        worst = max(worst, max(abs(gen.option_probs[k] - mine.option_probs[k])
                               for k in mine.option_probs))
    assert worst <= BOUND
