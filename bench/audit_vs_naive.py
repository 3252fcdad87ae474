"""Benchmark: the `paw audit` engine against a naive loop, on the full seed-002 battery.

Workload: N demo vignettes (multiple choice), every operator of the battery (17 F, 13 M,
the option shuffle) plus the CoT and direct baselines, greedy, on the embedded model. No
judge (the naive loop has none).

- Engine: `workbench.audit.run_audit` — plan, stage 1, F-block on its own baselines, stage 2;
  per model one llama.cpp context (logits_all=False), prompts ordered by token ids so shared
  prefixes reuse the KV cache, the option distribution read from the logits at the answer
  position during decoding, F1 continuations from the baseline's exact token ids.
- Naive: what a research script does: `Llama(logits_all=True)` with llama-cpp-python's
  defaults, operator-major order (for each operator, for each item), one
  `create_chat_completion` per CoT prompt (`create_completion` on the same rendered text for
  direct answers, which need the `Answer:` prefill, and for F-block continuations), then
  `create_completion(max_tokens=1, logprobs=20)` on the context up to the answer for the
  option probabilities. The F-block edits the naive pass's own baseline chain with the same
  operators and seeds.

- Bare: `bench/bare_batched.py`, a bare batched `llama_decode` loop replaying the engine's
  generations (same context ids, same output ids, same appended cues, same threads and
  batch width): the engine's ceiling on this machine.

Prints the throughputs (answered audit jobs per second and generated tokens per second,
model load included), engine/bare and engine/naive, and the largest difference between the
engine's and the naive pass's option distributions (where both wrote the same text, and
overall).

    .venv/bin/python bench/audit_vs_naive.py --items 20 --max-tokens 48
"""

from __future__ import annotations

import argparse
import json
import os
import time

from bare_batched import bare_batched_pass, replay_of
from naive_common import answer_context, naive_probs

from store import open_db
from store.datasets import get_items
from store.generations import get_generations
from workbench.audit import AuditEngine, AuditSpec, resolve_operators, run_audit
from workbench.audit.spec import SHUFFLE_OPERATOR
from workbench.datasets.demo import import_demo
from workbench.models import GenerationRequest, Runner, default_model
from workbench.models.backend import default_threads, model_params, use_extra_buffers
from workbench.models.registry import register_model
from workbench.models.prompts import ChatFormat, build_messages
from workbench.models.templates import DEFAULT_TEMPLATE, get_template
from workbench.perturb import OPERATORS, strip_final_answer

TEMPLATE = "neutral_cot@1"
DIRECT_MAX_TOKENS = 16


def engine_pass(db, items, operators, max_tokens: int, threads: int | None,
                batch: int | None):
    """The audit through `run_audit`.

    Returns:
        (seconds, n generations, {(item, op): result}, (threads, batch width used)).
    """
    spec = AuditSpec(dataset="demo", models=("default",), templates=(TEMPLATE,),
                     operators=operators, item_ids=tuple(i.source_id for i in items),
                     max_tokens=max_tokens, name="bench")
    started = time.perf_counter()
    engine = AuditEngine(db, threads=threads, batch_size=batch)
    seen: dict = {}
    model_id = default_model(db).id

    def on_event(event) -> None:  # keep the runner's settings before it is released
        runner = engine._runners.get(model_id)
        if runner is not None and runner._backend is not None:
            decoder = getattr(runner._backend, "_decoder", None)
            seen.update(threads=runner._backend.threads, verdict=runner.batch_verdict,
                        batch=runner.batch_size, stats=dict(decoder.stats) if decoder else None)

    outcome = run_audit(db, spec, engine=engine, judge=False, on_event=on_event)
    elapsed = time.perf_counter() - started
    verdict = seen.get("verdict")
    width = seen["batch"] if verdict is not None and verdict.identical else 1
    print(f"engine: {seen.get('threads')} threads, batch {seen.get('batch')}, self-check "
          f"{'identical' if verdict and verdict.identical else verdict}, decoder {seen.get('stats')}")
    results = {}
    for source_id, role, op, output, probs in db.execute(
            "SELECT i.source_id, j.role, v.operator_id, g.output, g.option_probs_json "
            "FROM jobs j JOIN items i ON i.id = j.item_id "
            "LEFT JOIN variants v ON v.id = j.variant_id "
            "JOIN generations g ON g.key = j.generation_key WHERE j.audit_id = ?",
            [outcome.audit_id]):
        results[(source_id, op or role)] = (output, json.loads(probs) if probs else None)
    return elapsed, outcome.generated, results, (seen.get("threads") or 1, width)


def naive_pass(items, operators, max_tokens: int, model_path: str, chat: ChatFormat,
               seed: int = 0):
    """The battery operator-major; returns (seconds, n generations, {(item, op): result})."""
    from llama_cpp import Llama

    started = time.perf_counter()
    with model_params(use_extra_buffers()):
        llm = Llama(model_path=model_path, n_ctx=4096, logits_all=True, verbose=False)
    cot = get_template(TEMPLATE)
    direct = get_template(DEFAULT_TEMPLATE["direct"])
    results: dict = {}
    n = 0

    def chat_cot(item, request) -> None:
        nonlocal n
        messages = build_messages(request, cot)
        reply = llm.create_chat_completion(messages=messages, temperature=0.0,
                                           max_tokens=max_tokens)
        text = reply["choices"][0]["message"]["content"] or ""
        labels = tuple(request.effective_options)
        n += 1
        return text, naive_probs(llm, answer_context(chat.render(messages), text, labels),
                                  labels)

    for item in items:  # the baselines first: the F-block needs them
        results[(item.source_id, "baseline")] = chat_cot(
            item, GenerationRequest(item, "cot", TEMPLATE))
    for item in items:
        prompt = chat.render(build_messages(GenerationRequest(item, "direct",
                                                              direct.id), direct)) + "Answer:"
        out = llm.create_completion(prompt, max_tokens=DIRECT_MAX_TOKENS, temperature=0.0)
        n += 1
        results[(item.source_id, "direct")] = (out["choices"][0]["text"],
                                               naive_probs(llm, prompt, item.labels))
    for op_id in operators:  # operator-major, as a script looping over the catalogue
        op = OPERATORS[op_id]
        for item in items:
            if op.block == "M" or op_id == SHUFFLE_OPERATOR:
                edit = op.apply(item.question, seed=seed, item_key=item.source_id,
                                options=item.options, gold=item.gold)
                if not edit.fired:
                    continue
                request = (GenerationRequest(item, "cot", TEMPLATE, question=edit.text)
                           if op.block == "M" else
                           GenerationRequest(item, "cot", TEMPLATE, options=edit.options))
                results[(item.source_id, op_id)] = chat_cot(item, request)
                continue
            chain = strip_final_answer(results[(item.source_id, "baseline")][0])
            edit = op.apply(chain, seed=seed, item_key=item.source_id)
            if not edit.fired:
                continue
            prompt = chat.render(build_messages(GenerationRequest(item, "cot", TEMPLATE), cot))
            prompt += edit.text
            out = llm.create_completion(prompt, max_tokens=max_tokens, temperature=0.0)
            text = out["choices"][0]["text"]
            n += 1
            results[(item.source_id, op_id)] = (
                text, naive_probs(llm, answer_context(prompt, text, item.labels),
                                   item.labels))
    elapsed = time.perf_counter() - started
    llm.close()
    return elapsed, n, results


def main() -> None:
    """Run both passes and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=20)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--model", default=None,
                        help="A GGUF file to benchmark instead of the embedded SmolLM2")
    parser.add_argument("--threads", type=int, default=None,
                        help="Engine threads (default: the runner's, idle cores)")
    parser.add_argument("--batch", type=int, default=None,
                        help="Engine sequences per batch (default: the runner's)")
    parser.add_argument("--rounds", type=int, choices=(1, 2), default=2,
                        help="2: engine, bare, naive, then naive, bare, engine (ratios from "
                             "the sums, so a change of machine load favours no pass)")
    args = parser.parse_args()
    # One thread count for every pass and round (chosen once from the idle cores), so a
    # pass that starts while the machine is busy does not run with fewer threads.
    args.threads = args.threads or default_threads()

    db = open_db(memory=True)
    import_demo(db)
    if args.model:  # benchmarked under the name the passes use
        register_model(db, args.model, "default")
    items = [i for i in get_items(db, "demo") if i.kind == "mcq"][: args.items]
    operators = resolve_operators("all")
    model = default_model(db)
    chat = Runner(db, model).chat
    print(f"{len(items)} items x (baseline, direct, {len(operators)} operators), max "
          f"{args.max_tokens} tokens, cores {os.cpu_count()}, load {os.getloadavg()[0]:.2f}")
    engine_s, engine_n, engine_results, (threads, width) = engine_pass(
        db, items, operators, args.max_tokens, args.threads, args.batch)
    from llama_cpp import Llama

    vocab = Llama(model_path=model.path, vocab_only=True, verbose=False)
    generations = get_generations(db, [k for (k,) in db.execute(
        "SELECT key FROM generations WHERE parse_status != 'error' ORDER BY id")])
    replays = [replay_of(g, lambda text, special: vocab.tokenize(
        text.encode("utf-8"), add_bos=False, special=special)) for g in generations.values()]
    tokens = sum(len(g.output_token_ids or ()) for g in generations.values())
    print(f"engine: {len(engine_results)} answered jobs ({engine_n} generations, {tokens} "
          f"tokens) in {engine_s:.1f} s: {len(engine_results) / engine_s:.3f} jobs/s, "
          f"{tokens / engine_s:.1f} tok/s", flush=True)
    bare_s = bare_batched_pass(model.path, threads, width, replays)
    print(f"bare:   the same {len(replays)} generations replayed in {bare_s:.1f} s: "
          f"{tokens / bare_s:.1f} tok/s ({width} per batch, {threads} threads)", flush=True)
    naive_s, naive_n, naive_results = naive_pass(items, operators, args.max_tokens,
                                                 model.path, chat)
    print(f"naive:  {len(naive_results)} answered jobs ({naive_n} generations) in "
          f"{naive_s:.1f} s: {len(naive_results) / naive_s:.3f} jobs/s")
    if args.rounds == 2:  # the same three passes in reverse order: load changes even out
        naive2 = naive_pass(items, operators, args.max_tokens, model.path, chat)[0]
        bare2 = bare_batched_pass(model.path, threads, width, replays)
        db2 = open_db(memory=True)
        import_demo(db2)
        if args.model:
            register_model(db2, args.model, "default")
        engine2 = engine_pass(db2, items, operators, args.max_tokens, args.threads,
                              args.batch)[0]
        print(f"round 2 (reversed): naive {naive2:.1f} s, bare {bare2:.1f} s, engine "
              f"{engine2:.1f} s", flush=True)
        engine_s, bare_s, naive_s = engine_s + engine2, bare_s + bare2, naive_s + naive2
        print(f"both rounds: engine {engine_s:.1f} s ({2 * tokens / engine_s:.1f} tok/s), "
              f"bare {bare_s:.1f} s ({2 * tokens / bare_s:.1f} tok/s), naive {naive_s:.1f} s")
    print(f"engine/bare (same generations): {bare_s / engine_s:.2f}")
    # Throughput = answered audit jobs (baseline, direct, each fired edit) per second, the
    # work an auditor wants done; the engine answers identical prompts (e.g. two negation
    # variants making the same edit) once, the naive loop every time.
    ratio = (len(engine_results) / engine_s) / (len(naive_results) / naive_s)
    print(f"throughput ratio engine/naive: {ratio:.2f}  (per generation: "
          f"{(engine_n / engine_s) / (naive_n / naive_s):.2f})")

    same, diffs_same, diffs_all, missing = 0, [], [], 0
    common = sorted(set(engine_results) & set(naive_results))
    for key in common:
        text, probs = engine_results[key]
        naive_text, naive_probs = naive_results[key]
        if not probs or naive_probs is None:
            missing += 1
            continue
        diff = max(abs(probs[label] - naive_probs.get(label, 0.0)) for label in probs)
        diffs_all.append(diff)
        if text == naive_text:
            same += 1
            diffs_same.append(diff)
    print(f"compared generations: {len(common)} (engine {len(engine_results)}, naive "
          f"{len(naive_results)}); identical text {same}; no distribution {missing}")
    if diffs_same:
        print(f"max |p_engine - p_naive| where texts match: {max(diffs_same):.2e}")
    if diffs_all:
        print(f"max |p_engine - p_naive| overall: {max(diffs_all):.2e}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
