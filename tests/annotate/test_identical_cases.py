"""One case per distinct view (issue 35, criterion 4): two operators making the same edit on
an item (`M4_negation_a` and `M4_negation_b` in the demo) enter a set once; the set says
which operators the case stands for, `paw annotate create` prints the merge, and the export
credits the label to both operators."""

from __future__ import annotations

from annotate.export import long_rows
from annotate.sets.annotation_set import rater_queue
from annotate.sets.audit import create_set
from annotate.events import record_label, start_session
from tests.annotate.conftest import OPTIONS, named
from tests.builders import AuditBuilder

QUESTION = "A 50-year-old man has a fever and is confused. Diagnosis?"
EDITED = "A 50-year-old man does not have a fever and is confused. Diagnosis?"


def _audit(db, *, same_answers: bool = True) -> AuditBuilder:
    """Two items; on item q0 operators a and b make the same edit (same text, same
    answers and reasoning when `same_answers`); item q1 gets only operator a."""
    b = AuditBuilder(db, audit="twins")
    arm = b.arm("smollm2/cot")
    for n in range(2):
        item = b.item(f"q{n}", gold="A", options=OPTIONS, question=QUESTION.replace("50", f"5{n}"))
        b.baseline(arm, item, answer="A", output="Sepsis. A")
        for operator in ("M4_negation_a", "M4_negation_b")[: 2 - n]:
            answer = "B" if same_answers or operator.endswith("a") else "C"
            ids = b.perturbed(arm, item, operator_id=operator, family="M4", intent="D",
                              answer=answer, old="has a", new="does not have a",
                              output=f"No fever now. {answer}")
            db["variants"].update(ids.variant_id, {"text": EDITED.replace("50", f"5{n}")})
    return b


def test_two_operators_making_the_same_edit_are_one_case(db, people):
    b = _audit(db)
    the_set = create_set(db, b.audit_id, 10, per_family=None, seed=0, name="s", **named(people))
    views = rater_queue(db, "s", people["alice"])
    texts = [(v.question, v.edited_question) for v in views]
    assert len(views) == 2 and len(set(texts)) == 2  # 3 edits, 2 distinct views
    assert the_set.merged == (("M4_negation_a", "M4_negation_b"),)
    # The label of the merged case is credited to both operators in the export.
    twin = next(v for v in views if "51" not in v.question)
    session = start_session(db, people["alice"], "s")
    record_label(db, people["alice"], session, twin.code, "gold_shift", "no_shift")
    rows = [r for r in long_rows(db, "s") if r["code"] == twin.code]
    assert [r["operator"] for r in rows] == ["M4_negation_a+M4_negation_b"]


def test_different_answers_keep_two_cases(db, people):
    # Same edit, but the model answered the two differently: the rater sees two views.
    b = _audit(db, same_answers=False)
    the_set = create_set(db, b.audit_id, 10, per_family=None, seed=0, name="s", **named(people))
    assert the_set.size == 3 and the_set.merged == ()


def test_create_prints_the_merge(tmp_path):
    from click.testing import CliRunner

    from store import open_db
    from tests.annotate.conftest import PASSPHRASE, save_to_file
    from tests.annotate.test_cli import add
    from workbench.cli import cli

    db = open_db(memory=True)
    _audit(db)
    env = {"PAW_DB": save_to_file(db, tmp_path / "paw.db"), "PW": PASSPHRASE}
    for name, role in (("carol", "coordinator"), ("alice", "rater"), ("bob", "rater")):
        assert add(env, name, role).exit_code == 0
    result = CliRunner().invoke(cli, [
        "annotate", "create", "--audit", "twins", "--size", "10", "--raters", "alice,bob",
        "--coordinator", "carol", "--passphrase-env", "PW"], env=env)
    assert result.exit_code == 0, result.output
    assert "created set audit1-set1: 2 cases" in result.output
    assert "merged identical edits: 1 case(s) each stand for 2 edits" in result.output
    assert "M4_negation_a = M4_negation_b" in result.output
