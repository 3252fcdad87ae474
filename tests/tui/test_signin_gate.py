"""`paw ui` behind sign-in (issue 21, criterion 3): once people are registered the workbench
opens only for a coordinator; a rater is sent to `paw annotate`.

The two leaks of the issue, tried as the rater would: Statistics (key 3) showed the
clinician sections (Table 12, the harmful-flip rate, the other rater's labels) without any
sign-in, and Flips (key 2) with `/female` found the rater's own case with its arm,
operator and verdicts.
"""

from __future__ import annotations

from contextlib import asynccontextmanager

import pytest

from tests.tui.conftest import ARM_LABELS, CASES, PASSPHRASE, SET_NAME
from tests.tui.helpers import (all_text, case_codes, label_everything, screen_text, typed_fast,
                               wait_until)
from workbench.tui.screens.signin import SignInScreen
from workbench.tui.workbench_app import WorkbenchApp

pytestmark = pytest.mark.asyncio

CLINICIAN_WORDS = ("Table 12", "harmful-flip", "Semantic validity", "Inter-rater",
                   "Chain-registration rule")
REVEALING = (*ARM_LABELS, *(op for op, *_ in CASES), "M3_negation", "chest-pain-audit")


@pytest.fixture
def labelled(annotation_db):
    """The fixture set with every case labelled by bob (the other rater)."""
    values = {code: {"gold_shift": "no_shift", "validity": "invalid"}
              for code in case_codes(annotation_db.db_path)}
    label_everything(annotation_db.db_path, annotation_db.bob, values)
    return annotation_db


def gate_fast(monkeypatch) -> None:
    from workbench import signin_attempts

    monkeypatch.setattr(signin_attempts, "FAILURE_DELAYS_S", (0.0,))


async def sign_in(pilot, name: str, passphrase: str) -> None:
    from textual.widgets import Input

    gate = pilot.app.screen
    gate.query_one("#name", Input).value = name
    gate.query_one("#passphrase", Input).value = passphrase
    gate.query_one("#passphrase", Input).focus()
    await pilot.press("enter")


@asynccontextmanager
async def at_the_gate(path: str, monkeypatch, size: tuple[int, int] = (80, 24)):
    """The workbench on `path` at its sign-in gate (no delay after a wrong passphrase)."""
    gate_fast(monkeypatch)
    app = WorkbenchApp(path)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        yield app, pilot


def nothing_revealed(app) -> None:
    text = all_text(app)
    for word in (*CLINICIAN_WORDS, *REVEALING):
        assert word not in text, word


async def test_statistics_and_flips_stay_closed_until_a_coordinator_signs_in(labelled,
                                                                            monkeypatch):
    async with at_the_gate(labelled.db_path, monkeypatch) as (app, pilot):
        assert isinstance(app.screen, SignInScreen) and app.locked
        assert "paw annotate" in screen_text(app)
        for key in ("3", "2", "1", "4", "5"):   # every screen key: the gate stays
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, SignInScreen), key
        app.switch_mode("statistics")          # what the palette would call
        await pilot.pause()
        assert isinstance(app.screen, SignInScreen)
        assert not [c for c in app.get_system_commands(app.screen)
                    if c.title.startswith("Go to")]
        nothing_revealed(app)
        # The rater alice, with her right passphrase: told to use `paw annotate`, no entry.
        await sign_in(pilot, "alice", PASSPHRASE)
        await wait_until(pilot, lambda: "raters do not use the workbench" in screen_text(app))
        assert "paw annotate --rater alice" in screen_text(app)
        assert app.locked and isinstance(app.screen, SignInScreen) and app.person is None
        await pilot.press("2")                 # the issue's `/female` search: no Flips
        await pilot.press("slash", *"female", "enter")
        await pilot.pause()
        assert isinstance(app.screen, SignInScreen)
        nothing_revealed(app)
        # The coordinator opens it, and sees the clinician sections.
        await sign_in(pilot, "carol", PASSPHRASE)
        await wait_until(pilot, lambda: not app.locked)
        assert app.person.name == "carol"
        await pilot.press("3")
        await wait_until(pilot, lambda: app.screen.report is not None, seconds=60)
        titles = [s.title for s in app.screen.report.sections]
        assert any(t.startswith("Table 12") for t in titles)
        assert any("harmful-flip" in t for t in titles)


async def test_three_wrong_passphrases_lock_the_gate(labelled, monkeypatch):
    async with at_the_gate(labelled.db_path, monkeypatch) as (app, pilot):
        gate = app.screen
        for attempt in range(1, 4):
            await sign_in(pilot, "carol", f"guess number {attempt}")
            await wait_until(pilot, lambda: gate.failures.count == attempt)
        await pilot.pause()
        assert "locked" in screen_text(app)
        await sign_in(pilot, "carol", PASSPHRASE)  # the right one, too late
        await pilot.pause(0.5)
        assert app.locked and isinstance(app.screen, SignInScreen)


async def test_the_coordinator_is_not_asked_again_on_the_coordination_screen(labelled,
                                                                            monkeypatch):
    async with at_the_gate(labelled.db_path, monkeypatch, (120, 36)) as (app, pilot):
        await sign_in(pilot, "carol", PASSPHRASE)
        await wait_until(pilot, lambda: not app.locked)
        await pilot.press("5")
        await pilot.pause()
        assert "signed in as carol" in screen_text(app)
        from textual.widgets import Input

        app.screen.query_one("#passphrase", Input).focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "CoordinatorScreen")
        assert app.set_name == SET_NAME


async def test_a_store_without_people_opens_without_a_gate(tmp_path):
    from store import open_db

    path = str(tmp_path / "paw.db")
    open_db(path).conn.close()
    app = WorkbenchApp(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not app.locked and type(app.screen).__name__ == "RunsScreen"


async def test_keys_typed_fast_land_in_their_own_fields(labelled, monkeypatch):
    # The walk of issue 22 typed `alice<tab>passphrase<enter>` at tmux speed: the name read
    # "alicealice-c…" — the keys after the tab still went to the name field, the passphrase
    # with them, in clear text.
    from textual.widgets import Input

    async with at_the_gate(labelled.db_path, monkeypatch) as (app, pilot):
        gate = app.screen
        typed_fast(app, f"carol\t{PASSPHRASE}\r")
        await wait_until(pilot, lambda: not app.locked)
        assert app.person.name == "carol"
        assert gate.query_one("#name", Input).value == "carol"


async def test_a_passphrase_retyped_after_a_failed_try_never_shows_in_the_name(labelled,
                                                                             monkeypatch):
    # After a wrong passphrase the focus is on the (emptied) passphrase field. Retyping
    # the whole sequence from habit used to put the name in the passphrase, the tab
    # wrapped round to the name field, and the passphrase stood there in clear text.
    from textual.widgets import Input

    async with at_the_gate(labelled.db_path, monkeypatch) as (app, pilot):
        gate = app.screen
        typed_fast(app, "carol\twrong guess\r")
        await wait_until(pilot, lambda: gate.failures.count == 1)
        await pilot.pause()
        assert gate.focused is gate.query_one("#passphrase", Input)
        assert "type the passphrase again" in screen_text(app)
        typed_fast(app, f"carol\t{PASSPHRASE}\r")      # the name again, out of habit
        await wait_until(pilot, lambda: gate.failures.count == 2)
        assert gate.query_one("#name", Input).value == "carol"
        assert PASSPHRASE not in screen_text(app) and app.locked
        # shift+tab goes back to the name with its text selected: typing replaces it.
        await pilot.press("shift+tab")
        assert gate.focused is gate.query_one("#name", Input)
        typed_fast(app, f"carol\t{PASSPHRASE}\r")
        await wait_until(pilot, lambda: not app.locked)
        assert gate.query_one("#name", Input).value == "carol" and app.person.name == "carol"


async def test_the_coordination_form_takes_fast_keys_in_order(labelled, monkeypatch):
    # Key 5's form (set, name, passphrase) is the same kind of form: the same keys, typed
    # as fast, reach the name and the passphrase in order.
    from textual.widgets import Input

    from workbench import signin_attempts

    monkeypatch.setattr(signin_attempts, "FAILURE_DELAYS_S", (0.0,))
    async with at_the_gate(labelled.db_path, monkeypatch, (120, 36)) as (app, pilot):
        typed_fast(app, f"carol\t{PASSPHRASE}\r")
        await wait_until(pilot, lambda: not app.locked)
        await pilot.press("5")
        await pilot.pause()
        form = app.screen
        form.set_focus(form.query_one("#name", Input))
        form.query_one("#name", Input).select_all()
        typed_fast(app, f"carol\t{PASSPHRASE}\r")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "CoordinatorScreen")
        assert form.query_one("#name", Input).value == "carol"


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_statistics_plots_kappa_over_labels_for_the_coordinator(annotation_db,
                                                                    monkeypatch, size):
    # Issue 22 criterion 3: the coordinator's κ over labels among the Statistics screen's
    # plots — the same series as the coordinator screen's `k` plot, ending at the live κ.
    from textual.widgets import OptionList

    from tests.tui.test_coordinator_screen import ALICE, BOB
    from workbench.tui.widgets.figure_plot import FigurePlot

    codes = case_codes(annotation_db.db_path)
    label_everything(annotation_db.db_path, annotation_db.alice,
                     {c: {"gold_shift": v, "validity": "valid"} for c, v in zip(codes, ALICE)})
    label_everything(annotation_db.db_path, annotation_db.bob,
                     {c: {"gold_shift": v, "validity": "valid"} for c, v in zip(codes, BOB)})
    async with at_the_gate(annotation_db.db_path, monkeypatch, size) as (app, pilot):
        await sign_in(pilot, "carol", PASSPHRASE)
        await wait_until(pilot, lambda: not app.locked)
        await pilot.press("3")
        await wait_until(pilot, lambda: app.screen.report is not None, seconds=60)
        screen = app.screen
        captions = [f.caption for f in screen.report.figures]
        wanted = f"κ over paired labels: gold_shift (3-way) (set {SET_NAME})"
        assert wanted in captions, captions
        options = screen.query_one("#sections", OptionList)
        option_id = f"figure:{captions.index(wanted)}"
        options.highlighted = options.get_option_index(option_id)
        await pilot.pause()
        plot = screen.query_one("#figure", FigurePlot)
        assert screen.shown == option_id and plot.display
        assert len(plot.data.series[0].y) == 6 and plot.data.series[0].y[-1] == \
            pytest.approx(0.25)  # the live κ of the coordinator screen's test
        assert "κ after 6 paired labels: 0.25" in screen_text(app)
        assert screen.region.contains_region(plot.region) and plot.region.height >= 10
