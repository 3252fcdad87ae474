"""Benchmark: the labelling and coordinator screens' data paths as the labels grow.

Issue 15 measured the coordinator's recomputation at 12.4 s (median) on a set with 10,000
labels per rater; issue 40 found it still growing with the labels already stored. This
script builds a set through the real API — `create_set` with its two named raters, then
every label by `record_label` (each one BEGIN IMMEDIATE … COMMIT, signed, sealed) — and
measures at a quarter, half, three quarters and all of `--labels` (default 20,000 per
rater: 5,000, 10,000, 15,000 and 20,000):

- **next case** (labelling screen): the work between the key that completes a case and
  the next case on screen — `record_label` of that last field, `get_case_view` (the
  screen's refresh of the case) and the completeness bookkeeping; p50 and p95 over the
  cases completed since the previous checkpoint. The next case itself is already in
  memory (`rater_queue` loads the queue when the screen opens; its time is printed too);
- **coordinator recomputation after a new label**: bob relabels gold_shift on a case both
  raters labelled (a superseding event that moves the case's cell in the tables of all
  its strata), then `workbench.tui.report.compute_report` with the screen's
  `ReportCache` — median and p95 of `--repeats`, with the κ-over-labels plot hidden (the
  screen's default: only the new events are read, and only the tables they changed are
  computed) and shown (its series has one point per paired label, so it is computed over
  them all); and cold (a newly opened screen: the whole log read, every table computed;
  the sealed values this process opened while labelling are not opened again, so a new
  process pays ~0.16 ms more per label once);
- with `--causes`, at the last checkpoint, issue 15's two causes side by side: the old
  rater query of `progress()` against the EXISTS form, and agreement read once per table
  against one read (minutes at 20,000 labels).

The end prints every checkpoint side by side and each figure's growth (its ratio to the
first checkpoint: ×4.0 would be linear for ×4 labels), with the load average of each
checkpoint: on a shared machine the ratios are steadier than the times.

    .venv/bin/python bench/annotation_scale.py                       # 20,000 labels per rater
    .venv/bin/python bench/annotation_scale.py --labels 2000         # a quick look
    .venv/bin/python bench/annotation_scale.py --keep /tmp/scale     # save each checkpoint
    .venv/bin/python bench/annotation_scale.py --from /tmp/scale     # measure them again

The store goes in /dev/shm when it exists (tmpfs: the build does 40,000 fsyncs; reads,
which is what is measured, do not depend on it), else the system temp folder; `--dir`
chooses. Building 20,000 labels per rater takes about 10 minutes on two busy cores.
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
from annotate.labels import COMPANIONS, current_labels
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
            # Label events, as `labels_of` counts them again from a saved store: a gold-shift
            # label writes its companion too (`annotate.labels.COMPANIONS`).
            counter["n"] += 2 if field in COMPANIONS else 1
            if done and timings is not None:
                timings.append(_ms(elapsed))
        index += 1
    return index


def both_labelled(db, alice, bob, limit: int = 60) -> list[str]:
    """Codes of cases both raters have labelled (a relabel there changes the tables); at
    a tiny size with none yet, the cases bob labelled."""
    return [row[0] for row in db.execute(
        "SELECT c.code FROM annotation_cases c JOIN annotation_sets s ON s.id = c.set_id "
        "WHERE s.name = ? AND EXISTS (SELECT 1 FROM label_events e WHERE e.case_id = c.id "
        "AND e.person_id = ?) AND EXISTS (SELECT 1 FROM label_events e WHERE "
        "e.case_id = c.id AND e.person_id = ?) ORDER BY c.id LIMIT ?",
        [SET, alice.id, bob.id, limit])] or [row[0] for row in db.execute(
            "SELECT DISTINCT c.code FROM annotation_cases c JOIN label_events e ON "
            "e.case_id = c.id WHERE e.person_id = ? ORDER BY c.id LIMIT ?", [bob.id, limit])]


def relabel(db, bob, bob_session, code: str) -> None:
    """Bob changes his gold_shift on `code` (no_shift <-> ambiguous): a superseding event
    that moves the case's cell in every gold_shift table of its strata."""
    current = current_labels(db, bob, code).get("gold_shift")
    record_label(db, bob, bob_session, code, "gold_shift",
                 "ambiguous" if current == "no_shift" else "no_shift")


def coordinator_times(db_path: str, db, bob, bob_session, codes: list[str],
                      repeats: int = 15, cold_repeats: int = 3,
                      ) -> tuple[list[float], list[float], list[float]]:
    """Recomputation times in ms, each after one new label (a relabel that changes the
    agreement tables): (kept cache with the κ plot hidden — the screen's default; kept
    cache with the plot shown; cold — a newly opened screen)."""
    hidden, shown, cold = [], [], []
    for series, times in ((False, hidden), (True, shown)):
        cache = ReportCache()
        report = compute_report(db_path, SET, "family", None, cache, series=series)
        for i in range(repeats):
            relabel(db, bob, bob_session, codes[i % len(codes)])
            started = time.perf_counter()
            report = compute_report(db_path, SET, "family", report.fingerprint, cache,
                                    series=series)
            times.append(_ms(time.perf_counter() - started))
            assert report is not None  # the new label changed the fingerprint
    for _ in range(cold_repeats):
        _variance.cache_clear()  # cold: nothing folded, no table computed before
        started = time.perf_counter()
        compute_report(db_path, SET, "family", None, ReportCache(), series=False)
        cold.append(_ms(time.perf_counter() - started))
    return hidden, shown, cold


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


def labels_of(db, person) -> int:
    """The person's label events in the set (the bench's 'labels per rater')."""
    return db.execute("SELECT COUNT(*) FROM label_events e JOIN annotation_cases c ON "
                      "c.id = e.case_id JOIN annotation_sets s ON s.id = c.set_id "
                      "WHERE s.name = ? AND e.person_id = ?", [SET, person.id]).fetchone()[0]


def measure(db_path: str, db, alice, bob, bob_session, labels: int, next_case: list[float],
            repeats: int) -> dict:
    """Every figure of one checkpoint (next case from `next_case`, empty in --from mode)."""
    load = os.getloadavg()[0]
    started = time.perf_counter()
    rater_queue(db, SET, bob)
    open_ms = _ms(time.perf_counter() - started)
    hidden, shown, cold = coordinator_times(db_path, db, bob, bob_session,
                                            both_labelled(db, alice, bob), repeats)
    row = {"labels": labels, "load": (load + os.getloadavg()[0]) / 2, "open": open_ms,
           "next50": statistics.median(next_case) if next_case else None,
           "next95": _p95(next_case) if next_case else None, "n_next": len(next_case),
           "hidden50": statistics.median(hidden), "hidden95": _p95(hidden),
           "shown50": statistics.median(shown), "shown95": _p95(shown),
           "cold": statistics.median(cold)}
    nxt = (f"next case p50 {row['next50']:5.1f} ms, p95 {row['next95']:5.1f} ms "
           f"(n={row['n_next']}); " if next_case else "")
    print(f"{labels:6} labels/rater (load {row['load']:.1f}): {nxt}screen opens "
          f"(rater_queue) {open_ms:6.0f} ms; coordinator after a label: plot hidden median "
          f"{row['hidden50']:5.1f} ms, p95 {row['hidden95']:5.1f} ms; plot shown median "
          f"{row['shown50']:5.1f} ms, p95 {row['shown95']:5.1f} ms; cold {row['cold']:6.1f} ms",
          flush=True)
    return row


def growth_table(rows: list[dict]) -> str:
    """The checkpoints side by side, then each figure's ratio to the first checkpoint."""
    def cell(value: float | None) -> str:
        return "–" if value is None else f"{value:.1f}"

    lines = [("| labels per rater | load | after a label, plot hidden: median / p95 ms | "
              "plot shown: median / p95 ms | cold ms | next case p95 ms |"),
             "|---|---|---|---|---|---|"]
    lines += [f"| {r['labels']:,} | {r['load']:.1f} | {cell(r['hidden50'])} / "
              f"{cell(r['hidden95'])} | {cell(r['shown50'])} / {cell(r['shown95'])} | "
              f"{cell(r['cold'])} | {cell(r['next95'])} |" for r in rows]
    first, last = rows[0], rows[-1]

    def ratio(name: str) -> str:
        if first[name] is None or last[name] is None:
            return "–"
        return f"×{last[name] / first[name]:.2f}"

    lines.append(f"| growth ×{last['labels'] / first['labels']:.1f} labels | | "
                 f"{ratio('hidden50')} / {ratio('hidden95')} | {ratio('shown50')} / "
                 f"{ratio('shown95')} | {ratio('cold')} | {ratio('next95')} |")
    return "\n".join(lines)


def saved(db_path: str, keep: str | None, labels: int) -> None:
    """A copy of the store at this checkpoint, for `--from` (SQLite's backup API)."""
    if keep is None:
        return
    import sqlite3

    Path(keep).mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(db_path) as source, \
            sqlite3.connect(str(Path(keep) / f"scale-{labels:06d}.db")) as target:
        source.backup(target)


def from_saved(folder: str, repeats: int) -> list[dict]:
    """Measure each store saved by `--keep` (on a copy: the bench adds labels)."""
    import shutil

    from annotate.trust.people import authenticate

    rows = []
    for path in sorted(Path(folder).glob("scale-*.db")):
        work = Path(tempfile.mkdtemp(prefix="paw-annotation-from-")) / path.name
        shutil.copy(path, work)
        db = open_db(str(work))
        authenticate(db, "carol", PASSPHRASE)  # the coordinator's key opens the labels
        alice, bob = (authenticate(db, name, PASSPHRASE) for name in ("alice", "bob"))
        session = start_session(db, bob, SET)
        rows.append(measure(str(work), db, alice, bob, session, labels_of(db, alice), [],
                            repeats))
        db.conn.close()
        shutil.rmtree(work.parent)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=int, default=20_000, help="labels per rater")
    parser.add_argument("--dir", help="folder for the store (default /dev/shm or temp)")
    parser.add_argument("--repeats", type=int, default=15,
                        help="new labels per checkpoint and coordinator mode")
    parser.add_argument("--keep", help="save the store at each checkpoint in this folder")
    parser.add_argument("--from", dest="saved", metavar="DIR",
                        help="measure the stores saved by --keep instead of building")
    parser.add_argument("--causes", action="store_true",
                        help="also time issue 15's two causes at the last checkpoint "
                             "(minutes at 20,000 labels: one log read per table)")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if args.saved:
        rows = from_saved(args.saved, args.repeats)
        if not rows:
            sys.exit(f"{args.saved}: no scale-*.db stores (write them with --keep)")
    else:
        rows = build_and_measure(args)
    print(f"\ngrowth from {rows[0]['labels']:,} to {rows[-1]['labels']:,} labels per rater "
          "(the ratio to the first checkpoint; ×4.0 would be linear for ×4 labels):\n")
    print(growth_table(rows))
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


def build_and_measure(args) -> list[dict]:
    """Build the set, label it checkpoint by checkpoint and measure at each."""
    folder = args.dir or ("/dev/shm" if Path("/dev/shm").is_dir() else tempfile.gettempdir())
    db_path = str(Path(tempfile.mkdtemp(dir=folder, prefix="paw-annotation-scale-")) /
                  "scale.db")
    print(f"store: {db_path}")
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
        saved(db_path, args.keep, counters[0]["n"])
        rows.append(measure(db_path, db, alice, bob, sessions[1], counters[0]["n"],
                            next_case, args.repeats))
    if args.causes:
        print(f"\nthe two causes of issue 15 at {rows[-1]['labels']} labels per rater, "
              "side by side:")
        causes(db)
    db.conn.close()
    return rows


if __name__ == "__main__":
    main()
