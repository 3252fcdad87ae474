"""Benchmark (A8): one audit plan on 1 server endpoint vs 2 endpoints vs in-process, side by side.

The same seed-002 audit (N demo items: CoT baseline, direct, M2 sex swap, option shuffle,
F1 truncation continued; no judge) runs three times on a fresh database each:

- in-process: `AuditEngine(threads = endpoints x threads)` (all the cores the pool uses);
- 1 endpoint: one server (`--engine`, `--threads` each, `--parallel` slots);
- 2 endpoints: two such servers (the pool spreads whole items, every slot busy).

Servers are started afresh for each configuration (no prefix cache carried over). Prints
generations, seconds, gen/s, the ratios to one endpoint, the most requests each endpoint
had in flight at once (slots in use) and the load average before and after. The target
(docs/runner.md) is 2 endpoints >= 1.8x one endpoint on >= 10 items, on an idle machine:

    PYTHONPATH=. .venv/bin/python bench/pool_throughput.py --items 10 --max-tokens 96
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from store import open_db
from workbench.audit import AuditSpec, run_audit
from workbench.engine import AuditEngine
from workbench.perturb import resolve_operators
from workbench.datasets.demo import import_demo
from workbench.models import default_model
from workbench.models.pool import start_pool
from workbench.models.server import PoolSettings, ServerPoolBackend

OPERATORS = "F1_truncate_50,M2_sex,shuffle"


def _spec(items: int, max_tokens: int) -> AuditSpec:
    return AuditSpec(dataset="demo", models=("default",), templates=("neutral_cot@1",),
                     operators=resolve_operators(OPERATORS), limit=items,
                     max_tokens=max_tokens, name="bench-pool")


def _run(engine_of, items: int, max_tokens: int) -> tuple[int, float, dict]:
    db = open_db(memory=True)
    import_demo(db)
    backends: list[ServerPoolBackend] = []
    engine = engine_of(db, backends)
    started = time.perf_counter()
    outcome = run_audit(db, _spec(items, max_tokens), engine=engine, judge=False)
    seconds = time.perf_counter() - started
    engine.close()
    errors = outcome.job_counts.get("error", 0)
    if errors:
        raise SystemExit(f"{errors} job(s) ended in error")
    peak = dict(backends[0].peak) if backends else {}
    return outcome.generated, seconds, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--engine", choices=["llama-server", "python"], default="llama-server")
    parser.add_argument("--threads", type=int, default=1, help="threads per server")
    parser.add_argument("--parallel", type=int, default=1, help="llama-server slots")
    args = parser.parse_args()
    model = default_model(open_db(memory=True))
    print(f"load before: {os.getloadavg()}")
    rows = []

    def pooled(n: int):
        def engine_of(db, backends):
            def factory(m):
                backends.append(ServerPoolBackend(m, PoolSettings(tuple(pool.urls))))
                return backends[-1]
            return AuditEngine(db, backend_factory=factory)

        with start_pool(model.path, n, engine=args.engine, threads=args.threads,
                        parallel=args.parallel) as pool:
            return _run(engine_of, args.items, args.max_tokens)

    rows.append(("in-process", *_run(
        lambda db, b: AuditEngine(db, threads=2 * args.threads), args.items,
        args.max_tokens)))
    rows.append(("1 endpoint", *pooled(1)))
    rows.append(("2 endpoints", *pooled(2)))
    one = rows[1][1] / rows[1][2]
    print(f"{args.items} items, max {args.max_tokens} tokens, {args.engine} x "
          f"{args.threads} thread(s), {args.parallel} slot(s) per server")
    print(f"{'config':<12} {'gen':>5} {'s':>8} {'gen/s':>7} {'x 1 endpoint':>13}  slots in use")
    for name, generated, seconds, peak in rows:
        rate = generated / seconds
        slots = ", ".join(f"{url.rsplit(':', 1)[1]}: {n}" for url, n in peak.items()) or "-"
        print(f"{name:<12} {generated:>5} {seconds:>8.1f} {rate:>7.2f} {rate / one:>13.2f}  "
              f"{slots}")
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
