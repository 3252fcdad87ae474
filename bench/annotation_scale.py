"""Benchmark: the labelling and coordinator screens' data paths at 10,000 labels per rater.

Issue 15 measured the coordinator's recomputation at 12.4 s (median) on a set with 10,000
labels per rater. This script builds such a set through the real API — `create_set` with
its two named raters, then every label by `record_label` (each one BEGIN IMMEDIATE …
COMMIT, signed) — and measures, at 2,500, 5,000, 7,500 and 10,000 labels per rater:

- **next case** (labelling screen): the work between the key that completes a case and
  the next case on screen — `record_label` of that last field, `get_case_view` (the
  screen's refresh of the case) and the completeness bookkeeping; p50 and p95 over the
  cases completed since the previous checkpoint. The next case itself is already in
  memory (`rater_queue` loads the queue when the screen opens; its time is printed too);
- **coordinator recomputation after a new label**: one more label, then
  `workbench.tui.report.compute_report` with the screen's `ReportCache` (only the new
  events are read, and only the tables the label changed are recomputed) — median and
  p95 of 15; and the same cold (the whole log read once, every table computed), which is
  what a newly opened coordinator screen pays;
- at 10,000, side by side on the same store, what the two measured causes cost: the old
  rater query of `progress()` (orders joined to every label event of the rater) against
  the EXISTS form, and agreement read once per table (the old `all_agreements`, one
  `agreement_table` call per table, each reading the whole log) against one read.

Growth from 2,500 to 10,000 is printed as the ratio of each figure to its 2,500 value
(4.0 would be linear).

    .venv/bin/python bench/annotation_scale.py                  # 10,000 labels per rater
    .venv/bin/python bench/annotation_scale.py --labels 2000    # a quick look

The store goes in /dev/shm when it exists (tmpfs: the build does 20,000 fsyncs; reads,
which is what is measured, do not depend on it), else the system temp folder; `--dir`
chooses. Building takes a few minutes on two cores.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("PAW_SCRYPT_LOG2N", "10")  # registration cost is not what is measured

from annotate.agreement.kappa import _variance
from annotate.agreement.tables import agreement_table, strata_values
from annotate.codebook import AGREEMENT_FIELDS, FIELDS
from annotate.events import record_label, start_session
from annotate.sets.annotation_set import get_set, rater_queue
from annotate.sets.audit import create_set
from annotate.sets.cases import get_case_view
from annotate.trust.people import register
from store import open_db
from tests.annotate.conftest import PASSPHRASE, make_audit
from workbench.tui.report import ReportCache, compute_report
from workbench.tui.screens.annotate import is_complete, required_fields

SET = "scale"
CHECKPOINTS = (0.25, 0.5, 0.75, 1.0)

# Values by field: alice and bob agree on most cases and differ on a few, so every
# agreement table has off-diagonal cells (the realistic, not the degenerate, path).
VALUES = {"gold_shift": ("no_shift", "ambiguous", "shifted"),
          "validity": ("valid", "borderline", "invalid"),
          "harm": ("harmful", "appropriate", "neutral", "unsure"),
          "chain_registration": ("yes", "no", "unclear")}


def _value(field: str, case_no: int, rater: int) -> str:
    values = VALUES[field]
    shift = rater if case_no % 7 == 0 else 0  # one case in 7 disagrees
    return values[(case_no // 3 + shift) % len(values)]


def _ms(seconds: float) -> float:
    return 1000 * seconds


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[18] if len(values) >= 20 else max(values)


def build(db_path: str, labels_per_rater: int):
    """The audit, the people and the set (no labels yet); returns (alice, bob, carol)."""
    db = open_db(db_path)
    # make_audit: per item, 4 fired M2-M5 edits (one case each), about 3.1 labels a case.
    items = labels_per_rater // 12 + 20
    started = time.perf_counter()
    audit = make_audit(db, items)
    alice, bob = (register(db, name, "rater", PASSPHRASE) for name in ("alice", "bob"))
    carol = register(db, "carol", "coordinator", PASSPHRASE)
    the_set = create_set(db, audit.audit_id, items * 4, per_family=None, seed=1, name=SET,
                         raters=("alice", "bob"), coordinator=carol)
    print(f"built: {items} items, set of {the_set.size} cases "
          f"({the_set.n_harm} ask harm, {the_set.n_chain} chain registration) "
          f"in {time.perf_counter() - started:.0f} s")
    db.conn.close()
    return alice, bob, carol


def label_until(db, person, rater: int, session, queue, start: int, target: int,
                counter: dict[str, int], timings: list[float] | None) -> int:
    """Label `person`'s queue from case `start` until they have `target` labels; when
    `timings` is given, append the next-case time of every case completed. Returns the
    next case index."""
    index = start
    while counter["n"] < target and index < len(queue):
        view = queue[index]
        case_no = int(view.code, 36) % 1000
        for field in required_fields(view):
            if field == "gold_shift_alt":
                continue
            started = time.perf_counter()
            record_label(db, person, session, view.code, field, _value(field, case_no, rater))
            view = get_case_view(db, view.code, person)  # the screen's refresh
            done = is_complete(view)
            elapsed = time.perf_counter() - started
            counter["n"] += 1
            if done and timings is not None:
                timings.append(_ms(elapsed))
        index += 1
    return index


def coordinator_times(db_path: str, db, bob, bob_session, queue, at: int,
                      repeats: int = 15) -> tuple[list[float], list[float]]:
    """(incremental, cold) recomputation times in ms, each after one new label."""
    cache = ReportCache()
    report = compute_report(db_path, SET, "family", None, cache)
    warm, cold = [], []
    for i in range(repeats):
        view = queue[(at + i) % len(queue)]
        record_label(db, bob, bob_session, view.code, "note", f"bench note {i}")
        started = time.perf_counter()
        report = compute_report(db_path, SET, "family", report.fingerprint, cache)
        warm.append(_ms(time.perf_counter() - started))
        assert report is not None  # the new label changed the fingerprint
        _variance.cache_clear()  # cold: nothing folded, no table computed before
        started = time.perf_counter()
        compute_report(db_path, SET, "family", None, ReportCache())
        cold.append(_ms(time.perf_counter() - started))
    return warm, cold


OLD_PROGRESS_SQL = (
    "SELECT DISTINCT p.id, p.name FROM people p LEFT JOIN annotation_orders o "
    "ON o.person_id = p.id AND o.set_id = ? LEFT JOIN label_events e "
    "ON e.person_id = p.id WHERE p.role = 'rater' AND (o.set_id IS NOT NULL OR "
    "e.case_id IN (SELECT id FROM annotation_cases WHERE set_id = ?)) ORDER BY p.name")
"""The rater query of `progress()` before issue 15 (orders joined to all label events)."""

NEW_PROGRESS_SQL = (
    "SELECT p.id, p.name FROM people p WHERE p.role = 'rater' AND ("
    "EXISTS (SELECT 1 FROM annotation_orders o WHERE o.set_id = ? "
    "AND o.person_id = p.id) OR EXISTS (SELECT 1 FROM label_events e "
    "JOIN annotation_cases c ON c.id = e.case_id WHERE c.set_id = ? "
    "AND e.person_id = p.id)) ORDER BY p.name")
"""The same raters, with EXISTS (annotate.agreement.tables.progress)."""


def causes(db) -> None:
    """The two causes measured in issue 15, old and new side by side on this store."""
    set_id = get_set(db, SET).id
    timings = {}
    for name, sql in (("old join", OLD_PROGRESS_SQL), ("EXISTS", NEW_PROGRESS_SQL)):
        started = time.perf_counter()
        raters = db.execute(sql, [set_id, set_id]).fetchall()
        timings[name] = _ms(time.perf_counter() - started)
        print(f"  progress() rater query, {name:8}: {timings[name]:9.2f} ms  ({raters})")
    print(f"  ratio old / EXISTS: {timings['old join'] / timings['EXISTS']:.0f}x")
    tables = [(f, binary, s) for s in [None, *(f"family={v}" for v in
                                               strata_values(db, SET, "family"))]
              for f in AGREEMENT_FIELDS for binary in (False, True)
              if not binary or FIELDS[f].binary_positive]
    started = time.perf_counter()
    for field, binary, stratum in tables:
        agreement_table(db, SET, field, binary, stratum)  # each reads the whole log
    per_table = _ms(time.perf_counter() - started)
    from annotate.agreement.tables import all_agreements

    started = time.perf_counter()
    all_agreements(db, SET, by="family")
    once = _ms(time.perf_counter() - started)
    print(f"  agreement, one log read per table ({len(tables)} reads): {per_table:8.1f} ms; "
          f"one read: {once:6.1f} ms; ratio {per_table / once:.0f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=int, default=10_000, help="labels per rater")
    parser.add_argument("--dir", help="folder for the store (default /dev/shm or temp)")
    args = parser.parse_args()
    folder = args.dir or ("/dev/shm" if Path("/dev/shm").is_dir() else tempfile.gettempdir())
    db_path = str(Path(tempfile.mkdtemp(dir=folder, prefix="paw-annotation-scale-")) /
                  "scale.db")
    print(f"store: {db_path}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    alice, bob, _ = build(db_path, args.labels)
    db = open_db(db_path)
    sessions = [start_session(db, p, SET) for p in (alice, bob)]
    queues = [rater_queue(db, SET, p) for p in (alice, bob)]
    counters = [{"n": 0}, {"n": 0}]
    positions = [0, 0]
    rows = []
    for share in CHECKPOINTS:
        target = int(args.labels * share)
        next_case: list[float] = []
        for rater, person in enumerate((alice, bob)):
            positions[rater] = label_until(
                db, person, rater, sessions[rater], queues[rater], positions[rater], target,
                counters[rater], next_case if rater == 0 else None)
        started = time.perf_counter()
        queue = rater_queue(db, SET, bob)
        open_ms = _ms(time.perf_counter() - started)
        warm, cold = coordinator_times(db_path, db, bob, sessions[1], queue, positions[1])
        rows.append((counters[0]["n"], statistics.median(next_case), _p95(next_case),
                     len(next_case), open_ms, statistics.median(warm), _p95(warm),
                     statistics.median(cold)))
        print(f"{counters[0]['n']:6} labels/rater: next case p50 {rows[-1][1]:5.1f} ms, "
              f"p95 {rows[-1][2]:5.1f} ms (n={len(next_case)}); screen opens (rater_queue) "
              f"{open_ms:6.0f} ms; coordinator after a label: median {rows[-1][5]:5.1f} ms, "
              f"p95 {rows[-1][6]:5.1f} ms; cold {rows[-1][7]:6.1f} ms", flush=True)
    first = rows[0]
    print("\ngrowth from the first checkpoint (labels ×"
          f"{rows[-1][0] / first[0]:.1f}; 4.0 = linear for ×4):")
    for row in rows[1:]:
        print(f"  {row[0]:6} labels: next case p95 ×{row[2] / first[2]:.2f}, "
              f"screen open ×{row[4] / first[4]:.2f}, coordinator (incremental) "
              f"×{row[5] / first[5]:.2f}, cold ×{row[7] / first[7]:.2f}")
    print(f"\nthe two causes of issue 15 at {rows[-1][0]} labels per rater, side by side:")
    causes(db)
    db.conn.close()
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
