"""Adjudication: disagreements queued lowest-kappa stratum first; final values recorded with
source, reason and coordinator; the raters' labels untouched."""

from __future__ import annotations

import pytest

from annotate.adjudicate import adjudicate, disagreements, final_labels, record_unanimous
from annotate.events import record_label, start_session
from annotate.sets.annotation_set import rater_queue
from annotate.sets.audit import create_set
from store.errors import UserError
from tests.annotate.conftest import named


@pytest.fixture
def two_strata(db, audit, people):
    """Stratum X: 2 cases, raters swap labels (kappa −1); stratum Y: 3 cases, kappa 0.4."""
    create_set(db, audit.audit_id, 40, per_family=None, seed=0, name="s", **named(people))
    sessions = {}
    for name in ("alice", "bob"):
        rater_queue(db, "s", people[name])
        sessions[name] = start_session(db, people[name], "s")
    rows = list(db.execute("SELECT code, stratum FROM annotation_cases ORDER BY code"))
    strata = sorted({stratum for _, stratum in rows})
    x = [code for code, stratum in rows if stratum == strata[0]][:2]
    y = [code for code, stratum in rows if stratum == strata[1]][:3]
    # X: (no_shift, ambiguous), (ambiguous, no_shift): p_o = 0, p_e = .5 -> kappa = −1
    # Y: (ns, ns), (amb, amb), (ns, amb): p_o = 2/3; A (2/3, 1/3), B (1/3, 2/3);
    #    p_e = 2/9 + 2/9 = 4/9 -> kappa = (6/9 − 4/9)/(5/9) = 2/5
    plan = [(x[0], "no_shift", "ambiguous"), (x[1], "ambiguous", "no_shift"),
            (y[0], "no_shift", "no_shift"), (y[1], "ambiguous", "ambiguous"),
            (y[2], "no_shift", "ambiguous")]
    for code, a, b in plan:
        record_label(db, people["alice"], sessions["alice"], code, "gold_shift", a)
        record_label(db, people["bob"], sessions["bob"], code, "gold_shift", b)
    return x, y


def test_queue_lowest_agreement_stratum_first(db, two_strata):
    x, y = two_strata
    queue = disagreements(db, "s")
    assert [d.code for d in queue] == sorted(x) + [y[2]]
    assert [d.stratum_kappa for d in queue] == pytest.approx([-1.0, -1.0, 0.4])
    first = queue[0]
    assert first.field == "gold_shift" and first.value_a != first.value_b
    assert (first.rater_a, first.rater_b) == ("alice", "bob")


def test_adjudication_records_value_source_reason_and_coordinator(db, people, two_strata):
    x, y = two_strata
    before = list(db.query("SELECT * FROM label_events ORDER BY id"))
    final = adjudicate(db, people["carol"], x[0], "gold_shift", "2", "stem still fits A")
    assert (final.value, final.source, final.by) == ("ambiguous", "adjudicated", "carol")
    assert list(db.query("SELECT * FROM label_events ORDER BY id")) == before  # untouched
    finals = final_labels(db, "s")
    assert finals[(x[0], "gold_shift")].reason == "stem still fits A"
    assert finals[(y[0], "gold_shift")].source == "unanimous"
    assert finals[(y[0], "gold_shift")].value == "no_shift"
    assert (x[1], "gold_shift") not in finals  # still pending
    assert [d.code for d in disagreements(db, "s")] == [x[1], y[2]]
    assert len(disagreements(db, "s", include_adjudicated=True)) == 3


def test_only_coordinators_adjudicate_with_a_reason_and_valid_value(db, people, two_strata):
    x, _ = two_strata
    with pytest.raises(UserError, match="coordinator role"):
        adjudicate(db, people["alice"], x[0], "gold_shift", "no_shift", "I am sure")
    with pytest.raises(UserError, match="reason"):
        adjudicate(db, people["carol"], x[0], "gold_shift", "no_shift", "  ")
    with pytest.raises(UserError, match="1=no_shift"):
        adjudicate(db, people["carol"], x[0], "gold_shift", "maybe", "why not")


def test_record_unanimous_freezes_agreed_labels_once(db, people, two_strata):
    _, y = two_strata
    assert record_unanimous(db, people["carol"], "s") == 2  # y[0] and y[1]
    assert record_unanimous(db, people["carol"], "s") == 0
    rows = list(db.query("SELECT source, reason FROM adjudications"))
    assert rows == [{"source": "unanimous", "reason": "both raters agreed"}] * 2
