"""Lists that follow the data (issue 38, criterion 3): the Flips and Statistics screens opened
while a run launched from the form is going refresh when it finishes, with no key pressed,
and every list says when it last read the store; the flip list has a flip column in every
mode and shows a shuffle's answers by option text; `y` copies a row and `e` exports the
list (Flips, Runs) into a new file next to the database.

The real app under Pilot, the real engine and planner, a real SQLite file; the fake backend
stands in for llama.cpp (scripted: a negated question is answered B, so M4 edits flip)."""

from __future__ import annotations

import itertools
import re
import threading
import time

import pandas as pd
import pytest

from analysis.flips.listing import FlipFilter, list_flips
from store.db import open_db
from tests.cli.conftest import negation_responder, run_fake_audit
from tests.tui.helpers import screen_text, wait_until
from tests.tui.test_workbench import _fill_form, workbench_db  # noqa: F401  (the fixture)
from workbench.models.fake import FakeBackend
from workbench.present.flips_csv import csv_columns
from workbench.tui.follow import refreshed_text
from workbench.tui.workbench_app import WorkbenchApp

pytestmark = pytest.mark.asyncio


def gated_negation(gate: threading.Event, free: int = 3):
    """Backend factory: `negation_responder`; after `free` answers each waits for `gate`
    (so the run is still going while the test opens its screens)."""
    answered = itertools.count()

    def respond(prompt, sampler):
        if next(answered) >= free:
            assert gate.wait(120), "the test never let the run finish"
        return negation_responder(prompt, sampler)

    return lambda model: FakeBackend(respond)


async def _launch_and_follow(app, pilot) -> None:
    await pilot.pause()
    await pilot.press("n")
    await _fill_form(pilot, operators="M4", limit="2", max_tokens="400")
    await pilot.press("ctrl+s")
    # The Runs screen selects the launched run once it is listed: the screens follow it.
    await wait_until(pilot, lambda: app.live.name and any(
        r.name == app.live.name for r in app.screen.runs) and app.focus_audit == next(
        r.id for r in app.screen.runs if r.name == app.live.name), seconds=30)


async def test_flips_and_statistics_refresh_when_the_run_finishes(workbench_db):  # noqa: F811
    gate = threading.Event()
    app = WorkbenchApp(workbench_db, backend_factory=gated_negation(gate))
    async with app.run_test(size=(120, 36)) as pilot:
        await _launch_and_follow(app, pilot)
        await pilot.press("2")  # Flips, listed while the run is going
        flips = app.screen
        await wait_until(pilot, lambda: flips.page is not None)
        listed_while_running = flips.refreshed_at
        await pilot.press("3")  # Statistics, built while the run is going
        stats = app.screen
        await wait_until(pilot, lambda: stats.report is not None, seconds=60)
        built_while_running = stats.refreshed_at
        assert app.live.active and stats.report.meta["audit"] == app.live.name
        assert flips.page.total == 0  # nothing edited answered yet
        gate.set()
        await wait_until(pilot, lambda: not app.live.active, seconds=90)
        assert app.live.snapshot().state == "finished", app.live.snapshot().message
        ended = time.time()
        # No key pressed: the Statistics screen rebuilds its report after the run's status
        # changed.
        await wait_until(pilot, lambda: stats.refreshed_at is not None
                         and stats.refreshed_at > built_while_running
                         and stats.refreshed_at >= ended - 3, seconds=60)
        await wait_until(pilot, lambda: "refreshed" in screen_text(app), seconds=30)
        db = open_db(workbench_db)
        expected = list_flips(db, app.focus_audit, FlipFilter()).total
        assert expected > 0  # the M4 negations flipped A -> B
        # Back on Flips (no other key): the list re-reads the store and shows the flips.
        await pilot.press("2")
        await wait_until(pilot, lambda: flips.page.total == expected
                         and flips.refreshed_at > listed_while_running, seconds=15)
        await wait_until(pilot, lambda: f"{expected} flips match" in screen_text(app))
        assert re.search(r"refreshed \d\d:\d\d:\d\d", screen_text(app))
        await pilot.press("1")
        await wait_until(pilot, lambda: "refreshed" in screen_text(app).splitlines()[0])


async def test_flip_column_in_every_mode_and_shuffles_by_text(tmp_path):
    path = str(tmp_path / "paw.db")
    run_fake_audit(path)  # shuffles keep the letter A, which now names another option
    app = WorkbenchApp(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await pilot.press("2")
        screen = app.screen
        await wait_until(pilot, lambda: screen.page is not None and screen.page.total == 4)
        for mode in (True, False, None):  # flips, kept, all edits: the flip column stays
            await wait_until(pilot, lambda mode=mode: screen.filter.flipped is mode
                             and screen.page is not None)
            header = next(line for line in screen_text(app).splitlines()
                          if line.strip().startswith("id "))
            assert " flip " in header, (mode, header)
            await pilot.press("f")
        await wait_until(pilot, lambda: screen.filter.flipped is True
                         and screen.page.total == 4)
        shuffles = [r for r in screen.page.rows if r.block == "shuffle"]
        assert len(shuffles) == 2 and all(r.base_answer == r.answer == "A" for r in shuffles)
        text = screen_text(app)
        for row in shuffles:
            line = next(x for x in text.splitlines() if x.strip().startswith(f"{row.id} "))
            assert "A→A" not in line and row.base_text[:5] in line and " yes " in line


async def test_copy_and_export_keys(tmp_path, capsys):
    from tests.cli.test_flips_cli import paw

    path = str(tmp_path / "paw.db")
    outcome = run_fake_audit(path)
    (tmp_path / f"{outcome.audit}-flips.csv").write_text("mine\n", encoding="utf-8")
    _, cli, _ = paw(capsys, "flips", "--all", "--csv", "--db", path)
    assert cli.count("\n") == 11
    app = WorkbenchApp(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await wait_until(pilot, lambda: app.screen.runs)
        await pilot.press("y")
        await pilot.pause()
        header, row, report = app.clipboard.splitlines()
        assert header.split("\t")[:2] == ["id", "name"] and outcome.audit in row.split("\t")
        assert report == f"paw report --audit {outcome.audit}"
        await pilot.press("e")
        folder = tmp_path / f"{outcome.audit}-export"
        await wait_until(pilot, lambda: (folder / f"{outcome.audit}-generations.csv").exists())
        edits = pd.read_csv(folder / f"{outcome.audit}-edits.csv")
        assert len(edits) == 10 and int(edits["flip"].fillna(False).astype(bool).sum()) == 4
        await pilot.press("2")
        screen = app.screen
        await wait_until(pilot, lambda: screen.page is not None and screen.page.rows)
        await pilot.press("y")
        await pilot.pause()
        header, row = app.clipboard.splitlines()
        assert header.split("\t") == csv_columns()
        assert row.split("\t")[0] == str(screen.page.rows[0].id)
        await pilot.press("f", "f")  # every edit
        await wait_until(pilot, lambda: screen.filter.flipped is None
                         and screen.page.total == 10)
        await pilot.press("e")
        written = tmp_path / f"{outcome.audit}-flips-2.csv"  # the user's own file is kept
        # The file `paw flips --all --csv` prints, whole (not the page).
        await wait_until(pilot, lambda: written.exists()
                         and written.read_text(encoding="utf-8") == cli)
    assert (tmp_path / f"{outcome.audit}-flips.csv").read_text(encoding="utf-8") == "mine\n"


def test_refreshed_text_is_the_local_clock():
    at = time.mktime((2026, 12, 8, 0, 5, 9, 0, 0, -1))
    assert refreshed_text(at) == "refreshed 00:05:09"
