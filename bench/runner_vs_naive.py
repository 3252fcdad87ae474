"""Benchmark: the PAW Runner against the machine's lower bound and a careful loop, same workload.

Workload: N demo vignettes answered with chain of thought (greedy), each with its option
distribution; then one continuation per item of its own chain cut at half its tokens (an
F1-style truncation), again with the option distribution.

- Runner: `workbench.models.Runner` on `--threads` cores (PAW's arrangement: one 1-thread
  batch decoder per core on a CPU) at the width it measures (`--batch N` fixes one), model
  load included; round 1 runs the batching self-check and the width measurement, round 2
  reuses the stored verdict and width.
- Limit: `bench/limit.py` — the Runner's generations' minimum prompt, cue and decoded tokens
  at the best raw `llama_decode` rates measured here, the best of every width measured.
- Careful: one `Llama(logits_all=False)` with the best measured thread counts, item-major
  (an item's CoT, then its continuation, so `Llama.generate` reuses the prompt), greedy
  `Llama.generate`, one read of the last logits after an appended `Answer:`. Stage 2
  continues the Runner's chains (the same text, tokenized as a user would). Unsharded: the
  sharded careful loop (a process per core) is in `bench/audit_vs_naive.py`.

Prints generations per second per pass, runner/limit, runner/careful per generation, and how
the option distributions compare where both wrote the same text.

    .venv/bin/python bench/runner_vs_naive.py --items 12 --max-tokens 64
"""

from __future__ import annotations

import argparse
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
from naive_common import careful_answer, careful_generate, careful_llama

from store import open_db
from store.datasets import get_items
from store.generations import get_generations
from workbench.datasets.demo import import_demo
from workbench.models import GenerationRequest, Runner, Sampler, default_model
from workbench.models.backend import default_threads
from workbench.models.prompts import ChatFormat, build_messages
from workbench.models.registry import register_model
from workbench.models.templates import get_template

TEMPLATE = "neutral_cot@1"


def runner_pass(db, items, max_tokens: int, threads: int, batch: int | None,
                metadata: str | None = None):
    """Both stages through the Runner; returns (seconds, results, chains, generations, meta)."""
    model = default_model(db)
    if metadata is not None:
        db.execute("UPDATE models SET metadata_json = ? WHERE id = ?", [metadata, model.id])
    runner = Runner(db, model, threads=threads, batch_size=batch)
    events = []
    started = time.perf_counter()
    _ = runner.backend  # model load counted, as in the careful pass
    stage1 = [GenerationRequest(item=i, mode="cot", template=TEMPLATE,
                                sampler=Sampler(max_tokens=max_tokens)) for i in items]
    keys1 = [runner.key(r) for r in stage1]
    runner.run(stage1, on_event=events.append)
    stored = get_generations(db, keys1)
    stage2, chains = [], {}
    for item, key in zip(items, keys1):
        ids = stored[key].output_token_ids[:len(stored[key].output_token_ids) // 2]
        prefix = b"".join(runner.backend.piece(t) for t in ids).decode("utf-8", "replace")
        chains[item.id] = prefix
        stage2.append(GenerationRequest(item=item, mode="continue", template=TEMPLATE,
                                        sampler=Sampler(max_tokens=max_tokens - len(ids)),
                                        prefix=prefix, prefix_token_ids=ids))
    keys2 = [runner.key(r) for r in stage2]
    runner.run(stage2)
    elapsed = time.perf_counter() - started
    said = [e.message for e in events if type(e).__name__ == "BatchingChecked"]
    print(f"runner: {threads} cores; {said[0] if said else 'no batching verdict'}")
    runner.close()
    stored.update(get_generations(db, keys2))
    results = {(item.id, stage): (stored[key].output, stored[key].option_probs)
               for stage, keys in ((1, keys1), (2, keys2)) for item, key in zip(items, keys)}
    meta = db.execute("SELECT metadata_json FROM models WHERE id = ?", [model.id]).fetchone()[0]
    return elapsed, results, chains, [stored[k] for k in keys1 + keys2], meta


def careful_pass(items, max_tokens: int, model_path: str, chat: ChatFormat, chains,
                 threads: int, batch_threads: int):
    """Both stages item-major with the careful loop; returns (seconds, results)."""
    started = time.perf_counter()
    llm = careful_llama(model_path, threads, batch_threads)
    template = get_template(TEMPLATE)
    results = {}

    def ids_of(text: str, special: bool) -> list[int]:
        return llm.tokenize(text.encode("utf-8"), add_bos=False, special=special)

    for item in items:
        prompt = ids_of(chat.render(build_messages(
            GenerationRequest(item=item, mode="cot", template=TEMPLATE), template)), True)
        results[(item.id, 1)] = careful_answer(
            llm, prompt, careful_generate(llm, prompt, max_tokens), item.labels)
        chain = ids_of(chains[item.id], False)
        context = prompt + chain
        results[(item.id, 2)] = careful_answer(
            llm, context, careful_generate(llm, context, max(1, max_tokens - len(chain))),
            item.labels)
    elapsed = time.perf_counter() - started
    llm.close()
    return elapsed, results


def _fresh(model_path: str | None, n_items: int):
    db = open_db(memory=True)
    import_demo(db)
    if model_path:  # benchmarked under the name the passes use
        register_model(db, model_path, "default")
    return db, [i for i in get_items(db, "demo") if i.kind == "mcq"][:n_items]


def main() -> None:
    """Run the passes and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=12)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--model", default=None,
                        help="A GGUF file to benchmark instead of the embedded SmolLM2")
    parser.add_argument("--threads", type=int, default=None,
                        help="Cores for every pass (default: the idle cores, chosen once)")
    parser.add_argument("--batch", type=int, default=None,
                        help="Runner sequences per batch (default: the width PAW measures)")
    parser.add_argument("--rounds", type=int, choices=(1, 2), default=2,
                        help="2: runner, careful, then careful, runner (sums compared)")
    args = parser.parse_args()
    cores = args.threads or default_threads()
    db, items = _fresh(args.model, args.items)
    model = default_model(db)
    chat = Runner(db, model).chat
    print(f"{len(items)} items x 2 stages, max {args.max_tokens} tokens, {cores} cores of "
          f"{os.cpu_count()}, load {load_average()}")
    runner_s, results, chains, generations, meta = runner_pass(db, items, args.max_tokens,
                                                               cores, args.batch)
    print(f"runner (round 1, self-check included): {runner_s:.1f} s (load {load_average()})",
          flush=True)
    from llama_cpp import Llama

    vocab = Llama(model_path=model.path, vocab_only=True, verbose=False)

    def tokenize(text: str, special: bool) -> list[int]:
        return vocab.tokenize(text.encode("utf-8"), add_bos=False, special=special)

    work = minimum_work(generations, tokenize)
    sample = sorted((tokenize(g.prompt, True) for g in generations), key=len)
    (load_s, _), rates = raw_rates(model.path, cores, LIMIT_WIDTHS,
                              sample[:: max(1, len(sample) // 8)][:8], work.decode_position)
    print(f"raw rates (load {load_average()}):\n" + "\n".join(describe_rates(rates)))
    one = best([r for r in rates if r.contexts == 1], "decode", 1)
    per_core = [r for r in rates if r.kind == "decode" and r.width == 1 and r.contexts > 1]
    threads = 1 if per_core and per_core[0].tokens_per_s / per_core[0].contexts > \
        one.tokens_per_s else one.threads
    careful_s, careful = careful_pass(items, args.max_tokens, model.path, chat, chains,
                                      threads, cores)
    print(f"careful ({threads} decode thread(s), {cores} prompt threads): {careful_s:.1f} s "
          f"(load {load_average()})", flush=True)
    limit, n = limit_seconds(work, load_s, rates), len(results)  # every width
    print(bound_text(rates))
    if args.rounds == 2:
        careful_s += careful_pass(items, args.max_tokens, model.path, chat, chains, threads,
                                  cores)[0]
        db2, items2 = _fresh(args.model, args.items)
        warm = runner_pass(db2, items2, args.max_tokens, cores, args.batch, meta)[0]
        print(f"round 2 (reversed): careful, then the runner with the stored verdict "
              f"{warm:.1f} s (load {load_average()})", flush=True)
        runner_s, limit, n = runner_s + warm, 2 * limit, 2 * n
    print(f"work: {work.generations} generations, {work.unique_prompt_tokens} unique prompt "
          f"tokens (of {work.context_tokens}), {work.cue_tokens} cue, {work.decoded_tokens} "
          f"decoded")
    print(f"runner {runner_s:.1f} s ({n / runner_s:.3f} gen/s), limit {limit:.1f} s, careful "
          f"{careful_s:.1f} s ({n / careful_s:.3f} gen/s)")
    print(f"runner/limit (time): {runner_s / limit:.2f}   per generation runner/careful: "
          f"{careful_s / runner_s:.2f}")
    same = [key for key in results if results[key][0] == careful[key][0]]
    diffs = [max(abs(results[k][1][lab] - careful[k][1][lab]) for lab in results[k][1])
             for k in same if results[k][1] and careful[k][1]]
    print(f"identical output text: {len(same)}/{len(results)}; max |p_runner - p_careful| "
          f"there: {max(diffs or [0]):.2e} (the careful loop reads after an appended cue)")
    print(f"load average at the end: {load_average()}")


if __name__ == "__main__":
    main()
