"""Label events: append-only, relabel supersedes, undo appends, raters cannot touch others'."""

from __future__ import annotations

import pytest

from annotate.codebook import CODEBOOK_VERSION
from annotate.events import (
    events_of,
    record_label,
    start_session,
    undo_last,
)
from annotate.labels import current_labels
from annotate.sets.annotation_set import rater_queue
from annotate.sets.audit import create_set
from annotate.trust.identity import Person
from store.errors import UserError
from tests.annotate.conftest import named


@pytest.fixture
def labelled(db, audit, people):
    """A 40-case set 's' and open sessions for alice and bob."""
    create_set(db, audit.audit_id, 40, per_family=None, seed=0, name="s", **named(people))
    views = rater_queue(db, "s", people["alice"])
    rater_queue(db, "s", people["bob"])
    return {"views": views, "alice": start_session(db, people["alice"], "s"),
            "bob": start_session(db, people["bob"], "s")}


def _rows(db):
    """Stored events with their sealed field and value opened (this process holds the
    raters' keys: it registered them)."""
    from annotate.trust.sealing import open_row

    rows = list(db.query("SELECT * FROM label_events ORDER BY id"))
    for row in rows:
        assert (row["field"], row["value"]) == ("*", None)  # sealed in the row
        row["field"], row["value"] = open_row(row)
    return rows


def test_an_event_carries_rater_time_session_item_time_app_and_codebook(db, people, labelled):
    code = labelled["views"][0].code
    event = record_label(db, people["alice"], labelled["alice"], code, "gold_shift", "2", 4200)
    row = _rows(db)[0]
    assert row["id"] == event.id and row["value"] == "ambiguous"
    assert row["person_id"] == people["alice"].id
    assert row["session_id"] == labelled["alice"].id
    assert row["time_on_item_ms"] == 4200
    assert row["codebook_version"] == CODEBOOK_VERSION
    assert row["app_version"].startswith("paw ")
    assert row["created_at"].endswith("+00:00")
    assert current_labels(db, people["alice"], code) == {"gold_shift": "ambiguous"}


def test_relabel_supersedes_and_never_overwrites(db, people, labelled):
    alice, session = people["alice"], labelled["alice"]
    code = labelled["views"][0].code
    first = record_label(db, alice, session, code, "validity", "valid")
    second = record_label(db, alice, session, code, "validity", "invalid")
    assert second.supersedes_id == first.id
    rows = _rows(db)
    assert [(r["id"], r["value"]) for r in rows] == [(first.id, "valid"), (second.id, "invalid")]
    assert current_labels(db, alice, code) == {"validity": "invalid"}


def test_undo_appends_events_and_steps_back(db, people, labelled):
    # A gold-shift label writes two events, itself and its companion (the new answer, empty
    # here: `annotate.labels.COMPANIONS`), and undo takes both back together.
    alice, session = people["alice"], labelled["alice"]
    a, b = labelled["views"][0].code, labelled["views"][1].code
    record_label(db, alice, session, a, "gold_shift", "no_shift")   # e1, e2 (alt: none)
    record_label(db, alice, session, a, "gold_shift", "ambiguous")  # e3, e4 supersede them
    record_label(db, alice, session, b, "validity", "valid")        # e5
    undo3 = undo_last(db, alice, session)                           # e6: b validity -> None
    assert (undo3.undoes_id, undo3.value, undo3.code) == (5, None, b)
    assert current_labels(db, alice, b) == {}
    undo2 = undo_last(db, alice, session)                           # e7, e8: a back to no_shift
    assert (undo2.undoes_id, undo2.value) == (3, "no_shift")
    assert current_labels(db, alice, a) == {"gold_shift": "no_shift"}
    undo1 = undo_last(db, alice, session)                           # e9, e10: a cleared
    assert (undo1.undoes_id, undo1.value) == (1, None)
    assert current_labels(db, alice, a) == {}
    assert undo_last(db, alice, session) is None
    assert len(_rows(db)) == 10  # nothing deleted or updated


def test_a_rater_cannot_change_another_raters_labels(db, people, labelled):
    alice, bob = people["alice"], people["bob"]
    code = labelled["views"][0].code
    record_label(db, alice, labelled["alice"], code, "gold_shift", "no_shift")
    # bob labelling the same case writes his own event, not a supersession of alice's
    event = record_label(db, bob, labelled["bob"], code, "gold_shift", "shifted")
    assert event.supersedes_id is None and event.person_id == bob.id
    assert current_labels(db, alice, code) == {"gold_shift": "no_shift"}
    # bob cannot use alice's session, nor undo her labels through it
    with pytest.raises(UserError, match="not a session of bob"):
        record_label(db, bob, labelled["alice"], code, "gold_shift", "ambiguous")
    with pytest.raises(UserError, match="not a session of bob"):
        undo_last(db, bob, labelled["alice"])
    # nor pose as her with a hand-built Person
    forged = Person(alice.id, alice.name, alice.role)
    with pytest.raises(UserError, match="authenticated"):
        record_label(db, forged, labelled["alice"], code, "gold_shift", "ambiguous")
    assert current_labels(db, alice, code) == {"gold_shift": "no_shift"}
    assert undo_last(db, bob, labelled["bob"]).person_id == bob.id
    assert current_labels(db, alice, code) == {"gold_shift": "no_shift"}


def test_coordinators_do_not_label(db, people, labelled):
    carol = people["carol"]
    session = start_session(db, carol, "s")
    with pytest.raises(UserError, match="rater role"):
        record_label(db, carol, session, labelled["views"][0].code, "gold_shift", "1")


def test_fields_are_validated_against_the_case(db, people, labelled):
    alice, session = people["alice"], labelled["alice"]
    plain = next(v for v in labelled["views"] if not v.ask_harm)
    with pytest.raises(UserError, match="harm: not asked"):
        record_label(db, alice, session, plain.code, "harm", "harmful")
    with pytest.raises(UserError, match="gold_shift 'shifted' first"):
        record_label(db, alice, session, plain.code, "gold_shift_alt", "B")
    with pytest.raises(UserError, match="1=no_shift"):
        record_label(db, alice, session, plain.code, "gold_shift", "9")
    with pytest.raises(UserError, match="no annotation case"):
        record_label(db, alice, session, "NOCASE", "gold_shift", "1")
    record_label(db, alice, session, plain.code, "gold_shift", "shifted")
    assert record_label(db, alice, session, plain.code, "gold_shift_alt", "c").value == "C"
    with pytest.raises(UserError, match="other than the gold"):
        record_label(db, alice, session, plain.code, "gold_shift_alt", "A")
    # moving gold_shift away from 'shifted' hides the stale letter from the current labels
    record_label(db, alice, session, plain.code, "gold_shift", "no_shift")
    assert current_labels(db, alice, plain.code) == {"gold_shift": "no_shift"}
    # shifted + an empty new answer, the letter, no_shift + an empty one (which clears it)
    assert len(events_of(db, person_id=alice.id)) == 5
