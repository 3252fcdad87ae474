"""The flip inspector's table marks an incoherent edit (issue 39, criterion 2): the real
Textual app, driven by Pilot on a real SQLite file (tests/cli/test_flips_coherence.py builds
it), shows each row's failed coherence checks in its `coh.` column and names them in full in
the row line below the table."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Static

from tests.cli.test_flips_coherence import EXPECTED, build_coherence_store
from tests.tui.helpers import wait_until
from workbench.tui.screens.flips import COLUMNS
from workbench.tui.workbench_app import WorkbenchApp

pytestmark = pytest.mark.asyncio


async def test_flips_table_marks_incoherent_edits(tmp_path):
    from analysis.audit.coherence import SHORT

    path = str(tmp_path / "paw.db")
    jobs = build_coherence_store(path)
    app = WorkbenchApp(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await pilot.press("2")
        screen = app.screen
        await wait_until(pilot, lambda: screen.page is not None)
        table = screen.query_one("#flips", DataTable)
        column = COLUMNS.index("coh.")
        shown = {int(str(key.value)): str(table.get_row(key)[column])
                 for key in table.rows}
        assert shown == {job: ",".join(SHORT[c] for c in EXPECTED[k]) or "–"
                         for k, job in jobs.items()}
        # the highlighted row's line names the checks in full
        target = jobs[(0, "M5_severity_b")]
        table.move_cursor(row=table.get_row_index(str(target)))
        await pilot.pause()
        await wait_until(pilot, lambda: "INCOHERENT EDIT: named_condition" in str(
            screen.query_one("#row-detail", Static).render()))
        clean = jobs[(0, "M2_sex_coherent")]
        table.move_cursor(row=table.get_row_index(str(clean)))
        await pilot.pause()
        await wait_until(pilot, lambda: "INCOHERENT" not in str(
            screen.query_one("#row-detail", Static).render()))
