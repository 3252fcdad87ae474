"""`paw flips show` prints the panes `workbench.present.case` decides, for a shuffle, an F-block,
a yes/no and a seed-003 prefix edit (tests/present/cases.py): the same titles, highlights,
option order and marks the flip inspector mounts (tests/tui/test_flip_case.py); and one
snapshot of the whole plain output."""

from __future__ import annotations

import pytest

from analysis.flips.case import flip_case
from store.db import open_db
from tests.cli.test_flips_cli import ANSI, paw
from tests.present.cases import (
    CASES,
    HIGHLIGHTS,
    OPTION_LINES,
    STATES,
    TITLES,
    build_cases,
    in_order,
    sections,
)
from workbench.present.case import case_panes


@pytest.fixture
def cases_file(db_path) -> tuple[str, dict[str, int]]:
    """(database path, job id per case name) of the four hand-built edits."""
    db = open_db(db_path)
    ids = build_cases(db)
    db.conn.close()
    return db_path, ids


@pytest.mark.parametrize("name", CASES)
def test_flips_show_prints_the_decided_panes(capsys, cases_file, name):
    path, ids = cases_file
    code, out, err = paw(capsys, "flips", "show", str(ids[name]), "--db", path)
    assert code == 0, err
    assert not ANSI.search(out)
    found = sections(out)
    # By hand (cases.py): titles in order, the verdict, the options, the highlights.
    assert [title for title, _, _ in found[1:]] == TITLES[name]
    assert STATES[name] in found[0][2]
    options = next(body for title, _, body in found if title.startswith("Options"))
    assert in_order(options, OPTION_LINES[name]), options
    by_title = {title: body for title, _, body in found}
    for title, text in HIGHLIGHTS[name]:
        assert by_title[title].split("\n")[0] == text
    # And exactly the panes the inspector is given (in their plain form).
    db = open_db(path)
    try:
        panes = case_panes(flip_case(db, ids[name]), plain=True)
    finally:
        db.conn.close()
    assert found == [(p.title, p.note, p.plain()) for p in panes]


def test_flips_show_of_a_shuffle_snapshot(capsys, cases_file, snapshot):
    path, ids = cases_file
    _, out, _ = paw(capsys, "flips", "show", str(ids["shuffle"]), "--db", path)
    assert out == snapshot
