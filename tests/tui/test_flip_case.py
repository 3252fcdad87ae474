"""The flip inspector mounts the panes `workbench.present.case` decides, for a shuffle, an
F-block, a yes/no and a seed-003 prefix edit (tests/present/cases.py): the same titles,
highlights, option order and marks `paw flips show` prints (tests/cli/test_flips_show_cases.py);
and one snapshot of the shuffle case."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from store.db import open_db
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
from tests.tui.helpers import wait_until
from workbench.present.case import PANE_KEYS, case_panes
from workbench.present.segments import STYLES
from workbench.tui.screens.flip_case import FlipCaseScreen
from workbench.tui.workbench_app import WorkbenchApp


@pytest.fixture
def cases_file(db_path) -> tuple[str, dict[str, int]]:
    """(database path, job id per case name) of the four hand-built edits."""
    db = open_db(db_path)
    ids = build_cases(db)
    db.conn.close()
    return db_path, ids


def _shown(screen: FlipCaseScreen) -> list[tuple[str, str, str, str, list]]:
    """(id, border title, border subtitle, text, [(start, end, style)]) of every pane drawn,
    in screen order."""
    out = []
    for widget in screen.query(Static):
        if widget.id in PANE_KEYS and widget.display:
            text = widget.content
            out.append((widget.id, widget.border_title or "", widget.border_subtitle or "",
                        text.plain, [(s.start, s.end, str(s.style)) for s in text.spans]))
    return out


@pytest.mark.asyncio
async def test_the_inspector_mounts_the_decided_panes(cases_file):
    path, ids = cases_file
    app = WorkbenchApp(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        for name in CASES:
            screen = FlipCaseScreen([ids[name]])
            app.push_screen(screen)
            await wait_until(pilot, lambda s=screen: s.case is not None)
            shown = _shown(screen)
            # By hand (cases.py): titles in order, the verdict, the options, the highlights.
            assert [title for _, title, *_ in shown[1:]] == TITLES[name]
            assert shown[0][0] == "header" and STATES[name] in shown[0][3]
            options = next(text for key, _, _, text, _ in shown if key == "options")
            assert in_order(options, OPTION_LINES[name]), options
            by_title = {title: (text, spans) for _, title, _, text, spans in shown}
            for title, marked in HIGHLIGHTS[name]:
                text, spans = by_title[title]
                plain, edits = unmark(marked)
                assert text.split("\n")[0] == plain
                edit_styles = {STYLES["removed"]: "removed", STYLES["inserted"]: "inserted"}
                assert [(a, b, edit_styles[s]) for a, b, s in spans if s in edit_styles] == edits
            # And exactly the panes `paw flips show` prints (styled where it marks).
            panes = case_panes(screen.case)
            assert shown == [(p.key, p.title, p.note, p.text().plain,
                              [(s.start, s.end, str(s.style)) for s in p.text().spans])
                             for p in panes]
            await app.pop_screen()


@pytest.mark.parametrize("size", [(80, 24)], ids=["80x24"])
def test_shuffle_case_snapshot(snap_compare, cases_file, size):
    path, ids = cases_file

    async def run_before(pilot) -> None:
        await pilot.pause()
        screen = FlipCaseScreen([ids["shuffle"]])
        pilot.app.push_screen(screen)
        await wait_until(pilot, lambda: screen.case is not None)
        await pilot.pause()

    assert snap_compare(WorkbenchApp(path), run_before=run_before, terminal_size=size)
