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
from workbench.audit import AuditEngine, AuditSpec, resolve_operators, run_audit
from workbench.datasets.demo import import_demo
from workbench.models import GenerationRequest, Runner, Sampler, default_model
from workbench.models import batch as batch_module
from workbench.models.backend import LlamaCppBackend
from workbench.models.events import BatchingChecked
from workbench.models.selfcheck import check_batching

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


def test_audit_batched_and_one_at_a_time_store_identical_generations(backend,
                                                                     monkeypatch) -> None:
    widths: list[int] = []
    original = batch_module.BatchDecoder.run

    def counting_run(self, jobs, on_finished, should_stop=None):
        try:
            return original(self, jobs, on_finished, should_stop)
        finally:
            widths.append(self.stats["widest"])

    monkeypatch.setattr(batch_module.BatchDecoder, "run", counting_run)
    stored, verdicts = {}, []
    for batch_size in (4, 1):
        db = open_db(memory=True)
        import_demo(db)
        spec = AuditSpec(dataset="demo", models=("default",), templates=("neutral_cot@1",),
                         operators=resolve_operators(OPERATORS), item_ids=ITEMS,
                         max_tokens=40)
        engine = AuditEngine(db, backend_factory=lambda model: backend, batch_size=batch_size)
        backend.reset()
        outcome = run_audit(db, spec, engine=engine, judge=False,
                            on_event=lambda e: verdicts.append(getattr(e, "event", e)))
        assert not outcome.stopped and outcome.generated > 10
        stored[batch_size] = _generations(db)
        if batch_size == 4:
            verdict = model_metadata(db, default_model(db).id)["batch_check"]
            if not verdict["identical"]:
                pytest.skip(f"batching is off on this machine: {verdict['detail']}")
    assert max(widths) >= 2, "the batched audit never decoded two sequences at once"
    assert any(isinstance(e, BatchingChecked) and e.identical for e in verdicts)
    assert stored[4].keys() == stored[1].keys()
    assert stored[4] == stored[1]
    positions = {json.loads(row[-1])["position"] for row in stored[4].values()}
    assert "prompt" in positions and positions & {"output", "appended"}  # direct and cot
    assert any(row[2] is not None for row in stored[4].values())  # F-block continuations


def test_self_check_passes_here_and_detects_a_change(backend, monkeypatch) -> None:
    verdict = check_batching(backend, 4)
    assert verdict.n_seq == 4 and verdict.seconds > 0
    if not verdict.identical:
        pytest.skip(f"batching changes bits on this machine: {verdict.detail}")
    # A real numeric change must be caught: a decoder that evaluates prompts one token
    # at a time (llama.cpp's one-token kernels, which round differently from a batch).
    original = batch_module.BatchDecoder.__init__

    def token_by_token(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.n_batch = 1

    monkeypatch.setattr(batch_module.BatchDecoder, "__init__", token_by_token)
    broken = check_batching(backend, 4)
    assert not broken.identical and broken.detail.startswith("probe 0: ")


def test_a_failed_check_falls_back_to_one_at_a_time_and_says_so(backend,
                                                                monkeypatch) -> None:
    from workbench.models import runner as runner_module
    from workbench.models.selfcheck import BatchVerdict

    monkeypatch.setattr(runner_module, "check_batching",
                        lambda b, n: BatchVerdict(False, n, "probe 0: tokens differ", 0.1))
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
