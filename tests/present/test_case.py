"""`workbench.present.case`: the panes of a shuffle, an F-block, a yes/no and a seed-003 prefix
edit (tests/present/cases.py) carry the titles, highlights, option order and marks worked out
by hand; the styled runs and their plain markers."""

from __future__ import annotations

import pytest
from scipy.spatial.distance import jensenshannon

from analysis.flips.case import flip_case
from analysis.flips.index import QUESTION_EDIT_ROLES
from tests.present.cases import (
    CASES,
    HIGHLIGHTS,
    OPTION_LINES,
    STATES,
    TITLES,
    build_cases,
    in_order,
    unmark,
)
from workbench.present.case import EDITED_TITLES, case_panes
from workbench.present.segments import bar, marked, plain_text, styled


@pytest.fixture
def cases(db):
    return {name: flip_case(db, job) for name, job in build_cases(db).items()}


@pytest.mark.parametrize("name", CASES)
def test_each_case_has_its_titles_marks_and_highlights(cases, name):
    panes = case_panes(cases[name], plain=True)
    assert panes[0].key == "header" and panes[0].title == ""
    assert [p.title for p in panes[1:]] == TITLES[name]
    assert STATES[name] in panes[0].plain()
    options = next(p for p in panes if p.key == "options")
    assert in_order(options.plain(), OPTION_LINES[name]), options.plain()
    by_title = {p.title: p for p in panes}
    for title, text in HIGHLIGHTS[name]:
        assert by_title[title].plain().split("\n")[0] == text


def test_a_shuffles_distribution_pairs_each_option_with_its_own_text(cases):
    case = cases["shuffle"]
    dist = next(p for p in case_panes(case, plain=True) if p.key == "distribution")
    rows = dist.plain().split("\n")[1:]
    # Pneumonia .6 before, .2 after under B; Influenza .1 before, .7 after under A.
    assert [row.split()[:3] for row in rows] == [["A", "→", "B"], ["B", "→", "C"],
                                                 ["C", "→", "A"]]
    assert [row.split()[-1] for row in rows] == ["0.20", "0.10", "0.70"]
    assert rows[0].startswith("A → B  " + "#" * 12 + " " * 8 + " 0.60")
    # The JSD in the title is the one of these pairs (cases.py works it out by hand).
    assert case.jsd == pytest.approx(0.295807, abs=1e-6)
    assert case.jsd == pytest.approx(jensenshannon([.6, .3, .1], [.2, .1, .7], base=2) ** 2)


def test_every_role_that_edits_the_question_has_one_title():
    # The flip rule's list of question edits and the titles are the same roles: a role
    # added to one and not the other would show an edited question as unedited.
    assert set(EDITED_TITLES) == set(QUESTION_EDIT_ROLES)
    assert EDITED_TITLES["cfv_answer"] == "Changed case (the model's own CFV proposal)"


def test_colour_and_plain_differ_only_in_the_bars(cases):
    for case in cases.values():
        coloured, piped = case_panes(case), case_panes(case, plain=True)
        assert [(p.key, p.title, p.note) for p in coloured] == \
            [(p.key, p.title, p.note) for p in piped]
        for a, b in zip(coloured, piped, strict=True):
            if a.key != "distribution":
                assert a.body == b.body
            else:
                assert [s for s in a.body if s[1] not in ("before", "after")] == \
                    [s for s in b.body if s[1] not in ("before", "after")]


def test_runs_markers_and_bars():
    runs = marked("he has a cough", [(3, 6), (9, 14)], "removed")
    assert runs == [("he ", None), ("has", "removed"), (" a ", None), ("cough", "removed")]
    assert plain_text(runs) == "he [-has-] a [-cough-]"
    assert plain_text([("x", "inserted")]) == "{+x+}"
    text = styled(runs)
    assert text.plain == "he has a cough"
    assert [(s.start, s.end, str(s.style)) for s in text.spans] == [
        (3, 6, "bold strike red"), (9, 14, "bold strike red")]
    # p = .55 of 20 cells: 11 on a pipe; 88 eighths = 11 full blocks in colour.
    assert bar(0.55, plain=True) == "#" * 11 + " " * 9
    assert bar(0.55) == "█" * 11 + " " * 9
    assert bar(0.51) == "█" * 10 + "▎" + " " * 9  # 81.6 eighths -> 82 = 10 full + 2/8
    assert bar(1.7, plain=True) == "#" * 20 and bar(-1, plain=True) == " " * 20


def test_unmark_reads_the_markers_back():
    assert unmark("a [-b-] c {+d e+}") == ("a b c d e", [(2, 3, "removed"), (6, 9, "inserted")])
