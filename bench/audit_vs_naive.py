"""Benchmark: the `paw audit` engine against the machine's lower bound and a careful loop.

Workload: N demo vignettes (multiple choice), every operator of the battery (17 F, 13 M,
the option shuffle) plus the CoT and direct baselines, greedy, on the embedded model. No
judge (the careful loop has none).

- Engine: `workbench.audit.run_audit` — plan, stage 1, F-block on its own baselines, stage 2,
  on the arrangement PAW chooses for `--threads` cores (one 1-thread batch decoder per core
  on a CPU), the batching verdict stored once and reused (round 2 pays no self-check).
- Limit: `bench/limit.py` — the minimum prompt tokens (perfect prefix sharing), cue tokens
  and decoded tokens of the engine's generations at the best raw `llama_decode` rates this
  machine reached just now, at the engine's batch width. No loop can beat it.
- Careful: what a competent user writes with llama-cpp-python: one `Llama(logits_all=False)`
  with the best measured thread counts (decode threads: the faster of 1 and all cores for
  one sequence; prompt threads: all cores), item-major order (an item's baseline, the
  F-block continuations of its chain, its direct answer, its M variants and shuffle, so
  `Llama.generate` reuses each item's prompt prefix), greedy `Llama.generate`, and one read
  of the last logits after appending `Answer:` for the option distribution. The F-block
  edits the careful loop's own baseline chain with the same operators and seeds.

Prints generations per second (model load included) for each pass — per generation, not
per audit job: the engine answers identical prompts (two negation variants making the same
edit) once, which a per-job rate would credit to it — engine/limit and careful/engine, and
the largest difference between the engine's and the careful loop's option distributions
where both wrote the same text.

    .venv/bin/python bench/audit_vs_naive.py --items 4 --max-tokens 64
"""

from __future__ import annotations

import argparse
import json
import os
import time

from limit import (
    LIMIT_WIDTHS,
    best,
    bound_text,
    describe_rates,
    limit_seconds,
    load_average,
    minimum_work,
    raw_rates,
)
from naive_common import careful_answer, careful_generate, careful_llama, careful_probs

from store import open_db
from store.datasets import get_items
from store.generations import get_generations
from workbench.audit import AuditSpec, run_audit
from workbench.engine import AuditEngine
from workbench.perturb import resolve_operators
from workbench.perturb import SHUFFLE_OPERATOR
from workbench.datasets.demo import import_demo
from workbench.models import GenerationRequest, Runner, default_model
from workbench.models.backend import default_threads
from workbench.models.batch import DEFAULT_BATCH_SIZE
from workbench.models.prompts import ChatFormat, build_messages
from workbench.models.registry import register_model
from workbench.models.templates import DEFAULT_TEMPLATE, get_template
from workbench.perturb import OPERATORS, strip_final_answer

TEMPLATE = "neutral_cot@1"
DIRECT_MAX_TOKENS = 16


def engine_pass(db, items, operators, max_tokens: int, threads: int, batch: int,
                metadata: str | None = None):
    """The audit through `run_audit` (with `metadata`: a stored batching verdict).

    Returns:
        (seconds, n generations, {(item, op): (output, probs)}, model metadata after).
    """
    model = default_model(db)
    if metadata is not None:
        db.execute("UPDATE models SET metadata_json = ? WHERE id = ?", [metadata, model.id])
    spec = AuditSpec(dataset="demo", models=("default",), templates=(TEMPLATE,),
                     operators=operators, item_ids=tuple(i.source_id for i in items),
                     max_tokens=max_tokens, name="bench")
    events = []
    started = time.perf_counter()
    engine = AuditEngine(db, threads=threads, batch_size=batch)
    try:
        outcome = run_audit(db, spec, engine=engine, judge=False,
                            on_event=lambda e: events.append(getattr(e, "event", e)))
    finally:
        engine.close()
    elapsed = time.perf_counter() - started
    said = [e.message for e in events if type(e).__name__ == "BatchingChecked"]
    print(f"engine: {threads} cores; {said[0] if said else 'no batching verdict'}")
    results = {}
    for source_id, role, op, output, probs in db.execute(
            "SELECT i.source_id, j.role, v.operator_id, g.output, g.option_probs_json "
            "FROM jobs j JOIN items i ON i.id = j.item_id "
            "LEFT JOIN variants v ON v.id = j.variant_id "
            "JOIN generations g ON g.key = j.generation_key WHERE j.audit_id = ?",
            [outcome.audit_id]):
        results[(source_id, op or role)] = (output, json.loads(probs) if probs else None)
    stored = db.execute("SELECT metadata_json FROM models WHERE id = ?", [model.id]).fetchone()
    return elapsed, outcome.generated, results, stored[0]


def careful_pass(items, operators, max_tokens: int, model_path: str, chat: ChatFormat,
                 threads: int, batch_threads: int, seed: int = 0):
    """The battery item-major with the careful loop; returns (seconds, n generations, results)."""
    started = time.perf_counter()
    llm = careful_llama(model_path, threads, batch_threads)
    cot = get_template(TEMPLATE)
    direct = get_template(DEFAULT_TEMPLATE["direct"])
    results: dict = {}
    n = 0

    def ids_of(text: str, special: bool) -> list[int]:
        return llm.tokenize(text.encode("utf-8"), add_bos=False, special=special)

    def answer(prompt_ids, labels, budget=max_tokens):
        nonlocal n
        n += 1
        return careful_answer(llm, prompt_ids, careful_generate(llm, prompt_ids, budget), labels)

    f_ops = [OPERATORS[o] for o in operators if OPERATORS[o].target == "chain"]
    q_ops = [OPERATORS[o] for o in operators if OPERATORS[o].target != "chain"]
    for item in items:  # item-major: an item's prompts share their prefix, back to back
        plain = ids_of(chat.render(build_messages(GenerationRequest(item, "cot", TEMPLATE),
                                                  cot)), True)
        results[(item.source_id, "baseline")] = baseline = answer(plain, item.labels)
        chain = strip_final_answer(baseline[0])
        for op in f_ops:
            edit = op.apply(chain, seed=seed, item_key=item.source_id)
            if edit.fired:
                results[(item.source_id, op.id)] = answer(plain + ids_of(edit.text, False),
                                                          item.labels)
        prompt = ids_of(chat.render(build_messages(
            GenerationRequest(item, "direct", direct.id), direct)) + "Answer:", True)
        out = careful_generate(llm, prompt, DIRECT_MAX_TOKENS)
        n += 1
        results[(item.source_id, "direct")] = (
            llm.detokenize(out).decode("utf-8", errors="replace"),
            careful_probs(llm, prompt, item.labels))
        for op in q_ops:
            edit = op.apply(item.question, seed=seed, item_key=item.source_id,
                            options=item.options, gold=item.gold)
            if not edit.fired:
                continue
            request = (GenerationRequest(item, "cot", TEMPLATE, question=edit.text)
                       if op.id != SHUFFLE_OPERATOR else
                       GenerationRequest(item, "cot", TEMPLATE, options=edit.options))
            results[(item.source_id, op.id)] = answer(
                ids_of(chat.render(build_messages(request, cot)), True),
                tuple(request.effective_options))
    elapsed = time.perf_counter() - started
    llm.close()
    return elapsed, n, results


def _fresh_db(model_path: str | None):
    db = open_db(memory=True)
    import_demo(db)
    if model_path:  # benchmarked under the name the passes use
        register_model(db, model_path, "default")
    return db


def main() -> None:
    """Run the passes and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--model", default=None,
                        help="A GGUF file to benchmark instead of the embedded SmolLM2")
    parser.add_argument("--threads", type=int, default=None,
                        help="Cores for every pass (default: the idle cores, chosen once)")
    parser.add_argument("--batch", type=int, default=DEFAULT_BATCH_SIZE,
                        help="Engine sequences per batch")
    parser.add_argument("--rounds", type=int, choices=(1, 2), default=2,
                        help="2: engine, careful, then careful, engine (sums compared, so a "
                             "change of machine load favours neither)")
    args = parser.parse_args()
    cores = args.threads or default_threads()

    db = _fresh_db(args.model)
    items = [i for i in get_items(db, "demo") if i.kind == "mcq"][: args.items]
    operators = resolve_operators("all")
    model = default_model(db)
    chat = Runner(db, model).chat
    print(f"{len(items)} items x (baseline, direct, {len(operators)} operators), max "
          f"{args.max_tokens} tokens, {cores} cores of {os.cpu_count()}, load {load_average()}")
    engine_s, engine_n, engine_results, metadata = engine_pass(
        db, items, operators, args.max_tokens, cores, args.batch)
    print(f"engine (round 1, self-check included): {engine_n} generations in {engine_s:.1f} s"
          f" (load {load_average()})", flush=True)
    from llama_cpp import Llama

    vocab = Llama(model_path=model.path, vocab_only=True, verbose=False)
    generations = list(get_generations(db, [k for (k,) in db.execute(
        "SELECT key FROM generations WHERE parse_status != 'error'")]).values())

    def tokenize(text: str, special: bool) -> list[int]:
        return vocab.tokenize(text.encode("utf-8"), add_bos=False, special=special)

    work = minimum_work(generations, tokenize)
    sample = sorted((tokenize(g.prompt, True) for g in generations), key=len)
    (load_s, _), rates = raw_rates(model.path, cores, LIMIT_WIDTHS, sample[:: max(1, len(sample)
                                                                              // 8)][:8],
                              work.decode_position)
    print(f"raw rates (load {load_average()}):\n" + "\n".join(describe_rates(rates)))
    one = best([r for r in rates if r.contexts == 1], "decode", 1)
    per_core = [r for r in rates if r.kind == "decode" and r.width == 1 and r.contexts > 1]
    threads = one.threads
    if per_core and per_core[0].tokens_per_s / per_core[0].contexts > one.tokens_per_s:
        threads = 1  # one sequence decodes faster on one thread than on all of them
    careful_s, careful_n, careful_results = careful_pass(
        items, operators, args.max_tokens, model.path, chat, threads, cores)
    print(f"careful ({threads} decode thread(s), {cores} prompt threads): {careful_n} "
          f"generations in {careful_s:.1f} s (load {load_average()})", flush=True)
    limit = limit_seconds(work, load_s, rates)  # the best of every width measured
    print(bound_text(rates))
    if args.rounds == 2:
        careful_s += careful_pass(items, operators, args.max_tokens, model.path, chat, threads,
                                  cores)[0]
        warm = engine_pass(_fresh_db(args.model), items, operators, args.max_tokens, cores,
                           args.batch, metadata)[0]
        print(f"round 2 (reversed): careful, then engine with the stored verdict {warm:.1f} s "
              f"(load {load_average()})", flush=True)
        engine_s, limit = engine_s + warm, 2 * limit
        careful_n, engine_n = 2 * careful_n, 2 * engine_n
    print(f"work: {work.generations} generations, {work.unique_prompt_tokens} unique prompt "
          f"tokens (of {work.context_tokens}), {work.cue_tokens} cue, {work.decoded_tokens} "
          f"decoded; limit {limit:.1f} s")
    print(f"engine {engine_s:.1f} s ({engine_n / engine_s:.3f} gen/s), limit {limit:.1f} s, "
          f"careful {careful_s:.1f} s ({careful_n / careful_s:.3f} gen/s)")
    print(f"engine/limit (time): {engine_s / limit:.2f}   per generation engine/careful: "
          f"{(engine_n / engine_s) / (careful_n / careful_s):.2f}")

    same, diffs_same, missing = 0, [], 0
    common = sorted(set(engine_results) & set(careful_results))
    for key in common:
        text, probs = engine_results[key]
        careful_text, careful_dist = careful_results[key]
        if not probs or not careful_dist:
            missing += 1
            continue
        if text == careful_text:
            same += 1
            diffs_same.append(max(abs(probs[k] - careful_dist.get(k, 0.0)) for k in probs))
    print(f"compared: {len(common)} jobs; identical text {same}; no distribution {missing}")
    if diffs_same:
        print(f"max |p_engine - p_careful| where texts match: {max(diffs_same):.2e} (the "
              "careful loop always reads after an appended cue)")
    print(f"load average at the end: {load_average()}")


if __name__ == "__main__":
    main()
