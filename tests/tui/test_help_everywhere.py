"""`?` and F1 on every screen of the rater's and the coordinator's apps, in every state
(issue 35, criterion 1): the first case, a complete case, the new-answer prompt, the note,
a rater file, the coordinator's tables and κ plot, a decision and its reason box.

A traceback in any handler ends `run_test` with the exception, so each test fails on one;
each also reads the rows listed: every key in words (no raw action such as `scroll_case(-1)`),
the keys the state offers, and nothing listed twice.
"""

from __future__ import annotations

import re

import pytest

from annotate.raterfile.file import open_file, pack, sign_in
from store import open_db
from tests.tui.clinic import SET_NAME as CLINIC_SET
from tests.tui.conftest import PASSPHRASE, SET_NAME
from tests.tui.helpers import wait_until
from tests.tui.test_adjudicate_screen import _label
from workbench.tui.app import AnnotationApp, CoordinatorApp, RaterFileApp
from workbench.tui.components.alt_letter_modal import AltLetterModal
from workbench.tui.components.help_modal import HelpModal
from workbench.tui.components.note_modal import NoteModal
from workbench.tui.screens.adjudicate import AdjudicateScreen
from workbench.tui.screens.annotate import AnnotateScreen
from workbench.tui.screens.coordinator import CoordinatorScreen

pytestmark = pytest.mark.asyncio

SIZES = [(80, 24), (120, 36)]
IDS = ["80x24", "120x36"]


async def _help(pilot, expected: list[str], *, keys=("question_mark", "f1")) -> None:
    """Open the help with each of `keys`, check its rows, close it with escape."""
    app = pilot.app
    under = app.screen
    for key in keys:
        await pilot.press(key)
        await pilot.pause()
        assert isinstance(app.screen, HelpModal), (key, app.screen)
        rows = app.screen.rows
        shown = [k for k, _ in rows]
        assert len(shown) == len(set(shown)), shown
        for k, what in rows:
            # Words, not an action's code name (`scroll_case(-1)`, `next_panel`).
            assert not re.search(r"\w\(|_", what), (k, what)
        listed = " | ".join(f"{k} {what}" for k, what in rows)
        for words in expected:
            assert words in listed, (words, listed)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is under


async def _plain_case(pilot, screen: AnnotateScreen) -> None:
    """Go to a case that asks neither harm nor chain registration."""
    for _ in range(len(screen.cases)):
        view = screen.current
        if not view.ask_harm and not view.ask_chain_registration:
            return
        await pilot.press("right_square_bracket")
    raise AssertionError("no plain case in the fixture")


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_help_in_every_state_of_the_labelling_screen(annotation_db, size):
    app = AnnotationApp(annotation_db.db_path, annotation_db.alice, SET_NAME)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AnnotateScreen)
        # The first case, nothing labelled.
        await _help(pilot, ["1… answer the highlighted question", "u undo",
                            "e show the edited question", "⏎ go to the next case", "q quit",
                            "pgup/pgdn scroll the case", "g the guidelines"])
        await _plain_case(pilot, screen)
        # The new-answer prompt: its option keys, and esc.
        await pilot.press("3")
        await pilot.pause()
        assert isinstance(app.screen, AltLetterModal)
        await _help(pilot, ["is correct after the edit", "esc back to the gold-shift"])
        await pilot.press("escape")
        await pilot.pause()
        # A complete case.
        await pilot.press("1", "1")
        await pilot.pause()
        assert screen.active is None
        await _help(pilot, ["⏎ go to the next case", "n write a note"])
        # The note box: `?` is a character there, F1 opens the help.
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, NoteModal)
        await _help(pilot, ["esc close without saving"], keys=("f1",))
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, NoteModal)
        assert app.screen.query_one("#note-input").value.endswith("?")


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_help_on_a_rater_file(annotation_db, tmp_path, size):
    db = open_db(annotation_db.db_path)
    try:
        path = pack(db, SET_NAME, "alice", tmp_path / "alice.paw-rater",
                    annotation_db.carol).path
    finally:
        db.conn.close()
    conn = open_file(path)
    app = RaterFileApp(path, sign_in(conn, path, PASSPHRASE), conn)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, AnnotateScreen)
        await _help(pilot, ["1… answer the highlighted question", "s leave this case"])


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_help_on_the_coordinator_and_adjudication_screens(clinic_db, size):
    _label(clinic_db)
    app = CoordinatorApp(clinic_db.db_path, clinic_db.carol, CLINIC_SET)
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: getattr(app.screen, "report", None) is not None)
        assert isinstance(app.screen, CoordinatorScreen)
        await _help(pilot, ["a adjudicate", "k κ plot", "q quit"])
        await pilot.press("k")  # the κ plot
        await pilot.pause()
        await _help(pilot, ["↑↓ field"])
        await pilot.press("k")
        await pilot.press("a")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AdjudicateScreen)
        await _help(pilot, ["1… choose the final value", "] next disagreement",
                            "pgup/pgdn scroll the case", "esc leave the reason box"])
        await pilot.press("1")  # a value: the reason box has focus, `?` would be typed
        await pilot.pause()
        await _help(pilot, ["esc leave the reason box"], keys=("f1",))
