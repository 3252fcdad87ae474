"""`paw annotate --file FILE`: the labelling screen on a rater's own file (issue 21, item 1).

The same screen and keys as on the shared store: labels land in the file at the keypress,
undo and resume work, nothing on screen names a model, an operator or the other rater, and
the coordinator's merge brings them into the store.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from annotate.raterfile.file import open_file, pack, sign_in
from annotate.raterfile.labelling import FileLabelling
from annotate.raterfile.merge import merge
from store import open_db
from tests.tui.conftest import PASSPHRASE, SET_NAME
from tests.tui.helpers import all_text, events
from tests.tui.test_blinding import _leaks
from workbench.tui.app import RaterFileApp
from workbench.tui.screens.annotate import AnnotateScreen

pytestmark = pytest.mark.asyncio


@pytest.fixture
def rater_file(annotation_db, tmp_path) -> str:
    db = open_db(annotation_db.db_path)
    try:
        return pack(db, SET_NAME, "alice", tmp_path / "alice.paw-rater",
                    annotation_db.carol).path
    finally:
        db.conn.close()


def file_events(path: str) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT code, field, value FROM events ORDER BY seq").fetchall()
    finally:
        conn.close()


def app_for(path: str) -> RaterFileApp:
    conn = open_file(path)
    return RaterFileApp(path, sign_in(conn, path, PASSPHRASE), conn)


@pytest.mark.parametrize("size", [(80, 24), (120, 36)], ids=["80x24", "120x36"])
async def test_labelling_a_rater_file_with_the_same_screen(annotation_db, rater_file, size):
    app = app_for(rater_file)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AnnotateScreen) and len(screen.cases) == 6
        assert _leaks(all_text(app)) == []
        code = screen.current.code
        await pilot.press("1")            # gold_shift = no_shift, stored in the file now
        # With its empty new answer (the same events whatever the value).
        assert file_events(rater_file) == [(code, "gold_shift", "no_shift"),
                                           (code, "gold_shift_alt", None)]
        await pilot.press("u")            # undo: new events, the pair taken back together
        await pilot.pause()
        assert file_events(rater_file)[-2:] == [(code, "gold_shift", None),
                                                (code, "gold_shift_alt", None)]
        await pilot.press("2")
        await pilot.pause()
        assert screen.current.labels_dict.get("gold_shift") == "ambiguous"
        assert _leaks(all_text(app)) == []
    assert events(annotation_db.db_path, "alice") == []  # nothing went to the store
    # Resume: a new app on the same file starts where she stopped, her label kept.
    again = app_for(rater_file)
    async with again.run_test(size=size) as pilot:
        await pilot.pause()
        resumed = again.screen
        assert resumed.current.code == code
        assert resumed.current.labels_dict == {"gold_shift": "ambiguous"}
    db = open_db(annotation_db.db_path)
    try:
        assert merge(db, rater_file, annotation_db.carol).imported == 6  # 3, with their new answers
    finally:
        db.conn.close()
    assert events(annotation_db.db_path, "alice") == [
        (code, "gold_shift", "no_shift"), (code, "gold_shift", None),
        (code, "gold_shift", "ambiguous")]


async def test_the_coordinator_app_watches_a_folder_of_rater_files(annotation_db, rater_file):
    from annotate.raterfile.labelling import FileLabelling
    from tests.tui.helpers import screen_text, wait_until
    from workbench.tui.app import CoordinatorApp

    conn = open_file(rater_file)
    labelling = FileLabelling(conn, sign_in(conn, rater_file, PASSPHRASE))
    labelling.start()
    for view in labelling.queue()[:2]:
        labelling.record(view.code, "gold_shift", "no_shift")
    app = CoordinatorApp(annotation_db.db_path, annotation_db.carol, SET_NAME,
                         watch=str(Path(rater_file).parent))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.screen.report is not None, seconds=30)
        alice = next(p for p in app.screen.report.progress if p.name == "alice")
        assert alice.started == 2 and "refused" not in screen_text(app)
        labelling.record(labelling.queue()[2].code, "gold_shift", "ambiguous")  # she goes on
        await wait_until(pilot, lambda: next(p for p in app.screen.report.progress
                                             if p.name == "alice").started == 3, seconds=30)
    conn.close()


async def test_a_note_with_terminal_sequences_is_shown_escaped(annotation_db, rater_file):
    """Issue 34, criterion 6, in the UI: the note is stored as typed, and what the screen
    draws holds `\\x1b]52…` as text, never the escape character itself."""
    from workbench.tui.components.note_modal import NoteModal

    note = "see chart \x1b]52;c;cm0gLXJmIH4K\x07\x1b[2Jok"
    conn = open_file(rater_file)
    labelling = FileLabelling(conn, sign_in(conn, rater_file, PASSPHRASE))
    labelling.start()
    code = labelling.queue()[0].code
    labelling.record(code, "note", note)
    conn.close()
    assert file_events(rater_file) == [(code, "note", note)]  # stored as typed
    app = app_for(rater_file)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, NoteModal)
        drawn = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "see chart \\x1b]52;c;cm0gLXJmIH4K\\x07\\x1b[2Jok" in drawn, drawn
        assert "\x1b" not in drawn and "\x07" not in drawn
