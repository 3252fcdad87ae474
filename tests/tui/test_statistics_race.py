"""The Statistics screen when runs are stepped faster than their reports build: the report
on screen, and the app's focus, stay with the run the last key asked for.

A real store holds a DBPA analysis, whose report takes several times as long to build as
that of a small seed-002 audit (the ROC curves and the permutation tables), and two such
audits. Stepping to the DBPA run and away again before its report arrives must not let that
report, once built, replace the newer one: the coordinator screen drops a result computed
for a dimension it has left, and this screen must do the same for a run.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from textual import events
from textual.widgets import Static

from workbench.kinds import build_run_report
from store.db import open_db
from store.runs import list_runs
from tests.builders import AuditBuilder
from tests.tui import figure_stores as stores
from tests.tui.helpers import wait_until
from workbench.tui.screens.statistics import N_BOOT_UI, StatisticsScreen
from workbench.tui.workbench_app import WorkbenchApp

pytestmark = pytest.mark.asyncio


def _small_audit(db, name: str) -> None:
    builder = AuditBuilder(db, audit=name)
    arm = builder.arm("smol/cot")
    for i in range(2):
        item = builder.item(f"{name}-q{i}")
        builder.baseline(arm, item, answer="A")
        builder.perturbed(arm, item, operator_id="M5_severity_a", family="M5", intent="D",
                          answer="B" if i else "A", old="acute", new="chronic")


@pytest.fixture
def three_runs(tmp_path) -> tuple[str, int, float]:
    """The store's path, the slow (DBPA) run's id and how long its report takes here."""
    path = str(tmp_path / "paw.db")
    stores.dbpa_store(path)
    db = open_db(path)
    try:
        _small_audit(db, "first-audit")
        _small_audit(db, "second-audit")
        slow = next(r.id for r in list_runs(db) if r.kind == "dbpa")
        started = time.monotonic()
        build_run_report(db, slow, n_boot=N_BOOT_UI)
        took = time.monotonic() - started
    finally:
        db.conn.close()
    return path, slow, took


async def test_a_superseded_report_never_replaces_the_newer_one(three_runs):
    path, slow, took = three_runs
    app = WorkbenchApp(path)
    # What the screen shows and where the app's focus is, sampled before every message any
    # part of the app handles from the moment the newer run is asked for.
    seen: list[tuple[int | None, int | None]] = []
    asked = False

    def sample(_message) -> None:
        if asked and isinstance(app.screen, StatisticsScreen):
            seen.append((app.screen.audit_id, app.focus_audit))

    async with app.run_test(size=(120, 36), message_hook=sample) as pilot:
        runs = [r.id for r in list_runs(app.db)]
        assert len(runs) == 3
        # Start on the run before the slow one: `]` asks for the slow run, then `[` (a
        # step from the run on screen) for the fast one on the other side.
        at = runs.index(slow)
        start, fast = runs[(at - 1) % 3], runs[(at + 1) % 3]
        app.focus_audit = start
        await pilot.press("3")
        await wait_until(pilot, lambda: getattr(app.screen, "audit_id", None) == start,
                         seconds=60)
        screen = app.screen

        # The keys as a quick typist sends them, not through `pilot.press`, which waits for
        # the process to go idle after a key, and so for the slow report to be built. `[`
        # comes once the slow run's worker has started its thread (a worker cancelled
        # before that never runs), well inside the time its report takes.
        app.post_message(events.Key("right_square_bracket", "]"))
        await wait_until(pilot, lambda: app.focus_audit == slow)
        await asyncio.sleep(0.1)
        app.post_message(events.Key("left_square_bracket", "["))
        await wait_until(pilot, lambda: app.focus_audit == fast)
        asked = True
        await wait_until(pilot, lambda: screen.audit_id != start, seconds=60)
        # Long enough for the slow run's report to have been built and delivered several
        # times over (its build time measured just now, on this machine under its load).
        await pilot.pause(max(2.0, 4 * took))

        assert seen and all(shown != slow and focus != slow for shown, focus in seen)
        assert screen.audit_id == fast
        assert screen.report is not None and int(screen.report.meta["audit_id"]) == fast
        assert app.focus_audit == fast
        assert "first-audit" in str(screen.query_one("#status", Static).render())
