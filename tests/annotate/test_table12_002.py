"""Table 12's "not invalid" row (seed 002 Appendix M: both raters valid or borderline)."""

from __future__ import annotations

import pytest

from annotate import stats
from annotate.events import record_label, start_session
from annotate.report.sections import set_sections
from annotate.sets.annotation_set import rater_queue
from annotate.sets.audit import create_set
from tests.annotate.conftest import named


def test_not_invalid_joint_row(db, audit, people):
    """Table 12, semantic validity: A invalid 5.6%, B invalid 26.9%, joint invalid 4.6%, and
    a joint 72.1% printed in the borderline row. It is "both raters valid or borderline":
    by inclusion–exclusion, 100 − 5.6 − 26.9 + 4.6 = 72.1 exactly."""
    create_set(db, audit.audit_id, 10, per_family=None, seed=0, name="v", **named(people))
    sessions = {}
    for name in ("alice", "bob"):
        rater_queue(db, "v", people[name])
        sessions[name] = start_session(db, people[name], "v")
    codes = [r[0] for r in db.execute("SELECT code FROM annotation_cases ORDER BY code")]
    alice = ["valid"] * 5 + ["borderline"] * 3 + ["invalid"] * 2
    bob = ["valid", "borderline", "invalid", "valid", "borderline", "borderline", "valid",
           "invalid", "invalid", "valid"]
    for code, a, b in zip(codes, alice, bob):
        record_label(db, people["alice"], sessions["alice"], code, "validity", a)
        record_label(db, people["bob"], sessions["bob"], code, "validity", b)
    a, b, both = stats.within(db, "v", "validity", ("valid", "borderline"))
    # cases 0..9: A invalid on 8, 9; B invalid on 2, 7, 8. A not invalid 8/10, B 7/10,
    # both not invalid {0, 1, 3, 4, 5, 6} = 6/10 = 1 − 0.2 − 0.3 + 0.1 (both invalid: 8)
    assert (a.k, b.k, both.k, both.n) == (8, 7, 6, 10)
    table12 = set_sections(db, "v")[0].frame
    row = table12.loc["Semantic validity (N=10): not invalid"]
    assert (row["A_pct"], row["B_pct"], row["joint_pct"]) == (80.0, 70.0, pytest.approx(60.0))
    # joint "valid" alone: cases 0 and 3 -> 20 %; "not invalid" is not a sum of joints
    assert table12.loc["Semantic validity (N=10): valid", "joint_pct"] == pytest.approx(20.0)
