"""Batched decoding on the real embedded SmolLM2: the self-check, and batched == one at a time.

The audit test is the acceptance test of batching: the same small audit (stage 1, the
F-block's continuations of the arm's own chains, direct answers, an option shuffle) run
once with 4 sequences per `llama_decode` and once with one at a time must store the same
generations bit for bit — texts, output token ids, option distributions and the raw label
logits behind them.
"""

from __future__ import annotations

import json

import pytest

from store import open_db
from store.models import model_metadata
from tests.models.conftest import add_vignettes
from workbench.audit import AuditSpec, run_audit
from workbench.engine import AuditEngine
from workbench.perturb import resolve_operators
from workbench.datasets.demo import import_demo
from workbench.models import GenerationRequest, Runner, Sampler, default_model
from workbench.models import batch as batch_module
from workbench.models import batching as batching_module
from workbench.models import selfcheck as selfcheck_module
from workbench.models.arrangement import Arrangement
from workbench.models.backend import LlamaCppBackend
from workbench.models.batching import measure_verdict
from workbench.models.events import BatchingChecked, BatchingProgress
from workbench.models.selfcheck import BatchVerdict

pytestmark = pytest.mark.model

ITEMS = ("demo-003", "demo-001", "triage-001")
OPERATORS = "F1_truncate_50,F2_delete_a,M2_sex,M4_negation_a,shuffle"


@pytest.fixture(scope="module")
def backend() -> LlamaCppBackend:
    """One loaded model for the module, one thread (see test_real_model)."""
    db = open_db(memory=True)
    model = default_model(db)
    loaded = LlamaCppBackend(model.path, context_length=model.context_length, threads=1)
    yield loaded
    loaded.close()


def _generations(db) -> dict[str, tuple]:
    return {row[0]: row[1:] for row in db.execute(
        "SELECT key, output, output_token_ids_json, prefix_token_ids_json, answer, "
        "parse_status, finish_reason, tokens_in, tokens_out, option_probs_json, "
        "option_logits_json FROM generations")}


def test_audit_batched_on_two_decoders_and_one_at_a_time_store_identical_generations(
        backend, monkeypatch) -> None:
    """Width 4 on one decoder, width 4 on two decoders at once (one thread each, the work
    split between them), and one at a time: the same rows, bit for bit."""
    widths: dict[tuple, list[int]] = {}
    original = batch_module.BatchDecoder.run

    def counting_run(self, jobs, on_finished, should_stop=None):
        before = self.stats["step_tokens"]
        try:
            return original(self, jobs, on_finished, should_stop)
        finally:
            widths.setdefault(config, []).append(self.stats["widest"])
            if self.stats["step_tokens"] > before:
                busy.setdefault(config, set()).add(id(self))

    monkeypatch.setattr(batch_module.BatchDecoder, "run", counting_run)
    monkeypatch.delenv("PAW_DECODERS", raising=False)
    stored, verdicts, busy = {}, [], {}
    for config in ((4, 1), (4, 2), (1, 1)):
        batch_size, cores = config
        db = open_db(memory=True)
        import_demo(db)
        spec = AuditSpec(dataset="demo", models=("default",), templates=("neutral_cot@1",),
                         operators=resolve_operators(OPERATORS), item_ids=ITEMS,
                         max_tokens=40)
        engine = AuditEngine(db, backend_factory=lambda model: backend, batch_size=batch_size,
                             threads=cores)  # 2 cores: two 1-thread decoders
        backend.reset()
        outcome = run_audit(db, spec, engine=engine, judge=False,
                            on_event=lambda e: verdicts.append(getattr(e, "event", e)))
        assert not outcome.stopped and outcome.generated > 10
        stored[config] = _generations(db)
        if batch_size == 4:
            verdict = model_metadata(db, default_model(db).id)["batch_check"]
            if not verdict["identical"]:
                pytest.skip(f"batching is off on this machine: {verdict['detail']}")
    assert max(widths[(4, 1)]) >= 2, "the batched audit never decoded two sequences at once"
    assert len(busy[(4, 2)]) == 2, "both decoders must have decoded part of the work"
    checked = [e for e in verdicts if isinstance(e, BatchingChecked)]
    assert any(e.identical and e.decoders == 2 for e in checked)
    assert stored[(4, 1)].keys() == stored[(1, 1)].keys() == stored[(4, 2)].keys()
    assert stored[(4, 1)] == stored[(1, 1)]
    assert stored[(4, 2)] == stored[(1, 1)]
    positions = {json.loads(row[-1])["position"] for row in stored[(1, 1)].values()}
    assert "prompt" in positions and positions & {"output", "appended"}  # direct and cot
    assert any(row[2] is not None for row in stored[(1, 1)].values())  # F-block continuations


def _runner(backend, width: int, db=None) -> Runner:
    db = db if db is not None else open_db(memory=True)
    return Runner(db, default_model(db), backend=backend, batch_size=width)


@pytest.mark.parametrize("width, decoders", [(8, 1), (3, 2)])
def test_self_check_compares_multi_sequence_steps_at_every_width(backend, width,
                                                                 decoders) -> None:
    verdict = measure_verdict(_runner(backend, width), Arrangement(decoders, 1, width))
    assert verdict.n_seq == width and verdict.decoders == decoders and verdict.seconds > 0
    # The first version compared no step at all (every probe ended on its first token).
    for w in range(2, width + 1):
        assert verdict.widths.get(w, 0) > 0, (w, verdict.widths)
    assert verdict.compared_steps >= decoders * (width - 1) * 2
    assert verdict.identical, verdict.detail
    assert f"{sum(n for w, n in verdict.widths.items() if w > 1)} multi-sequence steps" \
        in verdict.detail


def test_self_check_catches_a_change_inside_multi_sequence_steps(backend, monkeypatch) -> None:
    # A decoder that, in every step of two or more sequences, reads each row's logits from
    # the next row: prompts, appended cues and single-sequence steps are untouched, so only
    # a check that compares multi-sequence steps sees it (the first version compared none).
    fill, sample = batch_module.BatchDecoder._fill, batch_module.BatchDecoder._sample

    def tracking_fill(self, entries):
        self.step_width = len(entries) if all(e[3] for e in entries) else 0
        fill(self, entries)

    def misread(self, slot, index):
        width = getattr(self, "step_width", 0)
        sample(self, slot, (index + 1) % width if width > 1 else index)

    monkeypatch.setattr(batch_module.BatchDecoder, "_fill", tracking_fill)
    monkeypatch.setattr(batch_module.BatchDecoder, "_sample", misread)
    broken = measure_verdict(_runner(backend, 4), Arrangement(1, 1, 4))
    assert not broken.identical
    first = broken.detail.split(";")[0]
    assert first.startswith("probe ") and ": step " in first, broken.detail
    step = int(first.split(": step ")[1].split(":")[0])
    assert step >= 1, "it differs before any batched step"


def test_self_check_catches_token_by_token_prompts(backend, monkeypatch) -> None:
    original = batch_module.BatchDecoder.__init__

    def token_by_token(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.n_batch = 1  # llama.cpp's one-token kernels round differently from a batch

    monkeypatch.setattr(batch_module.BatchDecoder, "__init__", token_by_token)
    backend.close_decoders()
    broken = measure_verdict(_runner(backend, 2), Arrangement(1, 1, 2))
    backend.close_decoders()
    assert not broken.identical and broken.detail.startswith("probe 0: step 0")


def test_self_check_stops_at_the_first_difference(backend, monkeypatch) -> None:
    """Prompts evaluated token by token differ at step 0 of probe 0: the one-at-a-time
    decode stops at that step, and no other probe is decoded alone (the intact check
    decodes all three in full)."""
    generate = type(backend).generate
    alone: list = []

    def counted(self, *args, **kwargs):
        decoded = generate(self, *args, **kwargs)
        alone.append(decoded)
        return decoded

    monkeypatch.setattr(type(backend), "generate", counted)
    intact = measure_verdict(_runner(backend, 2), Arrangement(1, 1, 2))
    assert intact.identical and len(alone) == 3
    assert sum(len(d.steps) for d in alone) >= 40
    original = batch_module.BatchDecoder.__init__

    def token_by_token(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.n_batch = 1

    monkeypatch.setattr(batch_module.BatchDecoder, "__init__", token_by_token)
    backend.close_decoders()
    alone.clear()
    broken = measure_verdict(_runner(backend, 2), Arrangement(1, 1, 2))
    backend.close_decoders()
    assert not broken.identical and broken.detail.startswith("probe 0: step 0")
    assert broken.detail.endswith("(stopped at this first difference)")
    assert [(d.finish_reason, len(d.steps)) for d in alone] == [("stopped", 1)]


def test_a_verdict_covers_the_machines_cores(backend, monkeypatch) -> None:
    """A run of one decoder on a 2-core machine checks two decoders, so a later run of
    two decoders (same threads and width) reuses the verdict instead of checking again."""
    monkeypatch.setattr(batching_module.os, "cpu_count", lambda: 2)
    db = open_db(memory=True)
    backend.__dict__.pop("batch_verdicts", None)
    one = _runner(backend, 2, db)
    one.decoders, one.threads = 1, 1
    assert one.arrangement.decoders == 1
    assert one.batching()
    assert one.batch_verdict is not None and one.batch_verdict.decoders == 2
    backend.__dict__.pop("batch_verdicts", None)
    monkeypatch.setattr(batching_module, "check_batching",
                        lambda *a: pytest.fail("the stored verdict did not cover 2 decoders"))
    two = _runner(backend, 2, db)
    two.decoders, two.threads = 2, 2
    assert two.arrangement.decoders == 2 and two.arrangement.threads == 1
    assert two.batching()
    backend.__dict__.pop("batch_verdicts", None)


def test_self_check_refuses_when_no_step_was_compared(backend, monkeypatch) -> None:
    monkeypatch.setattr(selfcheck_module, "probe_budgets", lambda n: [1] * (n + 1))
    verdict = measure_verdict(_runner(backend, 4), Arrangement(1, 1, 4))
    assert verdict.widths == {} and verdict.compared_steps == 0
    assert not verdict.identical
    assert verdict.detail.startswith("nothing to compare: the probes never decoded 2, 3, 4")


def test_a_stored_verdict_is_reused_and_a_new_width_is_checked(backend, monkeypatch) -> None:
    db = open_db(memory=True)
    backend.__dict__.pop("batch_verdicts", None)
    first = _runner(backend, 2, db)
    events: list = []
    assert first.batching(events.append)
    *progress, checked = events
    # While it ran, the probes done in each phase: all batched first, then alone.
    assert all(isinstance(e, BatchingProgress) for e in progress)
    phases = [e.phase for e in progress]
    assert phases == sorted(phases, key=["batched", "reference"].index) and \
        phases.count("reference") == progress[0].total == 3
    assert progress[-1].phase == "reference" and progress[-1].done == progress[-1].total
    assert checked.stored_at is None and "self-check" in checked.message
    assert checked.cpu_seconds > 0 and "CPU-s" in checked.message
    stored = model_metadata(db, first.model.id)
    assert stored["batch_check"]["compared_steps"] > 0
    assert list(stored["batch_checks"]) == [stored["batch_check"]["fingerprint"]]
    # A later load (no verdict in memory) finds it in the store and checks nothing.
    backend.__dict__.pop("batch_verdicts", None)
    monkeypatch.setattr(batching_module, "check_batching",
                        lambda *a: pytest.fail("the stored verdict was not reused"))
    events.clear()
    assert _runner(backend, 2, db).batching(events.append)
    assert events[0].stored_at == stored["batch_check"]["checked_at"]
    assert "reused" in events[0].message
    # Another width is another fingerprint: measured again.
    monkeypatch.setattr(batching_module, "check_batching",
                        lambda b, decoders, probes, progress=None: BatchVerdict(
                            False, decoders[0].n_seq, "probe 0: tokens differ", 0.1))
    backend.__dict__.pop("batch_verdicts", None)
    assert not _runner(backend, 3, db).batching()
    assert len(model_metadata(db, first.model.id)["batch_checks"]) == 2
    backend.__dict__.pop("batch_verdicts", None)


def test_a_failed_check_falls_back_to_one_at_a_time_and_says_so(backend,
                                                                monkeypatch) -> None:
    monkeypatch.setattr(batching_module, "check_batching",
                        lambda b, decoders, probes, progress=None: BatchVerdict(
                            False, decoders[0].n_seq, "probe 0: tokens differ", 0.1))
    db = open_db(memory=True)
    items = add_vignettes(db)
    model = default_model(db)
    runner = Runner(db, model, backend=backend, batch_size=5)
    backend.__dict__.pop("batch_verdicts", None)
    events = []
    made = []
    monkeypatch.setattr(batch_module.BatchDecoder, "run",
                        lambda *a, **k: made.append(1) or False)
    summary = runner.run([GenerationRequest(item=i, mode="direct", template="direct@1",
                                            sampler=Sampler(max_tokens=2)) for i in items],
                         on_event=events.append)
    backend.__dict__.pop("batch_verdicts", None)
    assert summary.generated == 3 and not made  # decoded one at a time
    said = [e for e in events if isinstance(e, BatchingChecked)]
    assert len(said) == 1 and not said[0].identical
    assert "decoding one at a time" in said[0].message
    assert model_metadata(db, model.id)["batch_check"]["identical"] is False
    # A second run on the same runner does not check or say it again.
    events.clear()
    runner.run([GenerationRequest(item=items[0], mode="direct", template="direct@1",
                                  sampler=Sampler(max_tokens=3))], on_event=events.append)
    assert not [e for e in events if isinstance(e, BatchingChecked)]


def test_seeded_samples_and_continuations_match_alone(backend) -> None:
    # Several seeds of one prompt (same prefix in every slot: cross-slot copies) and a
    # continuation from exact ids, batched, equal the same requests run one at a time.
    def run(batch_size):
        db = open_db(memory=True)
        items = add_vignettes(db)
        backend.reset()
        runner = Runner(db, default_model(db), backend=backend, batch_size=batch_size)
        requests = [GenerationRequest(item=items[0], mode="cot", template="neutral_cot@1",
                                      sampler=Sampler(temperature=0.7, max_tokens=12, seed=s))
                    for s in range(5)]
        prefix_ids = tuple(backend.tokenize(" Step 1: the ST elevation", special=False))
        requests.append(GenerationRequest(
            item=items[0], mode="continue", template="neutral_cot@1",
            sampler=Sampler(max_tokens=12), prefix=" Step 1: the ST elevation",
            prefix_token_ids=prefix_ids))
        summary = runner.run(requests)
        return {k: v for k, v in _generations(db).items() if k in summary.keys}

    batched = run(3)
    assert batched == run(1)
    assert len({row[1] for row in batched.values()}) >= 3  # the seeds really differ


@pytest.mark.parametrize("requested, reuse_identical, checked, kept", [
    (False, True, [False], False),         # off unless asked for
    (True, False, [True, False], False),   # asked for, the check differs: fresh prompts
    (True, True, [True], True),            # asked for and identical: reused
])
def test_a_sliding_window_model_reuses_prefixes_only_where_the_check_allows(
        backend, monkeypatch, requested, reuse_identical, checked, kept) -> None:
    from dataclasses import replace

    if requested:
        monkeypatch.setenv("PAW_SWA_PREFIX_REUSE", "1")
    else:
        monkeypatch.delenv("PAW_SWA_PREFIX_REUSE", raising=False)
    seen = []

    def check(b, decoders, probes, progress=None):
        reuse = decoders[0].prefix_reuse
        seen.append(reuse)
        same = reuse_identical or not reuse
        return BatchVerdict(same, decoders[0].n_seq, "checked" if same else "probe 3: step 2",
                            0.1, {2: 5}, prefix_reuse=reuse)

    monkeypatch.setattr(batching_module, "check_batching", check)
    db = open_db(memory=True)
    model = replace(default_model(db), prefix_cache_safe=False)  # as gemma3 is registered
    backend.__dict__.pop("batch_verdicts", None)
    runner = Runner(db, model, backend=backend, batch_size=2)
    assert runner.batching()
    backend.__dict__.pop("batch_verdicts", None)
    assert seen == checked
    assert runner.batch_verdict.prefix_reuse is kept
    assert model_metadata(db, model.id)["batch_check"]["prefix_reuse"] is kept
    backend.close_decoders()


def test_a_stop_while_every_job_is_in_flight_ends_the_run_at_the_next_step(
        backend, monkeypatch) -> None:
    # Three requests on four slots: all are admitted at once and no slot frees up until a
    # sequence ends. A stop asked two decode steps later ends the run there. Before, the
    # stop was polled only when a job was admitted, so the batch decoded to its end (the
    # TUI's `c` on a small run let it finish).
    monkeypatch.setenv("PAW_DECODERS", "1")  # one decoder: the poll count is exact
    db = open_db(memory=True)
    items = add_vignettes(db)
    backend.reset()
    runner = Runner(db, default_model(db), backend=backend, batch_size=4)
    requests = [GenerationRequest(item=items[0], mode="cot", template="neutral_cot@1",
                                  sampler=Sampler(temperature=0.7, max_tokens=24, seed=s))
                for s in range(3)]
    polls: list[int] = []

    def should_stop() -> bool:
        polls.append(1)
        return len(polls) > 6  # 4 polls on admission (3 jobs, then the empty source), 2 steps

    stopped = runner.run(requests, should_stop=should_stop)
    assert stopped.stopped and stopped.generated == 0  # the batch in flight was dropped
    assert db.execute("SELECT COUNT(*) FROM generations").fetchone()[0] == 0
    resumed = runner.run(requests)  # resumable: everything is generated on the next run
    assert not resumed.stopped and resumed.generated == 3
