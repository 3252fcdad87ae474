"""`bench/annotation_scale.py` runs end to end at a tiny size, saves its checkpoints and
measures them again, printing the growth table (no timing is asserted: its numbers are for
docs/tui.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "annotation_scale.py"), *args],
                          capture_output=True, text=True, env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _table(text: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.strip("|").split("|")]
            for line in text.splitlines() if line.startswith("| ")]


def test_the_bench_prints_every_checkpoint_and_its_growth(tmp_path):
    keep = tmp_path / "keep"
    built = _table(_run("--labels", "80", "--repeats", "2", "--dir", str(tmp_path),
                        "--keep", str(keep)))
    assert built[0][0] == "labels per rater" and built[-1][0].startswith("growth ×")
    rows = built[1:-1]
    labels = [int(r[0].replace(",", "")) for r in rows]
    # a quarter, a half, three quarters and all of 80 (a case's last fields may overshoot)
    assert len(labels) == 4 and labels == sorted(labels) and 20 <= labels[0] < 40
    assert all(" / " in r[2] and " / " in r[3] and r[5] != "–" for r in rows)
    assert sorted(p.name for p in keep.iterdir()) == [f"scale-{n:06d}.db" for n in labels]
    again = _table(_run("--from", str(keep), "--repeats", "2"))
    assert [r[0] for r in again[1:-1]] == [r[0] for r in rows]
    assert all(r[5] == "–" for r in again[1:-1])  # next case: only while labelling
