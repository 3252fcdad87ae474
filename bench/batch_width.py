"""Benchmark: the Runner's throughput at several batch widths, side by side in one run.

Workload: N demo vignettes answered with greedy chain of thought (each with its option
distribution), run through `Runner` once per width on a fresh in-memory store with one
loaded model (so every width decodes the same prompts; the cache is reset between them).
Prints generated tokens/s per width, the ratio to width 1, and whether every width stored
the same generations as width 1 (it must: batching is only used when bit-identical).
Widths are run in a rotating order over `--rounds` rounds so a change in machine load
does not favour one width.

    .venv/bin/python bench/batch_width.py --items 16 --max-tokens 64 --widths 1,2,4,8,16
"""

from __future__ import annotations

import argparse
import os
import time

from store import open_db
from store.datasets import get_items
from store.generations import get_generations
from workbench.datasets.demo import import_demo
from workbench.models import GenerationRequest, Runner, Sampler, default_model
from workbench.models.backend import LlamaCppBackend
from workbench.models.registry import register_model


def one_width(backend: LlamaCppBackend, width: int, n_items: int, max_tokens: int):
    """(seconds, tokens out, stored rows) for one width on a fresh store."""
    db = open_db(memory=True)
    import_demo(db)
    if getattr(one_width, "model_path", None):
        register_model(db, one_width.model_path, "default")
    items = get_items(db, "demo")[:n_items]
    runner = Runner(db, default_model(db), backend=backend, batch_size=width)
    if width > 1 and not runner.batching():
        raise SystemExit(f"batching is off on this machine: {runner.batch_verdict}")
    backend.reset()
    requests = [GenerationRequest(item=i, mode="cot", template="neutral_cot@1",
                                  sampler=Sampler(max_tokens=max_tokens)) for i in items]
    started = time.perf_counter()
    summary = runner.run(requests)
    seconds = time.perf_counter() - started
    rows = {k: (g.output_token_ids, g.option_probs, g.option_logits)
            for k, g in get_generations(db, summary.keys).items()}
    return seconds, summary.tokens_out, rows


def main() -> None:
    """Run every width and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=16)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--widths", default="1,2,4,8,16")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--model", default=None,
                        help="A GGUF file to benchmark instead of the embedded SmolLM2")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads of the one context (default 1: the width gains are "
                             "measured without the 2-thread single-sequence penalty)")
    args = parser.parse_args()
    widths = [int(w) for w in args.widths.split(",")]
    db = open_db(memory=True)
    if args.model:
        register_model(db, args.model, "default")
    model = default_model(db)
    backend = LlamaCppBackend(model.path, context_length=model.context_length,
                              threads=args.threads, prefix_cache_safe=model.prefix_cache_safe)
    os.environ["PAW_DECODERS"] = "1"  # one decoder: the width alone is what is measured
    one_width.model_path = args.model
    print(f"{args.items} items, greedy CoT, max {args.max_tokens} tokens, {backend.threads} "
          f"threads, cores {os.cpu_count()}, load {os.getloadavg()[0]:.2f}", flush=True)
    seconds = {w: 0.0 for w in widths}
    tokens: dict[int, int] = {}
    rows: dict[int, dict] = {}
    for round_ in range(args.rounds):
        order = widths[round_ % len(widths):] + widths[:round_ % len(widths)]
        for width in order:
            s, n, r = one_width(backend, width, args.items, args.max_tokens)
            seconds[width] += s
            tokens[width] = tokens.get(width, 0) + n
            rows[width] = r
            print(f"  round {round_ + 1} width {width}: {n / s:.1f} tok/s "
                  f"(load {os.getloadavg()[0]:.2f})", flush=True)
    base = tokens[widths[0]] / seconds[widths[0]]
    print("width  tok/s  ratio-to-first  identical-to-first")
    for width in widths:
        rate = tokens[width] / seconds[width]
        print(f"{width:5d}  {rate:5.1f}  {rate / base:14.2f}  {rows[width] == rows[widths[0]]}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    backend.close()


if __name__ == "__main__":
    main()
