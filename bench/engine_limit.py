"""Benchmark: the `paw demo` audit against this machine's lower bound, at each core count.

Workload: exactly what `paw demo` runs — its four vignettes, its operators, 112 tokens, the
LLM judge on the embedded model — through `run_audit` on a fresh in-memory store, with
`--threads C` (C cores; PAW picks its own arrangement of decoders and threads on them).

For each core count it prints, side by side:

- **PAW warm**: the run with the batching verdict already stored (what every run after the
  first pays: the self-check is reused, `workbench.models.verdicts`);
- **PAW cold**: the same on a store without it (the self-check runs first);
- **limit**: the workload's minimum tokens at the raw rates measured here (`bench/limit.py`),
  the best arrangement for prompts and for decoding, over every width in `LIMIT_WIDTHS`
  (1, 2, 4, 8, 16, 32; the one that gave the bound is printed): the machine's bound, not
  the one at PAW's width;
- the costs PAW pays once per machine, apart: the batching self-check (its reference path
  included) and the width measurement, as stored in the model's metadata by the cold pass;
- PAW/limit for both, PAW's CPU seconds, and PAW's own counters (prompt tokens evaluated,
  decode steps and their mean width).

Rates are measured before and after the PAW passes and averaged; the load average is printed
with every figure. Each core count runs in its own process pinned to that many cores
(`os.sched_setaffinity` before the model loads, so every thread it makes, the self-check's
included, stays on them): "1 core" is one core. PAW picks its own batch width (measured,
`workbench.models.width`) unless `--batch` names one. Targets (issue 40): warm PAW/limit
≤ 1.10 at 1 core, ≤ 1.20 at 2 cores, on an idle machine.

    .venv/bin/python bench/engine_limit.py --cores 1,2            # the measurement (idle machine)
    .venv/bin/python bench/engine_limit.py --cores 1 --items 1 --max-tokens 24   # a quick try
    .venv/bin/python bench/engine_limit.py --rates-only --cores 2  # the arrangements alone
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
    bound_text,
    describe_rates,
    limit_cpu_seconds,
    limit_seconds,
    load_average,
    minimum_work,
    raw_rates,
)

from store import open_db
from store.generations import get_generations
from workbench.audit import AuditSpec, run_audit
from workbench.engine import AuditEngine
from workbench.perturb import resolve_operators
from workbench.cli.audit import DEMO_ITEMS, DEMO_MAX_TOKENS, DEMO_OPERATORS
from workbench.datasets.demo import import_demo
from workbench.models import batch as batch_module
from workbench.models import default_model

COUNTERS: dict[str, float] = {}
"""Decoder counters of the current pass, summed as each decoder closes."""


def _count_on_close() -> None:
    original = batch_module.BatchDecoder.close

    def close(self) -> None:
        if self.ctx:
            for key in ("steps", "step_tokens", "prompt_tokens", "reused_tokens", "copies",
                        "step_s", "eval_s"):
                COUNTERS[key] = COUNTERS.get(key, 0) + self.stats[key]
        original(self)

    batch_module.BatchDecoder.close = close


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def paw_pass(cores: int, n_items: int, max_tokens: int, width: int | None,
             metadata: str | None) -> tuple[float, float, dict, object, str]:
    """The demo audit on a fresh store; returns (seconds, CPU s, counters, db, model metadata).

    `metadata`: the model's `metadata_json` to start from (a stored verdict: warm).
    """
    db = open_db(memory=True)
    import_demo(db)
    model = default_model(db)
    if metadata is not None:
        db.execute("UPDATE models SET metadata_json = ? WHERE id = ?", [metadata, model.id])
    spec = AuditSpec(dataset="demo", models=("default",),
                     operators=resolve_operators(DEMO_OPERATORS),
                     item_ids=DEMO_ITEMS[:n_items], max_tokens=max_tokens)
    COUNTERS.clear()
    engine = AuditEngine(db, threads=cores, batch_size=width)
    started, cpu = time.perf_counter(), _cpu()
    try:
        run_audit(db, spec, engine=engine, judge=True, judge_model=model)
    finally:
        engine.close()
    seconds, cpu = time.perf_counter() - started, _cpu() - cpu
    stored = db.execute("SELECT metadata_json FROM models WHERE id = ?", [model.id]).fetchone()[0]
    return seconds, cpu, dict(COUNTERS), db, stored


def main() -> None:
    """Run the passes and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", default="1,2", help="core counts to measure (comma list)")
    parser.add_argument("--items", type=int, default=len(DEMO_ITEMS))
    parser.add_argument("--max-tokens", type=int, default=DEMO_MAX_TOKENS)
    parser.add_argument("--batch", type=int, default=None,
                        help="PAW's width (default: measured by PAW, as a user's run)")
    parser.add_argument("--rates-only", action="store_true",
                        help="only the raw rates of every arrangement and width")
    parser.add_argument("--pinned", action="store_true",
                        help="(internal) this process measures one core count, pinned")
    args = parser.parse_args()
    cores_list = [int(c) for c in args.cores.split(",")]
    if not args.pinned:
        # One process per core count, pinned before anything loads (threads inherit it).
        rest, skip = [], False
        for arg in sys.argv[1:]:
            if skip or arg == "--cores" or arg.startswith("--cores="):
                skip = arg == "--cores"
                continue
            rest.append(arg)
        for cores in cores_list:
            subprocess.run([sys.executable, __file__, *rest, "--cores", str(cores),
                            "--pinned"], check=True)
        return
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < cores_list[0]:
        raise SystemExit(f"--cores {cores_list[0]}: only {len(allowed)} cores allowed here")
    os.sched_setaffinity(0, allowed[:cores_list[0]])
    _count_on_close()
    probe_db = open_db(memory=True)
    model = default_model(probe_db)
    from llama_cpp import Llama

    vocab = Llama(model_path=model.path, vocab_only=True, verbose=False)

    def tokenize(text: str, special: bool) -> list[int]:
        return vocab.tokenize(text.encode("utf-8"), add_bos=False, special=special)

    if args.rates_only:
        sample = [tokenize("Question: " + "A 54-year-old woman has chest pain. " * 30, False)]
        for cores in cores_list:
            (load_s, _), rates = raw_rates(model.path, cores, LIMIT_WIDTHS, sample, 330)
            print(f"cores {cores} (load {load_average()}): model load {load_s:.2f} s")
            print("\n".join(describe_rates(rates)), flush=True)
        return
    print(f"paw demo workload: {args.items} items, max {args.max_tokens} tokens, judge on, "
          f"width {args.batch or 'measured by PAW'}; pinned to cores "
          f"{sorted(os.sched_getaffinity(0))} of {os.cpu_count()}; load {load_average()}",
          flush=True)
    rows = []
    for cores in cores_list:
        cold_s, cold_cpu, _, db, metadata = paw_pass(cores, args.items, args.max_tokens,
                                                     args.batch, None)
        print(f"[{cores} core(s)] PAW cold {cold_s:.1f} s ({cold_cpu:.1f} CPU s; load "
              f"{load_average()})", flush=True)
        stored = json.loads(metadata)
        check, width = stored.get("batch_check") or {}, stored.get("width_check") or {}
        measured = sorted((int(w), r) for w, r in (width.get("rates") or {}).items())
        print(f"[{cores} core(s)] once per machine, inside cold: batching self-check at width "
              f"{check.get('n_seq')} {check.get('seconds', 0):.1f} s "
              f"({check.get('cpu_seconds', 0):.1f} CPU s, its one-at-a-time reference "
              f"included); width measurement {width.get('seconds', 0):.1f} s "
              f"({width.get('cpu_seconds', 0):.1f} CPU s): "
              f"{', '.join(f'w{w} {r}' for w, r in measured)} "
              f"tok/s -> width {width.get('width', args.batch)}", flush=True)
        generations = list(get_generations(db, [k for (k,) in db.execute(
            "SELECT key FROM generations WHERE parse_status != 'error'")]).values())
        work = minimum_work(generations, tokenize)
        contexts = sorted((tokenize(g.prompt, True) for g in generations), key=len)
        sample = contexts[:: max(1, len(contexts) // 8)][:8]
        load_a, rates_a = raw_rates(model.path, cores, LIMIT_WIDTHS, sample,
                                    work.decode_position)
        print(f"[{cores} core(s)] rates (load {load_average()}):")
        print("\n".join(describe_rates(rates_a)), flush=True)
        warm_s, warm_cpu, counters, _, _ = paw_pass(cores, args.items, args.max_tokens,
                                                    args.batch, metadata)
        print(f"[{cores} core(s)] PAW warm {warm_s:.1f} s ({warm_cpu:.1f} CPU s; load "
              f"{load_average()})", flush=True)
        load_b, rates_b = raw_rates(model.path, cores, LIMIT_WIDTHS, sample,
                                    work.decode_position)
        print(f"[{cores} core(s)] {bound_text(rates_a)} (before); {bound_text(rates_b)} (after)")
        limit = (limit_seconds(work, load_a[0], rates_a)
                 + limit_seconds(work, load_b[0], rates_b)) / 2
        limit_cpu = (limit_cpu_seconds(work, load_a[1], rates_a)
                     + limit_cpu_seconds(work, load_b[1], rates_b)) / 2
        print(f"[{cores} core(s)] work: {work.generations} generations, {work.context_tokens} "
              f"context tokens, {work.unique_prompt_tokens} unique with perfect prefix "
              f"sharing, {work.cue_tokens} cue tokens, {work.decoded_tokens} decoded")
        steps = counters.get("steps", 0)
        print(f"[{cores} core(s)] PAW warm evaluated {int(counters.get('prompt_tokens', 0))} "
              f"prompt tokens in its decoders (reused {int(counters.get('reused_tokens', 0))}),"
              f" {int(steps)} decode steps of mean width "
              f"{counters.get('step_tokens', 0) / steps if steps else 0:.2f}; step time "
              f"{counters.get('step_s', 0):.1f} s, prompt time {counters.get('eval_s', 0):.1f} s "
              f"(summed over decoders)", flush=True)
        rows.append((cores, warm_s, cold_s, limit, warm_cpu, cold_cpu, limit_cpu))
    print(f"\nwall seconds (meaningful on an idle machine only; load now {load_average()}):")
    print("cores  PAW warm  PAW cold   limit  warm/limit  cold/limit")
    for cores, warm_s, cold_s, limit, *_ in rows:
        print(f"{cores:5d}  {warm_s:7.1f}s  {cold_s:7.1f}s  {limit:6.1f}s  {warm_s / limit:10.2f}"
              f"  {cold_s / limit:10.2f}")
    print("CPU seconds (all threads; robust to other work on the machine):")
    print("cores  PAW warm  PAW cold   limit  warm/limit  cold/limit  warm CPU/(wall x cores)")
    for cores, warm_s, _, _, warm_cpu, cold_cpu, limit_cpu in rows:
        print(f"{cores:5d}  {warm_cpu:7.1f}s  {cold_cpu:7.1f}s  {limit_cpu:6.1f}s  "
              f"{warm_cpu / limit_cpu:10.2f}  {cold_cpu / limit_cpu:10.2f}  "
              f"{warm_cpu / (warm_s * cores):10.2f}")
    print(f"load average at the end: {load_average()}")


if __name__ == "__main__":
    main()
