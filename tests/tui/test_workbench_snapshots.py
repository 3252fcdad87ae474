"""Snapshots of the auditor's workbench screens at 80×24 and 120×36 (update with
--snapshot-update after checking the SVGs by eye; docs/tui.md shows them)."""

from __future__ import annotations

import pytest

from tests.tui.helpers import wait_until
from tests.tui.test_workbench import workbench_db  # noqa: F401  (the fixture)
from workbench.tui.workbench_app import WorkbenchApp

SIZES = [(80, 24), (120, 36)]


def _ids(size):
    return f"{size[0]}x{size[1]}"


async def _runs(pilot) -> None:
    await wait_until(pilot, lambda: pilot.app.screen.runs)


async def _flips(pilot) -> None:
    await pilot.press("2")
    await wait_until(pilot, lambda: pilot.app.screen.page is not None)


async def _case(pilot) -> None:
    await _flips(pilot)
    await pilot.press("enter")
    await wait_until(pilot, lambda: getattr(pilot.app.screen, "case", None) is not None)


async def _statistics(pilot) -> None:
    await pilot.press("3")
    await wait_until(pilot, lambda: pilot.app.screen.report is not None, seconds=60)
    pilot.app.screen.query_one("#sections").highlighted = 1  # Table 3
    await pilot.pause()


async def _plane(pilot) -> None:
    await pilot.press("3")
    await wait_until(pilot, lambda: pilot.app.screen.report is not None, seconds=60)


async def _data(pilot) -> None:
    await pilot.press("4")
    await wait_until(pilot, lambda: pilot.app.screen.query_one("#datasets-table").row_count)


async def _launch(pilot) -> None:
    await _runs(pilot)
    await pilot.press("n")
    await pilot.pause()


async def _coordination(pilot) -> None:
    await pilot.press("5")
    await pilot.pause()


SCREENS = {"runs": _runs, "flips": _flips, "case": _case, "statistics": _statistics,
           "plane": _plane, "data": _data, "launch": _launch, "coordination": _coordination}


@pytest.mark.parametrize("size", SIZES, ids=_ids)
@pytest.mark.parametrize("screen", list(SCREENS))
def test_workbench_screen(snap_compare, workbench_db, screen, size):  # noqa: F811
    async def run_before(pilot) -> None:
        await pilot.pause()
        await SCREENS[screen](pilot)
        await pilot.pause()

    assert snap_compare(WorkbenchApp(workbench_db), run_before=run_before, terminal_size=size)
