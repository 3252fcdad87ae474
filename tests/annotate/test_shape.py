"""No shape leak in the shared file (issue 35, criterion 3): what a rater with sqlite3 reads
of another rater's first labelling of a field — how many events, which of them supersede
nothing, the sizes of the sealed blobs, the times, the clear columns — is the same whatever
value was chosen, for every categorical field of the codebook. With identical features for
every value, no reader of the raw tables does better than chance; each test also shows the
old shape (a field written alone before 'shifted' asked its new answer) would have told.

What still shows is in docs/annotation.md ("What the shared file still shows").
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict

import pytest

from annotate.codebook import FIELDS, FieldKind
from annotate.events import record_label, start_session
from annotate.labels import COMPANIONS
from annotate.sets.annotation_set import rater_queue
from annotate.sets.audit import create_set
from tests.annotate.conftest import named

SEED002 = ("gold_shift", "validity", "harm", "chain_registration")


def features(conn: sqlite3.Connection, case_id: int, person_id: int, since: int = 0) -> tuple:
    """Everything the raw tables say about one rater's events on one case (those after
    event `since`), values aside: counts, first-time events, sealed sizes, distinct times,
    time on item, clear columns."""
    rows = conn.execute(
        "SELECT field, value, supersedes_id, undoes_id, length(sealed_json), created_at, "
        "time_on_item_ms, codebook_version FROM label_events WHERE case_id = ? AND "
        "person_id = ? AND id > ? ORDER BY id", [case_id, person_id, since]).fetchall()
    return (len(rows), sum(r[2] is None for r in rows), tuple(sorted(r[4] for r in rows)),
            len({r[5] for r in rows}), tuple(r[6] for r in rows),
            tuple((r[0], r[1], r[3], r[7]) for r in rows))


def _companion(field: str, value: str, view) -> str | None:
    if field not in COMPANIONS or value in COMPANIONS[field][1]:
        return None
    spec = FIELDS[COMPANIONS[field][0]]
    if spec.kind == FieldKind.OPTION_LETTER:
        return next(label for label, _ in view.options if label != view.gold)
    return spec.values[-1].value


def _label_each_value(db, people, fields, asks, per_value: int = 2) -> dict[str, dict[str, set]]:
    """Label each value of each field `per_value` times, each on a fresh (case, rater) —
    the first labelling there — as the labelling screen does (with the companion);
    features per (field, value)."""
    raters = [people["alice"], people["bob"]]
    sessions = {p.id: start_session(db, p, "s") for p in raters}
    views = [(p, v) for p in raters for v in rater_queue(db, "s", p)]
    used: set[tuple[str, int, str]] = set()
    seen: dict[str, dict[str, set]] = defaultdict(lambda: defaultdict(set))
    for field in fields:
        for value in FIELDS[field].values:
            for _ in range(per_value):  # the features must not vary within a value either
                person, view = next((p, v) for p, v in views
                                    if (field, p.id, v.code) not in used and asks(v, field))
                used.add((field, person.id, view.code))
                since = db.execute("SELECT COALESCE(MAX(id), 0) FROM label_events"
                                   ).fetchone()[0]
                record_label(db, person, sessions[person.id], view.code, field, value.value,
                             1500, companion=_companion(field, value.value, view))
                case_id = db.execute("SELECT id FROM annotation_cases WHERE code = ?",
                                     [view.code]).fetchone()[0]
                seen[field][value.value].add(features(db.conn, case_id, person.id, since))
    return seen


def _asks_002(view, field: str) -> bool:
    return field in view.fields


def test_every_seed_002_field_has_one_shape_whatever_the_value(db, audit, people):
    create_set(db, audit.audit_id, 60, per_family=None, seed=0, name="s", **named(people))
    seen = _label_each_value(db, people, SEED002, _asks_002)
    for field in SEED002:
        shapes = set().union(*seen[field].values())
        # One shape for every value (so a reader guesses at chance) ...
        assert len(shapes) == 1, (field, dict(seen[field]))
        count = next(iter(shapes))[0]
        # ... and gold shift writes its companion (the new answer, or an empty one) too.
        assert count == (2 if field in COMPANIONS else 1), (field, shapes)


def test_the_old_shape_told_shifted_apart(db, audit, people):
    """Written alone, as before: a rater counting first-time events per case reads which
    cases were marked shifted (the check above would fail on it)."""
    create_set(db, audit.audit_id, 20, per_family=None, seed=0, name="s", **named(people))
    alice = people["alice"]
    session = start_session(db, alice, "s")
    views = list(rater_queue(db, "s", alice))
    plain, shifted = views[0], views[1]
    # The core's own companion write, bypassed by writing the new answer on its own later,
    # as `paw label` allows: the count differs from a case labelled in one go.
    record_label(db, alice, session, plain.code, "gold_shift", "no_shift")
    record_label(db, alice, session, shifted.code, "gold_shift", "shifted")
    record_label(db, alice, session, shifted.code, "gold_shift_alt",
                 next(lab for lab, _ in shifted.options if lab != shifted.gold))
    ids = {v.code: db.execute("SELECT id FROM annotation_cases WHERE code = ?",
                              [v.code]).fetchone()[0] for v in (plain, shifted)}
    assert features(db.conn, ids[plain.code], alice.id)[0] == 2
    assert features(db.conn, ids[shifted.code], alice.id)[0] == 3


def test_undo_of_a_gold_shift_label_undoes_its_companion_too(db, audit, people):
    create_set(db, audit.audit_id, 20, per_family=None, seed=0, name="s", **named(people))
    from annotate.events import undo_last
    from annotate.labels import current_labels

    alice = people["alice"]
    session = start_session(db, alice, "s")
    view = rater_queue(db, "s", alice)[0]
    letter = next(lab for lab, _ in view.options if lab != view.gold)
    record_label(db, alice, session, view.code, "validity", "valid")
    record_label(db, alice, session, view.code, "gold_shift", "shifted", companion=letter)
    assert current_labels(db, alice, view.code) == {
        "validity": "valid", "gold_shift": "shifted", "gold_shift_alt": letter}
    undone = undo_last(db, alice, session)
    assert undone is not None and undone.field == "gold_shift"
    assert current_labels(db, alice, view.code) == {"validity": "valid"}
    assert undo_last(db, alice, session).field == "validity"
    assert current_labels(db, alice, view.code) == {}


def test_a_companion_where_the_value_does_not_ask_it_is_refused(db, audit, people):
    from store.errors import UserError

    create_set(db, audit.audit_id, 20, per_family=None, seed=0, name="s", **named(people))
    alice = people["alice"]
    session = start_session(db, alice, "s")
    view = rater_queue(db, "s", alice)[0]
    with pytest.raises(UserError, match="gold_shift_alt: not asked when gold_shift is"):
        record_label(db, alice, session, view.code, "gold_shift", "no_shift", companion="B")
    with pytest.raises(UserError, match="validity: has no companion field"):
        record_label(db, alice, session, view.code, "validity", "valid", companion="B")
