"""Benchmark: peak memory of `paw import` on a large valid file, against the file's size.

Writes a valid MedQA JSON-lines file of about `--mb` megabytes (rows shaped like MedQA's
US 4-option test set: a vignette of ~1,100 characters, four options, `answer_idx`,
`meta_info`, `metamap_phrases`), then runs `paw import medqa FILE --db NEW.db` in a child
process and reads that child's own peak resident set size (`ru_maxrss` from `os.wait4`,
KiB on Linux). The file is written by another child first, so the benchmark's own process
stays small: Linux keeps a process's peak across fork and exec, so a child forked from a
large parent would inherit the parent's size as its peak. With `--parquet` the same rows
are written as Parquet (pyarrow) and imported the same way.

    .venv/bin/python bench/import_memory.py --mb 200
    .venv/bin/python bench/import_memory.py --mb 200 --parquet

Prints the file size, the peak, their ratio, the baseline peak of the same command on a
one-row file (the interpreter, PAW's imports and SQLite, which do not grow with the file),
and the wall time. The import must stay within 2x the file (docs/importing.md).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = ("patient presents with fever cough dyspnea chest pain history of hypertension "
         "diabetes smoking examination shows tachycardia crackles laboratory studies show "
         "leukocytosis elevated creatinine which of the following is the most likely "
         "diagnosis next best step in management mechanism of action").split()


def _row(rng: random.Random, n: int) -> dict:
    vignette = " ".join(rng.choice(WORDS) for _ in range(160))
    return {"question": f"A {20 + n % 60}-year-old {vignette}?",
            "answer": f"Option {n} c",
            "options": {k: f"Option {n} {k.lower()}" for k in "ABCD"},
            "meta_info": "step1" if n % 2 else "step2&3", "answer_idx": "C",
            "metamap_phrases": [rng.choice(WORDS) for _ in range(20)]}


def write_jsonl(path: Path, megabytes: float) -> int:
    """A valid MedQA file of about `megabytes` MB; returns its row count."""
    rng = random.Random(7)
    target = int(megabytes * 1_000_000)
    rows = 0
    with path.open("w", encoding="utf-8") as handle:
        while handle.tell() < target:
            handle.write(json.dumps(_row(rng, rows)) + "\n")
            rows += 1
    return rows


def write_parquet(path: Path, megabytes: float) -> int:
    """The same rows as Parquet (row groups of 10,000), about `megabytes` MB on disk."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(7)
    rows = 0
    writer = None
    try:
        while writer is None or path.stat().st_size < megabytes * 1_000_000:
            table = pa.Table.from_pylist([_row(rng, rows + i) for i in range(10_000)])
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema, compression="none")
            writer.write_table(table)
            rows += 10_000
            if path.stat().st_size == 0:  # the footer is written on close; estimate
                if rows * 1_300 >= megabytes * 1_000_000:
                    break
    finally:
        if writer is not None:
            writer.close()
    return rows


def peak_kib(args: list[str]) -> tuple[int, float]:
    """Run `paw ARGS` in a fresh child; (its own peak RSS in KiB, seconds)."""
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", "from workbench.cli import main; main()",
                              *args], env=dict(os.environ, PYTHONPATH=str(Path.cwd())),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    if child.returncode != 0:
        sys.exit(f"paw {' '.join(args)} failed with exit {child.returncode}")
    return usage.ru_maxrss, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=200, help="file size in MB (default 200)")
    parser.add_argument("--parquet", action="store_true", help="write and import Parquet")
    parser.add_argument("--baseline", action="store_true",
                        help="measure a one-row import instead (the fixed cost)")
    parser.add_argument("--write", metavar="PATH", help=argparse.SUPPRESS)  # the writer child
    options = parser.parse_args()
    writer = write_parquet if options.parquet else write_jsonl
    if options.write:
        print(writer(Path(options.write), options.mb))
        return
    with tempfile.TemporaryDirectory() as folder:
        suffix = "parquet" if options.parquet else "jsonl"
        data = Path(folder) / f"medqa_big.{suffix}"
        size_mb = 0.0001 if options.baseline else options.mb
        written = subprocess.run(
            [sys.executable, __file__, "--write", str(data), "--mb", str(size_mb)]
            + (["--parquet"] if options.parquet else []),
            capture_output=True, text=True, check=True)
        rows = int(written.stdout)
        size = data.stat().st_size
        peak, seconds = peak_kib(["import", "medqa", str(data), "--db",
                                  str(Path(folder) / "paw.db")])
        peak_mb = peak * 1024 / 1e6
        print(f"file: {suffix}, {size / 1e6:.1f} MB, {rows} rows")
        if options.baseline:
            print(f"paw import medqa (one row): peak RSS {peak_mb:.0f} MB, {seconds:.1f} s")
            return
        print(f"paw import medqa: peak RSS {peak_mb:.0f} MB = {peak_mb / (size / 1e6):.2f}x "
              f"the file, {seconds:.1f} s ({rows / seconds:.0f} rows/s)")


if __name__ == "__main__":
    main()
