"""The runner on the real embedded SmolLM2: distributions, determinism, sampling, continuation."""

from __future__ import annotations

import pytest

from store import open_db
from store.generations import get_generations
from workbench.models import GenerationRequest, Runner, Sampler, default_model
from workbench.models.backend import LlamaCppBackend
from tests.models.conftest import add_vignettes

pytestmark = pytest.mark.model

COT = Sampler(max_tokens=48)
DIRECT = Sampler(max_tokens=4)


@pytest.fixture(scope="module")
def backend() -> LlamaCppBackend:
    """One loaded model shared by the module (its KV cache stays warm across tests).

    One thread: on a machine shared with other work, llama.cpp's threads spin-wait on
    each other and two threads can run ten times slower than one.
    """
    db = open_db(memory=True)
    model = default_model(db)
    loaded = LlamaCppBackend(model.path, context_length=model.context_length, threads=1)
    yield loaded
    loaded.close()


def _runner(backend: LlamaCppBackend):
    db = open_db(memory=True)
    items = add_vignettes(db)
    return db, items, Runner(db, default_model(db), backend=backend)


def _requests(items, mode="cot", template="neutral_cot@1", sampler=COT):
    return [GenerationRequest(item=i, mode=mode, template=template, sampler=sampler)
            for i in items]


def test_cot_and_direct_store_distributions_over_the_labels(backend) -> None:
    db, items, runner = _runner(backend)
    summary = runner.run(_requests(items) + _requests(items, "direct", "direct@1", DIRECT))
    assert summary.generated == 6 and summary.errors == 0
    stored = get_generations(db, summary.keys)
    for gen in stored.values():
        labels = tuple(gen.labels)
        assert tuple(gen.option_probs) == labels or set(gen.option_probs) == set(labels)
        assert sum(gen.option_probs.values()) == pytest.approx(1.0, abs=1e-9)
        assert set(gen.option_logits["labels"]) == set(labels)
        assert len(gen.output_token_ids) == gen.tokens_out
        assert gen.parse_status in ("ok", "no_answer", "empty", "garbage")
        assert (gen.answer is None) == (gen.parse_status != "ok")
        if gen.mode == "direct":
            assert gen.option_logits["position"] == "prompt"
        if gen.option_logits["position"] == "output":
            # Greedy: the model's own answer token was the vocabulary argmax at that
            # position, so its label must also win the distribution over the labels.
            assert max(gen.option_probs, key=gen.option_probs.get) == gen.answer
    positions = {g.option_logits["position"] for g in stored.values() if g.mode == "cot"}
    assert positions <= {"output", "appended"}


def test_greedy_rerun_is_identical(backend) -> None:
    results = []
    for _ in range(2):  # two fresh stores; the second run starts from a warm KV cache
        db, items, runner = _runner(backend)
        summary = runner.run(_requests(items[:2]))
        results.append({k: (g.output, g.output_token_ids, g.option_probs, g.answer)
                        for k, g in get_generations(db, summary.keys).items()})
    assert results[0] == results[1]


def test_seeded_sampling_same_seed_same_output(backend) -> None:
    outputs = []
    for _ in range(2):
        db, items, runner = _runner(backend)
        requests = [GenerationRequest(item=items[0], mode="cot", template="neutral_cot@1",
                                      sampler=Sampler(temperature=0.7, max_tokens=32, seed=s))
                    for s in (0, 1, 42)]
        summary = runner.run(requests)
        stored = get_generations(db, summary.keys)
        outputs.append({g.seed: g.output_token_ids for g in stored.values()})
        assert sorted(g.seed for g in stored.values()) == [0, 1, 42]
        assert all(g.sampler["temperature"] == 0.7 for g in stored.values())
    assert outputs[0] == outputs[1]
    # Different seeds at T=0.7 over 32 tokens: at least two of the three samples differ.
    assert len(set(outputs[0].values())) >= 2


def test_continuation_uses_exact_token_ids_and_ignores_the_schedule(backend) -> None:
    db, items, runner = _runner(backend)
    base = runner.run(_requests(items[:1], sampler=Sampler(max_tokens=40)))
    chain = next(iter(get_generations(db, base.keys).values()))
    cut = len(chain.output_token_ids) // 2
    prefix_ids = chain.output_token_ids[:cut]
    prefix = b"".join(backend.piece(t) for t in prefix_ids).decode("utf-8")
    assert chain.output.startswith(prefix)
    request = GenerationRequest(item=items[0], mode="continue", template="neutral_cot@1",
                                sampler=Sampler(max_tokens=40 - cut), prefix=prefix,
                                prefix_token_ids=prefix_ids)
    summary = runner.run([request])  # right after its baseline: the cache holds the chain
    cont = next(iter(get_generations(db, summary.keys).values()))
    assert cont.prefix == prefix and cont.prefix_token_ids == prefix_ids
    prompt_ids = backend.tokenize(chain.prompt, special=True)
    assert cont.tokens_in == len(prompt_ids) + cut
    # The same request on a store and cache that never saw the baseline gives the same
    # result: decoded positions of the baseline are not reused for the prefix.
    backend.reset()
    db2, items2, runner2 = _runner(backend)
    again = runner2.run([GenerationRequest(item=items2[0], mode="continue",
                                           template="neutral_cot@1",
                                           sampler=Sampler(max_tokens=40 - cut), prefix=prefix,
                                           prefix_token_ids=prefix_ids)])
    fresh = next(iter(get_generations(db2, again.keys).values()))
    assert (fresh.key, fresh.output_token_ids, fresh.option_probs) == \
        (cont.key, cont.output_token_ids, cont.option_probs)


def test_samples_of_one_prompt_ignore_the_schedule(backend) -> None:
    # Seed 1 after seed 0 (the cache holds the same prompt and seed 0's output) equals
    # seed 1 alone.
    def run(seeds):
        db, items, runner = _runner(backend)
        backend.reset()
        summary = runner.run([GenerationRequest(
            item=items[1], mode="direct", template="direct@1",
            sampler=Sampler(temperature=0.7, max_tokens=4, seed=s)) for s in seeds])
        return {g.seed: (g.output_token_ids, g.option_probs)
                for g in get_generations(db, summary.keys).values()}

    assert run([0, 1])[1] == run([1])[1]
