"""`bench/tui_screens.py` runs end to end at tiny sizes and prints every row of its table
(no timing is asserted: the bench's numbers are for docs/tui.md, measured on a quiet machine)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "tui_screens.py"


def test_the_screens_bench_prints_every_row(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("tui_screens", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("tui_screens", module)
    spec.loader.exec_module(module)
    text = module.main(["--edits", "300", "--labels", "60", "--small-labels", "40",
                        "--repeats", "1", "--dir", str(tmp_path)])
    rows = [line.split(" | ")[0].lstrip("| ") for line in text.splitlines()[2:]]
    # Every measurement, on both stores of its kind, at 80×24 and at 120×36.
    assert sorted(set(rows)) == sorted(module.TARGETS)
    assert all(rows.count(what) == 4 for what in module.TARGETS)
    assert "load average after" in capsys.readouterr().out
