"""Scheduling, resume, dedupe, stop and error handling of the Runner, on the fake backend."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from store.errors import UserError
from store.generations import get_generations
from store.models import add_model
from workbench.models import (
    GenerationFinished,
    GenerationRequest,
    RunFinished,
    Runner,
    RunStarted,
    Sampler,
)
from workbench.models.fake import FakeBackend
from workbench.models.prompts import PLAIN_CHAT_TEMPLATE


def _runner(db, backend: FakeBackend) -> Runner:
    model = add_model(db, name="fake", path="/nowhere.gguf", sha256="f" * 64,
                      chat_template=PLAIN_CHAT_TEMPLATE)
    return Runner(db, model, backend=backend)


def _requests(items, **kw):
    return [GenerationRequest(item=i, mode="cot", template="neutral_cot@1", **kw) for i in items]


def test_stores_each_generation_and_skips_on_rerun(db, items) -> None:
    backend = FakeBackend()
    runner = _runner(db, backend)
    events = []
    summary = runner.run(_requests(items), on_event=events.append)
    assert (summary.total, summary.skipped, summary.generated) == (3, 0, 3)
    assert isinstance(events[0], RunStarted) and isinstance(events[-1], RunFinished)
    assert [e.done for e in events if isinstance(e, GenerationFinished)] == [1, 2, 3]
    stored = get_generations(db, summary.keys)
    # The fake answers 'Answer: A': A is gold for both MCQs, 'A' is no label of the binary item.
    assert sorted(g.parse_status for g in stored.values()) == ["no_answer", "ok", "ok"]
    assert (summary.correct, summary.with_gold) == (2, 3)
    for gen in stored.values():
        assert abs(sum(gen.option_probs.values()) - 1) < 1e-12
    mcq = [g for g in stored.values() if g.answer == "A"][0]
    # read at the model's own 'A' token: logits 5 vs 0 -> P(A) = e^5 / (e^5 + 3)
    assert mcq.option_logits["position"] == "output"
    assert mcq.option_probs["A"] == pytest.approx(math.exp(5) / (math.exp(5) + 3))
    second = runner.run(_requests(items))
    assert (second.skipped, second.generated) == (3, 0)
    assert len(backend.calls) == 3  # nothing regenerated
    assert db.execute("SELECT COUNT(*) FROM generations").fetchone()[0] == 3


def test_duplicates_run_once_and_order_groups_shared_prefixes(db, items) -> None:
    backend = FakeBackend()
    runner = _runner(db, backend)
    mi = items[0]
    chain = "Step 1: inferior leads.\nStep 2: right coronary."
    requests = [
        GenerationRequest(item=mi, mode="continue", template="neutral_cot@1", prefix=chain[:10]),
        GenerationRequest(item=items[1], mode="cot", template="neutral_cot@1"),
        GenerationRequest(item=mi, mode="continue", template="neutral_cot@1", prefix=chain[:30]),
        GenerationRequest(item=mi, mode="cot", template="neutral_cot@1"),
        GenerationRequest(item=mi, mode="cot", template="neutral_cot@1"),  # duplicate
    ]
    summary = runner.run(requests)
    assert (summary.total, summary.generated) == (4, 4)
    # The three 'mi' prompts (baseline and its two continuations) run back to back.
    owners = ["mi" if "Which artery" in call else "other" for call in backend.calls]
    assert owners in (["mi", "mi", "mi", "other"], ["other", "mi", "mi", "mi"])
    fresh = FakeBackend()
    naive = _runner_for_order(db, fresh)
    for request in requests:  # plan order, as a naive loop would
        naive.run([replace(request, sampler=Sampler(seed=7))])
    assert backend.evaluated < fresh.evaluated  # prefix reuse saves prompt tokens


def _runner_for_order(db, backend: FakeBackend) -> Runner:
    model = add_model(db, name="fake2", path="/nowhere2.gguf", sha256="e" * 64,
                      chat_template=PLAIN_CHAT_TEMPLATE)
    return Runner(db, model, backend=backend)


def test_should_stop_then_resume_finishes_the_rest(db, items) -> None:
    backend = FakeBackend()
    runner = _runner(db, backend)
    done = []
    summary = runner.run(_requests(items), on_event=done.append,
                         should_stop=lambda: len(backend.calls) >= 1)
    assert summary.stopped and summary.generated == 1
    rest = runner.run(_requests(items))
    assert (rest.skipped, rest.generated) == (1, 2)
    assert db.execute("SELECT COUNT(DISTINCT key), COUNT(*) FROM generations").fetchone() == (3, 3)


def test_backend_error_is_stored_and_retried(db, items) -> None:
    failing = FakeBackend(fail_on=lambda prompt: "diabetes" in prompt)
    runner = _runner(db, failing)
    summary = runner.run(_requests(items))
    assert summary.errors == 1 and summary.status_counts["error"] == 1
    row = db.execute("SELECT error FROM generations WHERE parse_status = 'error'").fetchone()
    assert "fake backend failure" in row[0]
    runner._backend = FakeBackend()  # the failure was transient
    again = runner.run(_requests(items))
    assert (again.skipped, again.generated, again.errors) == (2, 1, 0)
    assert db.execute("SELECT COUNT(*) FROM generations").fetchone()[0] == 3


def test_empty_and_garbage_outputs_are_recorded(db, items) -> None:
    outputs = iter(["", "%%% 123 ###", "fine text without a label"])
    runner = _runner(db, FakeBackend(lambda prompt, sampler: next(outputs),
                                     appended_answer="B"))
    summary = runner.run(_requests(items[:2]) + _requests(items[2:]))
    assert sorted(summary.status_counts.items()) == [("empty", 1), ("garbage", 1),
                                                     ("no_answer", 1)]
    for gen in get_generations(db, summary.keys).values():
        assert gen.answer is None
        assert gen.option_logits["position"] == "appended"
        assert abs(sum(gen.option_probs.values()) - 1) < 1e-12


def test_prompt_too_long_fails_before_any_generation(db, items) -> None:
    backend = FakeBackend(n_ctx=120)
    with pytest.raises(UserError, match="longer than the context of 120 tokens"):
        _runner(db, backend).run(_requests(items))
    assert backend.calls == []
