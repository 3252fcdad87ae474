"""A kept `LabelLog` gives, after every new event, exactly what a fresh read of the whole
log gives: agreement tables per stratum and progress (issue 15, item 4)."""

from __future__ import annotations

import random

import pytest

from annotate.agreement.label_log import LabelLog
from annotate.agreement.tables import all_agreements, progress
from annotate.events import record_label, start_session, undo_last
from annotate.sets.annotation_set import rater_queue
from annotate.sets.audit import create_set


@pytest.fixture
def s(db, audit, people):
    create_set(db, audit.audit_id, 40, per_family=None, seed=0, name="s",
               raters=("alice", "bob"), coordinator=people["carol"])
    return {name: start_session(db, people[name], "s") for name in ("alice", "bob")}


def test_incremental_equals_a_fresh_read_after_every_event(db, people, s):
    rng = random.Random(5)
    views = {name: rater_queue(db, "s", people[name]) for name in ("alice", "bob")}
    kept = LabelLog(db.execute("SELECT id FROM annotation_sets WHERE name = 's'")
                    .fetchone()[0])
    values = {"gold_shift": ["no_shift", "ambiguous", "shifted", None],
              "validity": ["valid", "borderline", "invalid"],
              "harm": ["harmful", "appropriate", "neutral", "unsure"],
              "chain_registration": ["yes", "no", "unclear"]}
    checked = 0
    for step in range(160):
        name = rng.choice(("alice", "bob"))
        view = rng.choice(views[name])
        if step % 17 == 16:
            undo_last(db, people[name], s[name])           # an undo event
        else:
            fields = [f for f in view.fields if f in values]
            field = rng.choice(fields)
            value = rng.choice(values[field])              # None: a cleared label
            record_label(db, people[name], s[name], view.code, field, value)
            if value == "shifted":
                record_label(db, people[name], s[name], view.code, "gold_shift_alt", "B")
        if step % 8 == 0:
            incremental = all_agreements(db, "s", by="family", log=kept)
            fresh = all_agreements(db, "s", by="family")
            assert incremental == fresh
            assert progress(db, "s", log=kept) == progress(db, "s")
            checked += 1
    assert checked == 20
    # The walk reached real tables: some agreement was computed on both raters' labels.
    assert any(a.n > 5 and a.kappa is not None for a in all_agreements(db, "s", log=kept))
