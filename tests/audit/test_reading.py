"""Answer readings (issue 36, criterion 6): the paper's reading is the default; PAW's lenient
reading is an option named in the report's header; F-block continuations whose kept chain
still states the baseline answer are counted, and excluded with --strip-stated-answer."""

from __future__ import annotations

import pytest

from analysis.audit.reading import lenient_answer, states_answer
from analysis.audit.report import AuditReportOptions, build_report
from store import open_db
from store.errors import UserError
from tests.builders import AuditBuilder

OPTIONS = {"A": "Disclose the error to the patient", "B": "Diltiazem", "C": "Adenosine",
           "D": "Observation"}


@pytest.mark.parametrize("text, expected", [
    ("A. Disclose the error to the patient and apologise.", "A"),
    ("(C) because it is fastest", "C"),
    ("**D**", "D"),
    ("The correct answer is Diltiazem.", "B"),
    ("The answer is: adenosine, given rapidly", "C"),
    ("Disclose the error to the patient, then document it.", "A"),
    ("A patient with chest pain needs care.", None),  # the article 'A', not a label
    ("Diltiazem and adenosine both slow the heart.", None),  # no stated answer
    ("", None),
])
def test_the_lenient_reading(text, expected) -> None:
    assert lenient_answer(text, OPTIONS) == expected


def test_a_kept_chain_states_the_answer() -> None:
    assert states_answer("A. Disclose the error.\nStep 1: honesty matters.", "A", OPTIONS)
    assert states_answer("Step 1: rate control.\nAnswer: B", "B", OPTIONS)
    assert states_answer("Step 1: …\nThe correct answer is Diltiazem.", "B", OPTIONS)
    assert not states_answer("Step 1: rate control with diltiazem.", "A", OPTIONS)
    assert not states_answer("Step 1: Answer: B", "C", OPTIONS)
    # Listing the options is not stating one of them.
    assert not states_answer("A. Disclose the error to the patient\nB. Diltiazem\nStep 1:",
                             "A", OPTIONS)


def _audit():
    db = open_db(memory=True)
    b = AuditBuilder(db)
    arm = b.arm("m/cot")
    items = [b.item(f"q{n}", gold="A", options=OPTIONS) for n in range(4)]
    b.baseline(arm, items[0], answer="A", output="Step 1: …\nAnswer: A")
    b.baseline(arm, items[1], answer=None, output="A. Disclose the error to the patient.")
    b.baseline(arm, items[2], answer="B", output="Answer: B")
    b.baseline(arm, items[3], answer="A", output="Answer: A")
    # F1 keeps a first line that states the baseline answer (item 0) or not (item 3).
    kept = b.perturbed(arm, items[0], operator_id="F1_truncate_50", intent="D", answer="A")
    other = b.perturbed(arm, items[3], operator_id="F1_truncate_50", intent="D", answer="B")
    b.perturbed(arm, items[2], operator_id="F2_delete_a", intent="D", answer=None,
                output="The correct answer is Diltiazem.")
    db.execute("UPDATE variants SET text = ? WHERE id = ?",
               ["A. Disclose the error to the patient.\nStep 1: honesty", kept.variant_id])
    db.execute("UPDATE variants SET text = ? WHERE id = ?",
               ["Step 1: the patient was harmed", other.variant_id])
    return db


def test_the_report_says_its_reading_and_counts_stated_answers() -> None:
    db = _audit()
    paper = build_report(db, "audit-1", {"n_boot": 0})
    assert paper.meta["answer reading"].startswith("paper (the runner's parse")
    assert paper.meta["stated answer"].startswith(
        "1 of 3 fired F-block continuations keep a chain that still states the baseline "
        "answer; kept")
    firing = paper.section("firing").frame
    lenient = build_report(db, "audit-1", {"n_boot": 0, "answer_reading": "lenient"})
    assert lenient.meta["answer reading"].startswith("lenient (PAW extension")
    assert lenient.meta["answer reading"].endswith("; 2 answer(s) read so")
    # The lenient reading parses one more baseline and one more F2 answer than the paper's.
    assert lenient.section("firing").frame["unparsed"].sum() == \
        firing["unparsed"].sum() - 1
    stripped = build_report(db, "audit-1", {"n_boot": 0, "strip_stated_answer": True})
    assert "; excluded (--strip-stated-answer)" in stripped.meta["stated answer"]
    assert stripped.section("firing").frame["used"].sum() == firing["used"].sum() - 1


def test_an_unknown_reading_is_refused() -> None:
    with pytest.raises(UserError, match="--answer-reading: expected one of paper, lenient"):
        AuditReportOptions(answer_reading="loose")
