"""Benchmark: the full seed-002 report on a paper-scale store — wall time and peak RSS.

Runs, each in a fresh process so its peak resident memory is its own (`os.wait4`):

1. `paw report --panel all` on the store of `bench/synthetic_store.py` (14 models × 4
   datasets × 30 operators × 200 items): the cross-dataset panel report with every table,
   the Appendix G robustness sections and the PNG, written as Markdown;
2. `paw report --audit scale-medqa`: one audit (one dataset, 14 arms);
3. the same panel report in-process, timed by phase (SQL → DataFrames, metrics with
   bootstrap, tables, rendering), to show where the time goes.

Targets (issue 13): ≤ 30 s and ≤ 4 GB RSS on 2 cores. The machine is shared, so the load
average is printed before and after; compare runs only at similar load.

    .venv/bin/python bench/synthetic_store.py --db /tmp/paw-scale.db
    .venv/bin/python bench/report_scale.py --db /tmp/paw-scale.db
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PHASES = r"""
import json, sys, time
t0 = time.perf_counter()
from analysis.frames import load_audit
from analysis.panel import arrange, panel_sections, resolve_panel
from analysis.render import render_json, render_markdown
from analysis.tables import compute_audit
from store import open_db
db = open_db(sys.argv[1], create=False)
n_boot = int(sys.argv[2])
t_import = time.perf_counter()
frames = [load_audit(db, row["id"]) for row in resolve_panel(db, "all")]
t_load = time.perf_counter()
results = [compute_audit(f, n_boot, 0) for f in frames]
t_compute = time.perf_counter()
sections = panel_sections(arrange(results, n_boot, 0))
t_tables = time.perf_counter()
text = render_markdown("panel", {}, sections, []) + render_json({}, sections)
t_render = time.perf_counter()
print(json.dumps({"import": t_import - t0, "load": t_load - t_import,
                  "compute": t_compute - t_load, "tables": t_tables - t_compute,
                  "render": t_render - t_tables, "jobs": sum(len(f.jobs) for f in frames)}))
"""


def measured_rss(cmd: list[str]) -> tuple[float, float, str]:
    """Run `cmd` and reap it with os.wait4 for its own peak RSS; (seconds, MiB, stdout)."""
    with tempfile.TemporaryFile("w+") as out:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{text}")
    return elapsed, usage.ru_maxrss / 1024, text  # ru_maxrss is KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True, help="store written by bench/synthetic_store.py")
    parser.add_argument("--n-boot", type=int, default=200, help="bootstrap replicates")
    parser.add_argument("--repeat", type=int, default=1, help="runs of the panel report")
    args = parser.parse_args()
    if not Path(args.db).exists():
        sys.exit(f"{args.db}: no such store; write it with bench/synthetic_store.py first")
    paw = str(Path(sys.executable).with_name("paw"))
    print(f"machine: {os.cpu_count()} cores; load average before: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            seconds, rss, _ = measured_rss([paw, "report", "--db", args.db, "--panel", "all",
                                            "--n-boot", str(args.n_boot),
                                            "--out", f"{tmp}/panel.md"])
            print(f"paw report --panel all (4 audits, n_boot={args.n_boot}): "
                  f"{seconds:.1f} s, peak RSS {rss:.0f} MiB")
        size = Path(f"{tmp}/panel.md").stat().st_size
        print(f"  report: {size / 1024:.0f} KiB Markdown + PNG")
        seconds, rss, _ = measured_rss([paw, "report", "--db", args.db, "--audit",
                                        "scale-medqa", "--n-boot", str(args.n_boot),
                                        "--out", f"{tmp}/one.md"])
        print(f"paw report --audit scale-medqa (1 audit, 14 arms): {seconds:.1f} s, "
              f"peak RSS {rss:.0f} MiB")
    seconds, rss, out = measured_rss([sys.executable, "-c", PHASES, args.db, str(args.n_boot)])
    phases = json.loads(out.strip().splitlines()[-1])
    print(f"in-process panel report by phase ({phases.pop('jobs')} jobs, peak RSS "
          f"{rss:.0f} MiB): " + ", ".join(f"{k} {v:.1f} s" for k, v in phases.items()))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
