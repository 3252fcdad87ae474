"""No shape leak in the shared file for the seed-003 fields (issue 35, criterion 3): every
first labelling of a CFV, direction or stereotype field writes the same events whatever the
value; a stereotype flag writes its category with it, 'none' an empty one
(`annotate.labels.COMPANIONS`). The features compared: tests/annotate/test_shape.py."""

from __future__ import annotations

from annotate.codebook import ROBUSTNESS_TEST_FIELDS
from annotate.labels import COMPANIONS
from annotate.sets.audit import create_set
from annotate.trust.people import register
from tests.annotate.test_shape import _label_each_value
from tests.robustness.helpers import hand, scripted_run

PW = "correct horse battery"


def test_every_seed_003_field_has_one_shape_whatever_the_value(demo_db, fake_model,
                                                                make_engine, marked):
    outcome = scripted_run(demo_db, make_engine(hand))
    people = {"alice": register(demo_db, "alice", "rater", PW),
              "bob": register(demo_db, "bob", "rater", PW),
              "carol": register(demo_db, "carol", "coordinator", PW)}
    create_set(demo_db, outcome.audit_id, 40, seed=7, name="s", raters=("alice", "bob"),
               coordinator=people["carol"])
    fields = [f for test in ("cfv", "direction", "flags") for f in ROBUSTNESS_TEST_FIELDS[test]]
    # Few direction cases (3): one (case, rater) per value, both raters.
    seen = _label_each_value(demo_db, people, fields, lambda v, f: f in v.fields, per_value=1)
    for field in fields:
        shapes = set().union(*seen[field].values())
        assert len(shapes) == 1, (field, dict(seen[field]))
        assert next(iter(shapes))[0] == (2 if field in COMPANIONS else 1)
    assert "stereotype" in fields
