"""Agreement read from the label log: recomputed as labels arrive, per stratum, progress."""

from __future__ import annotations

import pytest

from annotate.agreement.tables import agreement_table, all_agreements, progress
from annotate.events import record_label, start_session, undo_last
from annotate.sets.annotation_set import rater_queue
from annotate.sets.audit import create_set
from tests.annotate.conftest import named


@pytest.fixture
def s(db, audit, people):
    create_set(db, audit.audit_id, 40, per_family=None, seed=0, name="s", **named(people))
    sessions = {}
    for name in ("alice", "bob"):
        rater_queue(db, "s", people[name])
        sessions[name] = start_session(db, people[name], "s")
    return sessions


def test_agreement_follows_the_labels_as_they_arrive(db, people, s):
    codes = [r[0] for r in db.execute("SELECT code FROM annotation_cases ORDER BY code")]
    first = agreement_table(db, "s", "validity")
    # The pair is named with the set, so "no case labelled by both" (not "fewer than two
    # raters") is why nothing can be computed yet.
    assert first.state == "undefined" and "no case labelled by both" in first.reason
    record_label(db, people["alice"], s["alice"], codes[0], "validity", "valid")
    record_label(db, people["bob"], s["bob"], codes[0], "validity", "valid")
    one = agreement_table(db, "s", "validity")
    assert one.n == 1 and one.state == "undefined" and "one category" in one.reason
    record_label(db, people["alice"], s["alice"], codes[1], "validity", "invalid")
    record_label(db, people["bob"], s["bob"], codes[1], "validity", "invalid")
    two = agreement_table(db, "s", "validity")
    assert two.n == 2 and two.kappa == pytest.approx(1.0)
    assert two.interpretation == "almost perfect"
    record_label(db, people["bob"], s["bob"], codes[1], "validity", "borderline")  # relabel
    # (valid, valid), (invalid, borderline): p_o = 1/2; A (1/2, 0, 1/2), B (1/2, 1/2, 0)
    # p_e = 1/4 -> kappa = (1/2 − 1/4)/(3/4) = 1/3
    assert agreement_table(db, "s", "validity").kappa == pytest.approx(1 / 3)
    undo_last(db, people["bob"], s["bob"])  # back to 'invalid'
    assert agreement_table(db, "s", "validity").kappa == pytest.approx(1.0)
    done = {p.name: (p.started, p.done) for p in progress(db, "s")}
    assert done == {"alice": (2, 0), "bob": (2, 0)}  # gold_shift still missing


def test_per_stratum_filters_and_breakdown(db, people, s):
    rows = list(db.execute("SELECT code, stratum FROM annotation_cases ORDER BY code"))
    for code, stratum in rows:
        family = stratum.split("|")[0]
        a = "no_shift"
        b = "no_shift" if family == "M2" else ("ambiguous" if code < rows[20][0] else a)
        record_label(db, people["alice"], s["alice"], code, "gold_shift", a)
        record_label(db, people["bob"], s["bob"], code, "gold_shift", b)
    m2 = agreement_table(db, "s", "gold_shift", stratum="family=M2")
    assert m2.n == 10 and m2.raw_agreement == 1.0 and m2.state == "undefined"
    everything = agreement_table(db, "s", "gold_shift")
    assert everything.n == 40
    by_family = [a for a in all_agreements(db, "s", by="family") if a.stratum]
    # 4 families × every agreement field of seed 002's cases (the set has no seed-003
    # case) × (full, and binary where the field has one)
    from annotate.codebook import FIELDS, SEED002_AGREEMENT_FIELDS

    forms = sum(2 if FIELDS[f].binary_positive else 1 for f in SEED002_AGREEMENT_FIELDS)
    assert len(by_family) == 4 * forms
    assert sum(a.n for a in by_family if a.field == "gold_shift" and not a.binary) == 40
    full_key = rows[0][1]
    assert agreement_table(db, "s", "gold_shift", stratum=full_key).n == sum(
        1 for _, stratum in rows if stratum == full_key)
