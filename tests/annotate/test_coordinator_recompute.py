"""The coordinator's kept recomputation (`workbench.tui.report.compute_report` with a
`ReportCache`) equals a from-scratch computation exactly, after labels, relabels
(superseding events), cleared labels and undos, in every stratum dimension (issue 40,
criterion 4); and it finds new events without walking the set's old ones."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from annotate.agreement.kappa import _variance
from annotate.agreement.kappa_series import paired_labels, prefix_kappas
from annotate.agreement.label_log import LabelLog, set_cases, table_categories, table_keys
from annotate.agreement.tables import agreements_from, rater_pair
from annotate.codebook import agreement_fields, applicable_fields, field
from annotate.events import record_label, start_session, undo_last
from annotate.labels import all_current_labels
from annotate.sets.annotation_set import rater_queue
from annotate.sets.audit import create_set
from store import open_db
from workbench.tui.report import STRATUM_DIMENSIONS, ReportCache, compute_report

ROOT = str(Path(__file__).resolve().parents[2])
VALUES = {"gold_shift": ["no_shift", "ambiguous", "shifted", None],
          "validity": ["valid", "borderline", "invalid", None],
          "harm": ["harmful", "appropriate", "neutral", "unsure"],
          "chain_registration": ["yes", "no", "unclear"]}


@pytest.fixture
def db(tmp_path):
    """A file store: `compute_report` opens its own connection, as the screen's worker does."""
    return open_db(tmp_path / "paw.db")


@pytest.fixture
def s(db, audit, people):
    create_set(db, audit.audit_id, 40, per_family=None, seed=0, name="s",
               raters=("alice", "bob"), coordinator=people["carol"])
    return {name: start_session(db, people[name], "s") for name in ("alice", "bob")}


def from_scratch(db, set_id: int, dimension: str):
    """Agreement and progress straight from every current label (no kept state)."""
    cases = set_cases(db, set_id)
    labels = all_current_labels(db, set_id)
    position = STRATUM_DIMENSIONS.index(dimension)
    values = sorted({case.stratum.split("|")[position] for case in cases})
    strata = [None, *(f"{dimension}={v}" for v in values)]
    fields = agreement_fields(cases)
    rows = agreements_from(cases, labels, rater_pair(db, set_id), strata, fields)
    progress = {}
    for (case_id, person_id), current in labels.items():
        if not current:  # every field cleared: not started
            continue
        case = next(c for c in cases if c.id == case_id)
        started, done = progress.get(person_id, (0, 0))
        needed = [f for f in applicable_fields(case, current) if f != "note"]
        progress[person_id] = (started + 1, done + all(f in current for f in needed))
    return rows, progress


def test_kept_recomputation_equals_from_scratch_after_every_kind_of_event(db, people, s):
    path = db.execute("PRAGMA database_list").fetchone()[2]
    set_id = db.execute("SELECT id FROM annotation_sets WHERE name = 's'").fetchone()[0]
    ids = {p["name"]: p["id"] for p in db["people"].rows}
    rng = random.Random(40)
    views = {name: {v.code: v for v in rater_queue(db, "s", people[name])}
             for name in ("alice", "bob")}
    pool = sorted(views["alice"])[:14]  # a few cases both raters label, often again
    cache = ReportCache()
    report = None
    kinds = {"label": 0, "relabel": 0, "clear": 0, "undo": 0}
    checked = 0
    for step in range(240):
        name = rng.choice(("alice", "bob"))
        view = views[name][rng.choice(pool)]
        if step % 13 == 12:
            undo_last(db, people[name], s[name])
            kinds["undo"] += 1
        else:
            fields = [f for f in view.fields if f in VALUES]
            name_field = rng.choice(fields)
            value = rng.choice(VALUES[name_field])
            event = record_label(db, people[name], s[name], view.code, name_field, value)
            kinds["clear" if value is None else
                  "relabel" if event.supersedes_id else "label"] += 1
            if value == "shifted":
                record_label(db, people[name], s[name], view.code, "gold_shift_alt", "B")
        if step % 6 != 5:
            continue
        dimension = STRATUM_DIMENSIONS[checked % len(STRATUM_DIMENSIONS)]
        report = compute_report(path, "s", dimension, None, cache)
        cold = compute_report(path, "s", dimension)  # a new screen: nothing kept
        rows, progress = from_scratch(db, set_id, dimension)
        assert report is not None and cold is not None
        assert report.overall + report.by_stratum == cold.overall + cold.by_stratum
        assert list(report.overall + report.by_stratum) == rows
        assert report.progress == cold.progress
        assert {ids[p.name]: (p.started, p.done) for p in report.progress
                if p.started} == progress
        assert report.kappa_over_labels == cold.kappa_over_labels
        fresh = LabelLog(set_id)  # the reference series: every case walked, then sorted
        fresh.refresh(db)
        pair = rater_pair(db, set_id)
        assert report.kappa_over_labels == {
            key: prefix_kappas(paired_labels(db, fresh, pair, key), table_categories(key))
            for key in table_keys(fresh.fields or ())}
        for agreement in report.overall:  # the series ends at the live κ
            series = report.kappa_over_labels[(agreement.field, agreement.binary)]
            assert (series[-1] if series else None) == agreement.kappa
        checked += 1
    assert checked == 40 and min(kinds.values()) >= 5, kinds
    # The walk reached real tables in every dimension's strata.
    assert report is not None
    assert any(a.n > 3 and a.kappa is not None and a.kappa_ci is not None
               for a in report.by_stratum)
    assert {a.field for a in report.overall} >= {"gold_shift", "validity"}
    assert field("gold_shift").binary_positive is not None


def test_new_events_are_found_by_their_id_not_by_walking_the_set(db):
    """The kept log's read of new events is a range of the events' key (cost: the new
    events), not a walk of the set's case index (cost: every event of the set)."""
    from annotate.agreement.label_log import new_events_where

    plan = " ".join(str(row[3]) for row in db.execute(
        "EXPLAIN QUERY PLAN SELECT e.*, c.code, c.set_id FROM label_events e JOIN "
        f"annotation_cases c ON c.id = e.case_id WHERE {new_events_where(1)} ORDER BY e.id",
        [1, 1]))
    assert "SEARCH e USING INTEGER PRIMARY KEY (rowid>?)" in plan, plan
    assert "idx_cases_set" not in plan, plan


def test_the_kept_connection_is_closed_when_the_screen_releases_it(db, s):
    path = db.execute("PRAGMA database_list").fetchone()[2]
    cache = ReportCache()
    first = compute_report(path, "s", "family", None, cache)
    kept = cache.db
    assert first is not None and kept is not None
    assert compute_report(path, "s", "family", None, cache) is not None
    assert cache.db is kept  # one connection across recomputations
    cache.release()
    assert cache.db is None
    compute_report(path, "s", "family", None, cache)  # reopened
    with cache.lock:  # a worker holds it: the release is left to that worker
        cache.release()
        assert cache.db is not None and cache.retired
    compute_report(path, "s", "family", None, cache)  # the worker, done: closes it
    assert cache.db is None and not cache.retired
    assert compute_report(path, "s", "family") is not None  # no cache: opened and closed


def _work_after_a_relabel(path: str, db, cache: ReportCache, bob, session, code: str,
                          value: str) -> tuple[int, int]:
    """(SQLite VM steps / 10, calls of PAW's functions) of the kept recomputation after
    one relabel (the statistics of a changed table, whose cost depends on its counts'
    state, not on how many labels there are, are left out of the calls)."""
    compute_report(path, "s", "family", None, cache, series=False)  # fold what came before
    record_label(db, bob, session, code, "validity", value)
    assert cache.db is not None
    steps, calls = [0], [0]

    def tick() -> int:
        steps[0] += 1
        return 0

    def profile(frame, event, arg) -> None:  # PAW's own functions, statistics aside
        name = frame.f_code.co_filename
        if event == "call" and name.startswith(ROOT) and not name.endswith("kappa.py"):
            calls[0] += 1

    _variance.cache_clear()  # each changed table's variance computed in both runs
    cache.db.conn.set_progress_handler(tick, 10)
    sys.setprofile(profile)
    try:
        report = compute_report(path, "s", "family", None, cache, series=False)
    finally:
        sys.setprofile(None)
        cache.db.conn.set_progress_handler(None, 10)
    assert report is not None
    return steps[0], calls[0]


def test_the_work_after_a_label_does_not_grow_with_the_labels_stored(db, people, s):
    """Counted, not timed: SQLite's VM steps and Python's function calls of one kept
    recomputation after a relabel, with 5 cases labelled by both raters and with 40 —
    about 8× the labels. (Before issue 40 the steps grew with them: the new events were
    read through the set's case index.)"""
    path = db.execute("PRAGMA database_list").fetchone()[2]
    views = {name: rater_queue(db, "s", people[name]) for name in ("alice", "bob")}
    codes = [v.code for v in views["alice"]]

    def label(upto: int) -> None:
        for name, rater in (("alice", 0), ("bob", 1)):
            by_code = {v.code: v for v in views[name]}
            for i, code in enumerate(codes[:upto]):
                for f in by_code[code].fields:
                    if f in VALUES:  # they disagree on every third case: real tables
                        value = VALUES[f][(i + rater * (i % 3 == 1)) % 3]
                        record_label(db, people[name], s[name], code, f, value)

    cache = ReportCache()
    label(5)
    few = _work_after_a_relabel(path, db, cache, people["bob"], s["bob"], codes[0], "invalid")
    events_few = db.execute("SELECT COUNT(*) FROM label_events").fetchone()[0]
    label(40)
    many = _work_after_a_relabel(path, db, cache, people["bob"], s["bob"], codes[0],
                                 "borderline")
    events_many = db.execute("SELECT COUNT(*) FROM label_events").fetchone()[0]
    assert events_many >= 7 * events_few
    assert many[0] <= few[0] * 1.2 + 20, (few, many)  # SQLite steps
    assert many[1] <= few[1] * 1.2 + 50, (few, many)  # Python calls
