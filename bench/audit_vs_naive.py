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

- Sharded careful loop: what a competent user does with several cores — one process per
  core (`--shards`, default the cores when there are 2 or more), each the careful loop on one
  thread over its contiguous share of the items, started together; its wall time runs from
  the first shard's start to the last one's end, its CPU seconds are the shards' summed.

Each pass is timed in wall seconds and CPU seconds (model load included, interpreter start
excluded, the same for every pass). PAW runs at the width it measures on this machine
(`workbench.models.width`) unless `--batch N` fixes it. Round 1 is PAW cold (the batching
self-check and the width measurement included), round 2 reversed with PAW warm.

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
import resource
import subprocess
import sys
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
from workbench.models.prompts import ChatFormat, build_messages
from workbench.models.registry import register_model
from workbench.models.templates import DEFAULT_TEMPLATE, get_template
from workbench.perturb import OPERATORS, strip_final_answer

TEMPLATE = "neutral_cot@1"
DIRECT_MAX_TOKENS = 16


def _cpu() -> float:
    """CPU seconds of this process so far, every thread, user and system."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def engine_pass(db, items, operators, max_tokens: int, threads: int, batch: int | None,
                metadata: str | None = None):
    """The audit through `run_audit` (with `metadata`: a stored batching verdict and width;
    `batch` None: the width PAW measures).

    Returns:
        (seconds, CPU seconds, n generations, {(item, op): (output, probs)}, model metadata
        after).
    """
    model = default_model(db)
    if metadata is not None:
        db.execute("UPDATE models SET metadata_json = ? WHERE id = ?", [metadata, model.id])
    spec = AuditSpec(dataset="demo", models=("default",), templates=(TEMPLATE,),
                     operators=operators, item_ids=tuple(i.source_id for i in items),
                     max_tokens=max_tokens, name="bench")
    events = []
    started, cpu = time.perf_counter(), _cpu()
    engine = AuditEngine(db, threads=threads, batch_size=batch)
    try:
        outcome = run_audit(db, spec, engine=engine, judge=False,
                            on_event=lambda e: events.append(getattr(e, "event", e)))
    finally:
        engine.close()
    elapsed, cpu = time.perf_counter() - started, _cpu() - cpu
    said = [e.message for e in events if type(e).__name__ == "BatchingChecked"]
    print(f"engine: {threads} cores; {said[0] if said else 'no batching verdict'}")
    stored = json.loads(db.execute("SELECT metadata_json FROM models WHERE id = ?",
                                   [model.id]).fetchone()[0] or "{}")
    width = stored.get("width_check") or {}
    print(f"engine width: {batch if batch else width.get('width', '?')} "
          f"({'fixed by --batch' if batch else 'measured by PAW'})")
    results = {}
    for source_id, role, op, output, probs in db.execute(
            "SELECT i.source_id, j.role, v.operator_id, g.output, g.option_probs_json "
            "FROM jobs j JOIN items i ON i.id = j.item_id "
            "LEFT JOIN variants v ON v.id = j.variant_id "
            "JOIN generations g ON g.key = j.generation_key WHERE j.audit_id = ?",
            [outcome.audit_id]):
        results[(source_id, op or role)] = (output, json.loads(probs) if probs else None)
    stored = db.execute("SELECT metadata_json FROM models WHERE id = ?", [model.id]).fetchone()
    return elapsed, cpu, outcome.generated, results, stored[0]


def careful_pass(items, operators, max_tokens: int, model_path: str, chat: ChatFormat,
                 threads: int, batch_threads: int, seed: int = 0):
    """The battery item-major with the careful loop; returns (seconds, CPU seconds,
    n generations, results)."""
    started, cpu = time.perf_counter(), _cpu()
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
    llm.close()
    return time.perf_counter() - started, _cpu() - cpu, n, results


def shard_child(args) -> None:
    """(internal) One shard of the sharded careful loop: its contiguous share of the items on
    one thread; prints one JSON line (start and end on the wall clock, CPU s, results)."""
    index, count = (int(x) for x in args.shard.split("/"))
    db = _fresh_db(args.model)
    items = [i for i in get_items(db, "demo") if i.kind == "mcq"][: args.items]
    share = -(-len(items) // count)
    mine = items[index * share:(index + 1) * share]
    model = default_model(db)
    chat = Runner(db, model).chat
    start = time.time()
    _, cpu, n, results = careful_pass(mine, resolve_operators("all"), args.max_tokens,
                                      model.path, chat, 1, 1)
    print(json.dumps({"start": start, "end": time.time(), "cpu": cpu, "n": n,
                      "items": len(mine),
                      "results": [[k[0], k[1], v[0], v[1]] for k, v in results.items()]}))


def sharded_pass(shards: int, argv: list[str]):
    """The careful loop as `shards` processes started together, one thread each.

    Returns:
        (seconds from the first shard's start to the last one's end, CPU seconds summed,
        n generations, results).
    """
    procs = [subprocess.Popen([sys.executable, __file__, *argv, "--shard", f"{i}/{shards}"],
                              stdout=subprocess.PIPE, text=True) for i in range(shards)]
    reports = []
    for proc in procs:
        out, _ = proc.communicate()
        if proc.returncode:
            raise SystemExit(f"careful shard exited with {proc.returncode}")
        reports.append(json.loads(out.strip().splitlines()[-1]))
    results = {(a, b): (text, probs) for r in reports for a, b, text, probs in r["results"]}
    print(f"shards: {', '.join(str(r['items']) for r in reports)} items, "
          f"{', '.join('%.1f' % (r['end'] - r['start']) for r in reports)} s each")
    return (max(r["end"] for r in reports) - min(r["start"] for r in reports),
            sum(r["cpu"] for r in reports), sum(r["n"] for r in reports), results)


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
    parser.add_argument("--batch", type=int, default=None,
                        help="Engine sequences per batch (default: the width PAW measures)")
    parser.add_argument("--shards", type=int, default=None,
                        help="Processes of the sharded careful loop (default: one per core "
                             "when there are 2 or more; 0 or 1: no sharded pass)")
    parser.add_argument("--rounds", type=int, choices=(1, 2), default=2,
                        help="2: engine, careful, sharded, then sharded, careful, engine "
                             "(sums compared, so a change of machine load favours none)")
    parser.add_argument("--shard", default=None, help="(internal) run shard K/N and exit")
    args = parser.parse_args()
    if args.shard:
        shard_child(args)
        return
    cores = args.threads or default_threads()
    shards = cores if args.shards is None else args.shards
    shards = min(shards, args.items) if shards > 1 else 0
    shard_argv = ["--items", str(args.items), "--max-tokens", str(args.max_tokens),
                  *(["--model", args.model] if args.model else [])]

    db = _fresh_db(args.model)
    items = [i for i in get_items(db, "demo") if i.kind == "mcq"][: args.items]
    operators = resolve_operators("all")
    model = default_model(db)
    chat = Runner(db, model).chat
    print(f"{len(items)} items x (baseline, direct, {len(operators)} operators), max "
          f"{args.max_tokens} tokens, {cores} cores of {os.cpu_count()}, load {load_average()}")
    # pass -> per round (wall s, CPU s, n generations)
    passes: dict[str, list[tuple[float, float, int]]] = {"engine": [], "careful": [],
                                                          "sharded": []}
    engine_s, engine_cpu, engine_n, engine_results, metadata = engine_pass(
        db, items, operators, args.max_tokens, cores, args.batch)
    passes["engine"].append((engine_s, engine_cpu, engine_n))
    print(f"engine (round 1, self-check and width measurement included): {engine_n} "
          f"generations in {engine_s:.1f} s, {engine_cpu:.1f} CPU s (load {load_average()})",
          flush=True)
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
    careful_s, careful_cpu, careful_n, careful_results = careful_pass(
        items, operators, args.max_tokens, model.path, chat, threads, cores)
    passes["careful"].append((careful_s, careful_cpu, careful_n))
    print(f"careful ({threads} decode thread(s), {cores} prompt threads): {careful_n} "
          f"generations in {careful_s:.1f} s, {careful_cpu:.1f} CPU s (load {load_average()})",
          flush=True)
    sharded_results: dict = {}
    if shards:
        sharded_s, sharded_cpu, sharded_n, sharded_results = sharded_pass(shards, shard_argv)
        passes["sharded"].append((sharded_s, sharded_cpu, sharded_n))
        print(f"sharded careful ({shards} processes, 1 thread each): {sharded_n} generations "
              f"in {sharded_s:.1f} s, {sharded_cpu:.1f} CPU s (load {load_average()})",
              flush=True)
    limit = limit_seconds(work, load_s, rates)  # the best of every width measured
    print(bound_text(rates))
    if args.rounds == 2:
        if shards:
            passes["sharded"].append(sharded_pass(shards, shard_argv)[:3])
        passes["careful"].append(careful_pass(items, operators, args.max_tokens, model.path,
                                              chat, threads, cores)[:3])
        warm = engine_pass(_fresh_db(args.model), items, operators, args.max_tokens, cores,
                           args.batch, metadata)
        passes["engine"].append(warm[:3])
        print(f"round 2 (reversed): sharded, careful, then engine with the stored verdict and "
              f"width {warm[0]:.1f} s, {warm[1]:.1f} CPU s (load {load_average()})", flush=True)
        limit = 2 * limit
    print(f"work: {work.generations} generations, {work.unique_prompt_tokens} unique prompt "
          f"tokens (of {work.context_tokens}), {work.cue_tokens} cue, {work.decoded_tokens} "
          f"decoded; limit {limit:.1f} s ({args.rounds} round(s))")
    print("pass      round  wall s   CPU s  generations")
    for name, rows in passes.items():
        for number, (wall, cpu, n) in enumerate(rows, 1):
            print(f"{name:8s}  {number:5d}  {wall:6.1f}  {cpu:6.1f}  {n:11d}")
    total = {name: tuple(sum(col) for col in zip(*rows, strict=True))
             for name, rows in passes.items() if rows}
    engine_s, engine_cpu, engine_n = total["engine"]
    print(f"engine/limit (time, all rounds): {engine_s / limit:.2f}")
    print("per generation, all rounds:  X/engine wall  X/engine CPU  (above 1: the engine is "
          "faster / cheaper)")
    for name in ("careful", "sharded"):
        if name in total:
            wall, cpu, n = total[name]
            print(f"  {name:8s}  {(wall / n) / (engine_s / engine_n):13.2f}  "
                  f"{(cpu / n) / (engine_cpu / engine_n):12.2f}")
    if args.rounds == 2:
        for name in ("careful", "sharded"):
            if passes[name]:
                wall, cpu, n = passes[name][1]
                wall_e, cpu_e, n_e = passes["engine"][1]
                print(f"  {name:8s}  {(wall / n) / (wall_e / n_e):13.2f}  "
                      f"{(cpu / n) / (cpu_e / n_e):12.2f}   (round 2 alone: engine warm)")

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
    if sharded_results:
        same_text = sum(sharded_results.get(k, (None,))[0] == v[0]
                        for k, v in careful_results.items())
        print(f"sharded vs one-process careful: {same_text} of {len(careful_results)} texts "
              f"identical ({len(sharded_results)} jobs sharded)")
    print(f"load average at the end: {load_average()}")

if __name__ == "__main__":
    main()
