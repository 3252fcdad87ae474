"""The paper-scale synthetic store of `bench/synthetic_store.py`, built small: it is written
through the real schema and the panel report reads it (the benchmark's input stays valid)."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

from analysis.audit.panel_report import build_panel_report
from store import open_db

BENCH = Path(__file__).resolve().parents[2] / "bench" / "synthetic_store.py"


def _module():
    spec = importlib.util.spec_from_file_location("synthetic_store", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("synthetic_store", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_small_synthetic_store_feeds_the_panel_report(tmp_path):
    counts = _module().build(str(tmp_path / "s.db"), n_items=3, n_models=6, seed=1)
    # 4 datasets × 3 items; 4 audits × 6 arms; per arm and item 2 + 13 + 17 jobs, plus a
    # shuffle on the 3 multiple-choice datasets: 4·3·6·32 + 3·3·6 = 2304 + 54 = 2358.
    assert (counts["items"], counts["arms"], counts["jobs"]) == (12, 24, 2358)
    db = open_db(tmp_path / "s.db", create=False)
    report = build_panel_report(db, "all", n_boot=20)
    summary = report.section("panel_summary").frame
    assert summary["n_datasets"].tolist() == [4] * 6
    # BioMistral-7B (the 6th model) is chain-compressed: F1 never fires, so its ECR is
    # 0.00 and MFC is '–', as in seed 002's Table 3; its Table 11 F1 row is '–'.
    bio = "BioMistral-7B/neutral_cot@1"
    assert summary.loc[bio, "ecr"] == 0.0 and math.isnan(summary.loc[bio, "mfc"])
    assert math.isnan(report.section("panel_families").frame.loc["F1 truncate", bio])
    assert report.section("robust_chs_weights").frame["kendall_tau"].notna().all()
