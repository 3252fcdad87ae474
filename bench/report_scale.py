"""Benchmark: the full seed-002 report on a paper-scale store — wall time and peak RSS.

Runs, each in a fresh process so its peak resident memory is its own (`os.wait4`):

1. `paw report --panel all` on the store of `bench/synthetic_store.py` (14 models × 4
   datasets × 30 operators × 200 items): the cross-dataset panel report with every table,
   the Appendix G robustness sections and the PNG, written as Markdown;
2. `paw report --audit scale-medqa`: one audit (one dataset, 14 arms);
3. the same panel report in-process, timed by phase (SQL → DataFrames, metrics with
   bootstrap, tables, rendering), to show where the time goes.

Targets (issue 13): ≤ 30 s and ≤ 4 GB RSS on 2 cores; issue 40: the panel report's peak
RSS below 1 GiB on the doubled store (400 items per dataset, 733,600 jobs). Given several
stores (`--db A B`), the panel report runs on each and the end prints each store's jobs
and peak side by side (runs 2 and 3 are on the first store only). The machine is shared,
so the load average is printed before and after; compare times only at similar load
(peak RSS does not depend on it).

    .venv/bin/python bench/synthetic_store.py --db /tmp/paw-scale.db
    .venv/bin/python bench/synthetic_store.py --db /tmp/paw-scale2.db --items 400
    .venv/bin/python bench/report_scale.py --db /tmp/paw-scale.db /tmp/paw-scale2.db
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
marks = [("start", time.perf_counter(), time.process_time())]
def mark(name):
    marks.append((name, time.perf_counter(), time.process_time()))
from analysis.audit.frames import load_audit
from analysis.audit.panel import arrange, resolve_panel
from analysis.audit.panel_report import panel_sections
from analysis.common.render import render_json, render_markdown
from analysis.audit.tables import compute_audit
from store import open_db
db = open_db(sys.argv[1], create=False)
n_boot = int(sys.argv[2])
mark("import")
frames = [load_audit(db, row["id"]) for row in resolve_panel(db, "all")]
mark("load")
results = [compute_audit(f, n_boot, 0) for f in frames]
mark("compute")
sections = panel_sections(arrange(results, n_boot, 0))
mark("tables")
text = render_markdown("panel", {}, sections, []) + render_json({}, sections)
mark("render")
print(json.dumps({"jobs": sum(len(f.jobs) for f in frames), "phases": [
    [name, t - t0, c - c0] for (_, t0, c0), (name, t, c) in zip(marks, marks[1:])]}))
"""


def measured_rss(cmd: list[str]) -> tuple[float, float, float, str]:
    """Run `cmd`, reaped with os.wait4 for its own usage: (wall s, CPU s, peak RSS MiB,
    output). CPU time (user + system) is what the run costs whatever else the machine
    does; wall time depends on the load."""
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
    cpu = usage.ru_utime + usage.ru_stime
    return elapsed, cpu, usage.ru_maxrss / 1024, text  # ru_maxrss is KiB on Linux


GIB = 1024.0
"""MiB in a GiB: issue 40's ceiling for the panel report's peak RSS on the doubled store."""


def jobs_in(db_path: str) -> int:
    """Jobs in a store (read-only, through SQLite's own URI: nothing is migrated)."""
    import sqlite3

    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM jobs").fetchone()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True, nargs="+",
                        help="store(s) written by bench/synthetic_store.py")
    parser.add_argument("--n-boot", type=int, default=200, help="bootstrap replicates")
    parser.add_argument("--repeat", type=int, default=1, help="runs of the panel report")
    args = parser.parse_args()
    for db in args.db:
        if not Path(db).exists():
            sys.exit(f"{db}: no such store; write it with bench/synthetic_store.py first")
    paw = str(Path(sys.executable).with_name("paw"))
    print(f"machine: {os.cpu_count()} cores; load average before: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    peaks: list[tuple[str, int, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for db in args.db:
            jobs = jobs_in(db)
            for _ in range(args.repeat):
                wall, cpu, rss, _ = measured_rss([paw, "report", "--db", db, "--panel", "all",
                                                  "--n-boot", str(args.n_boot),
                                                  "--out", f"{tmp}/panel.md"])
                peaks.append((db, jobs, rss))
                print(f"paw report --panel all on {db} ({jobs:,} jobs, n_boot={args.n_boot}): "
                      f"wall {wall:.1f} s, CPU {cpu:.1f} s, peak RSS {rss:.0f} MiB "
                      f"(load {os.getloadavg()[0]:.1f})", flush=True)
            size = Path(f"{tmp}/panel.md").stat().st_size
            print(f"  report: {size / 1024:.0f} KiB Markdown + PNG")
        first = args.db[0]
        wall, cpu, rss, _ = measured_rss([paw, "report", "--db", first, "--audit",
                                          "scale-medqa", "--n-boot", str(args.n_boot),
                                          "--out", f"{tmp}/one.md"])
        print(f"paw report --audit scale-medqa on {first} (1 audit, 14 arms): wall {wall:.1f} s,"
              f" CPU {cpu:.1f} s, peak RSS {rss:.0f} MiB")
    wall, cpu, rss, out = measured_rss([sys.executable, "-c", PHASES, first,
                                        str(args.n_boot)])
    result = json.loads(out.strip().splitlines()[-1])
    print(f"in-process panel report by phase ({result['jobs']} jobs; wall {wall:.1f} s, CPU "
          f"{cpu:.1f} s, peak RSS {rss:.0f} MiB), wall / CPU s: "
          + ", ".join(f"{name} {w:.1f} / {c:.1f}" for name, w, c in result["phases"]))
    print("\npeak RSS of the panel report by store size:")
    for db, jobs, peak in peaks:
        verdict = "below" if peak < GIB else "NOT below"
        print(f"  {jobs:9,} jobs ({db}): {peak:6.0f} MiB — {verdict} 1 GiB")
    if len({jobs for _, jobs, _ in peaks}) > 1:
        small = min(peaks, key=lambda p: p[1])
        large = max(peaks, key=lambda p: p[1])
        print(f"  ×{large[2] / small[2]:.2f} RSS for ×{large[1] / small[1]:.2f} jobs")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
