"""What the batching self-check costs: wall seconds, CPU-seconds and the cores it occupies.

    python bench/selfcheck_cost.py [--width 8] [--repeats 2]

Loads the embedded SmolLM2 as `paw run` does on this machine (one 1-thread decoder per core,
prompts evaluated with every core), then runs the self-check `--repeats` times as a run
that finds no stored verdict would (`measure_verdict` on `machine_arrangement`), and once
with a decoder forced to differ at the first step (prompts evaluated token by token, as
tests/models/test_batching.py does) to show what stopping at the first difference saves.
CPU-seconds are the process's (every thread, `time.process_time`); "cores" is CPU-s / wall.
The machine's load average is printed before and after: other work on a shared machine
slows the wall time, not the CPU-seconds.
"""

from __future__ import annotations

import argparse
import os
import time

from store import open_db
from workbench.models import batch as batch_module
from workbench.models.arrangement import choose_arrangement
from workbench.models.backend import LlamaCppBackend
from workbench.models.batching import machine_arrangement, measure_verdict
from workbench.models.registry import default_model
from workbench.models.runner import Runner


def _line(label: str, verdict, wall: float) -> str:
    return (f"{label:<22} identical={verdict.identical!s:<5} decoders={verdict.decoders} "
            f"wall {wall:6.2f} s  CPU {verdict.cpu_seconds:6.2f} s  "
            f"cores {verdict.cpu_seconds / wall:4.2f}  ({verdict.detail[:70]})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--width", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    print(f"machine: {cores} cores; load average before {os.getloadavg()}")
    db = open_db(memory=True)
    model = default_model(db)
    arrangement = choose_arrangement(cores, args.width)
    backend = LlamaCppBackend(model.path, context_length=model.context_length,
                              threads=arrangement.threads, batch_threads=cores)
    runner = Runner(db, model, backend=backend, batch_size=args.width)
    checked = machine_arrangement(arrangement, 0)
    print(f"checked arrangement: {checked.describe()}")
    for n in range(args.repeats):
        started = time.perf_counter()
        verdict = measure_verdict(runner, checked)
        print(_line(f"self-check {n + 1}", verdict, time.perf_counter() - started))
    original = batch_module.BatchDecoder.__init__

    def token_by_token(self, *a, **kw):  # differs at step 0 of probe 0
        original(self, *a, **kw)
        self.n_batch = 1

    batch_module.BatchDecoder.__init__ = token_by_token  # type: ignore[method-assign]
    backend.close_decoders()
    started = time.perf_counter()
    verdict = measure_verdict(runner, checked)
    print(_line("forced difference", verdict, time.perf_counter() - started))
    batch_module.BatchDecoder.__init__ = original  # type: ignore[method-assign]
    backend.close()
    print(f"load average after {os.getloadavg()}")


if __name__ == "__main__":
    main()
