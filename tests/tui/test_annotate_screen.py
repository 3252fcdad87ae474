"""Pilot tests of the labelling screen: keys pressed -> label events in the store."""

from __future__ import annotations

import pytest

from annotate.sets.cases import CaseView
from tests.tui.conftest import SET_NAME
from tests.tui.helpers import events, query, screen_text
from workbench.tui.app import AnnotationApp
from workbench.tui.components.alt_letter_modal import AltLetterModal
from workbench.tui.components.note_modal import NoteModal
from workbench.tui.screens.annotate import AnnotateScreen
from workbench.tui.widgets.label_panel import LabelPanel

pytestmark = pytest.mark.asyncio


async def _start(pilot) -> AnnotateScreen:
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, AnnotateScreen)
    return screen


async def _goto(pilot, screen: AnnotateScreen, wanted) -> CaseView:
    """Back to the first case, then press ']' until the case on screen satisfies `wanted`."""
    await pilot.press(*["left_square_bracket"] * screen.index)
    for _ in range(len(screen.cases)):
        if wanted(screen.current):
            return screen.current
        await pilot.press("right_square_bracket")
    assert wanted(screen.current), "no case in the fixture matches"
    return screen.current


async def test_digits_record_events_and_auto_advance_through_a_harm_case(annotation_db):
    app = AnnotationApp(annotation_db.db_path, annotation_db.alice, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _start(pilot)
        # A flip on a destructive M3/M5 edit without chain question: gold, validity, harm.
        case = await _goto(pilot, screen, lambda v: v.ask_harm and not v.ask_chain_registration)
        start = screen.index
        assert screen.active == "gold_shift"
        await pilot.press("2")            # gold_shift 2 = ambiguous
        assert screen.active == "validity"
        await pilot.press("1")            # validity 1 = valid
        assert screen.active == "harm"
        await pilot.press("4")            # harm 4 = unsure -> all set: the case stays
        await pilot.pause()
        assert events(annotation_db.db_path, "alice") == [
            (case.code, "gold_shift", "ambiguous"),
            (case.code, "validity", "valid"),
            (case.code, "harm", "unsure"),
        ]
        assert screen.index == start and screen.active is None
        assert "Case complete — enter/] next case · n add a note" in screen_text(app)
        # 1 of the 6 fixture cases is now complete.
        assert "1 / 6 labelled" in screen_text(app)
        await pilot.press("1")            # a digit by habit: nothing recorded, no move
        await pilot.pause()
        assert len(events(annotation_db.db_path, "alice")) == 3 and screen.index == start
        await pilot.press("enter")        # enter moves on
        assert screen.index == (start + 1) % len(screen.cases)


async def test_a_note_can_follow_the_last_required_label(annotation_db):
    app = AnnotationApp(annotation_db.db_path, annotation_db.alice, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _start(pilot)
        case = await _goto(pilot, screen, lambda v: not v.ask_harm
                           and not v.ask_chain_registration)
        start = screen.index
        await pilot.press("1", "1")       # gold shift, validity: the last required field
        await pilot.pause()
        assert screen.current.code == case.code  # not advanced: room for a note
        assert "⏎ next" in screen_text(app)  # the key that moves on, in the footer
        await pilot.press("n")
        assert isinstance(app.screen, NoteModal)
        await pilot.press(*"odd wording", "enter")
        await pilot.pause()
        # The note is stored on the case just labelled, at its key, and the case still shows.
        assert events(annotation_db.db_path, "alice") == [
            (case.code, "gold_shift", "no_shift"), (case.code, "validity", "valid"),
            (case.code, "note", "odd wording")]
        assert screen.current.code == case.code and screen.index == start
        assert "odd wording" in str(screen.query_one(LabelPanel).content)
        await pilot.press("enter")
        await pilot.pause()
        assert screen.current.code != case.code
        assert screen.current.labels_dict == {}  # the next case: nothing carried over


async def test_harm_field_appears_only_on_cases_that_ask_it(annotation_db):
    app = AnnotationApp(annotation_db.db_path, annotation_db.alice, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _start(pilot)
        seen = set()
        for _ in screen.cases:
            view = screen.current
            panel = str(screen.query_one(LabelPanel).content)
            assert ("Harm of the flip" in panel) == view.ask_harm
            assert ("Chain registration" in panel) == view.ask_chain_registration
            # The model's answers are shown for flips only.
            assert ("before the edit" in screen_text(app)) == view.flipped
            seen.add((view.ask_harm, view.ask_chain_registration))
            await pilot.press("right_square_bracket")
        # The fixture covers plain, harm-only, chain-only and harm+chain cases.
        assert seen == {(False, False), (True, False), (False, True), (True, True)}

        # A case without harm: gold + validity complete it; no harm event is ever written.
        case = await _goto(pilot, screen, lambda v: not v.ask_harm
                           and not v.ask_chain_registration)
        await pilot.press("1", "1")
        await pilot.pause()
        assert [e for e in events(annotation_db.db_path, "alice") if e[0] == case.code] == [
            (case.code, "gold_shift", "no_shift"), (case.code, "validity", "valid")]
        assert screen.current.code == case.code and screen.active is None  # complete


async def test_undo_restores_previous_value_with_a_new_event(annotation_db):
    app = AnnotationApp(annotation_db.db_path, annotation_db.alice, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _start(pilot)
        code = screen.current.code
        await pilot.press("1")            # gold_shift = no_shift
        await pilot.press("u")            # undo -> gold_shift cleared again
        await pilot.pause()
        assert screen.current.code == code
        assert screen.active == "gold_shift"
        assert "gold_shift" not in screen.current.labels_dict
        await pilot.press("2", "ctrl+z")  # ambiguous, then undo with ctrl+z
        await pilot.pause()
        # Append-only: four labels, the undos carry the restored value (None) and undoes_id;
        # each came with its empty new answer, and its undo with that one's undo.
        undoes = [r[0] for r in query(annotation_db.db_path,
                                      "SELECT undoes_id IS NOT NULL FROM label_events "
                                      "ORDER BY id")]
        assert [e[1:] for e in events(annotation_db.db_path, "alice")] == [
            ("gold_shift", "no_shift"), ("gold_shift", None), ("gold_shift", "ambiguous"),
            ("gold_shift", None)] and undoes == [0, 0, 1, 1, 0, 0, 1, 1]
        await pilot.press("u")            # nothing left to undo: no new event
        await pilot.pause()
        assert len(query(annotation_db.db_path, "SELECT id FROM label_events")) == 8


async def test_skip_and_navigation_record_nothing(annotation_db):
    app = AnnotationApp(annotation_db.db_path, annotation_db.alice, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _start(pilot)
        assert screen.index == 0
        await pilot.press("s")
        assert screen.index == 1
        await pilot.press("right", "right_square_bracket")
        assert screen.index == 3
        await pilot.press("left", "left_square_bracket")
        assert screen.index == 1
        await pilot.press("left", "left")  # clamps at the first case
        assert screen.index == 0
        assert events(annotation_db.db_path, "alice") == []
        # Letters other than the command keys record nothing outside the letter prompt.
        await pilot.press("c", "b", "9")
        await pilot.pause()
        assert events(annotation_db.db_path, "alice") == []


async def test_shifted_opens_letter_prompt_and_records_the_letter(annotation_db):
    app = AnnotationApp(annotation_db.db_path, annotation_db.alice, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _start(pilot)
        code = screen.current.code
        await pilot.press("3")            # shifted -> the prompt opens
        await pilot.pause()
        assert isinstance(app.screen, AltLetterModal)
        await pilot.press("a")            # A is the gold: not offered, nothing happens
        await pilot.press("1")            # digits mean nothing inside the prompt
        await pilot.pause()
        assert isinstance(app.screen, AltLetterModal)
        await pilot.press("c")
        await pilot.pause()
        assert app.screen is screen
        assert events(annotation_db.db_path, "alice") == [
            (code, "gold_shift", "shifted"), (code, "gold_shift_alt", "C")]
        assert screen.active == "validity"
        assert "your new answer" in screen_text(app)


async def test_escape_from_letter_prompt_leaves_gold_shift_to_choose_again(annotation_db):
    app = AnnotationApp(annotation_db.db_path, annotation_db.alice, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _start(pilot)
        code = screen.current.code
        await pilot.press("3", "escape")
        await pilot.pause()
        assert app.screen is screen and screen.active == "gold_shift"
        await pilot.press("1")            # change the mind: no_shift, then on to validity
        await pilot.pause()
        # esc recorded nothing: 'shifted' and its new answer are stored together or not at
        # all (annotate.labels.COMPANIONS), so only no_shift is.
        assert events(annotation_db.db_path, "alice") == [(code, "gold_shift", "no_shift")]
        assert screen.active == "validity"
        assert "gold_shift_alt" not in screen.current.fields


async def test_note_is_recorded_from_the_note_input(annotation_db):
    app = AnnotationApp(annotation_db.db_path, annotation_db.alice, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _start(pilot)
        code = screen.current.code
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, NoteModal)
        await pilot.press(*"odd stem", "enter")
        await pilot.pause()
        assert app.screen is screen
        assert events(annotation_db.db_path, "alice") == [(code, "note", "odd stem")]
        assert screen.active == "gold_shift"  # the note does not move the active field
        await pilot.press("n", "escape")     # cancel writes nothing
        await pilot.pause()
        assert len(events(annotation_db.db_path, "alice")) == 1


async def test_session_resumes_at_first_unlabelled_case_and_keeps_other_raters_apart(
        annotation_db):
    from annotate.events import record_label, start_session
    from annotate.sets.annotation_set import rater_queue
    from store import open_db

    db = open_db(annotation_db.db_path)
    first = rater_queue(db, SET_NAME, annotation_db.alice)[0]
    session = start_session(db, annotation_db.alice, SET_NAME)
    for field, value in [("gold_shift", "no_shift"), ("validity", "valid"),
                         *[(f, "1") for f in first.fields if f in ("harm", "chain_registration")]]:
        record_label(db, annotation_db.alice, session, first.code, field, value)
    db.conn.close()

    app = AnnotationApp(annotation_db.db_path, annotation_db.alice, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _start(pilot)
        assert screen.index == 1
        assert "1 / 6 labelled" in screen_text(app)
    # Bob's own session starts from zero: alice's labels are not his.
    app = AnnotationApp(annotation_db.db_path, annotation_db.bob, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _start(pilot)
        assert "0 / 6 labelled" in screen_text(app)
        assert all(v.my_labels == () for v in screen.cases)


async def test_layout_fits_80x24_with_labels_and_key_legend_visible(annotation_db):
    app = AnnotationApp(annotation_db.db_path, annotation_db.alice, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _start(pilot)
        await _goto(pilot, screen, lambda v: v.ask_harm and v.ask_chain_registration)
        panel = screen.query_one(LabelPanel)
        # The tallest label panel (title rule, question, gold, validity, harm, chain, note)
        # is fully on screen above the footer.
        assert panel.region.height == 7 and panel.region.bottom <= 23
        text = screen_text(app)
        lines = text.splitlines()
        assert len(lines) == 24 and max(len(line) for line in lines) <= 80
        for legend in ("u undo", "n note", "q quit", "[] case", "e o a c view", "g guide"):
            assert legend in lines[-1], legend
        assert "1 no_shift" in text  # the active field's keys are spelled out


async def test_posted_messages_match_the_stored_events(annotation_db):
    from workbench.tui.messages import CaseShown, LabelRecorded, LabelUndone

    posted = []
    app = AnnotationApp(annotation_db.db_path, annotation_db.alice, SET_NAME)
    async with app.run_test(size=(80, 24), message_hook=posted.append) as pilot:
        screen = await _start(pilot)
        code = screen.current.code
        await pilot.press("1", "3", "u")  # no_shift, invalid, undo the invalid
        await pilot.pause()
    # The hook sees a message at each node it bubbles through: keep each message once.
    posted = list({id(m): m for m in posted}.values())
    recorded = [(m.code, m.field, m.value) for m in posted if isinstance(m, LabelRecorded)]
    undone = [(m.code, m.field, m.restored) for m in posted if isinstance(m, LabelUndone)]
    assert recorded == [(code, "gold_shift", "no_shift"), (code, "validity", "invalid")]
    assert undone == [(code, "validity", None)]
    # Each message names its label's event; gold shift's empty new answer (event 2) is
    # written with it and posts nothing.
    stored = query(annotation_db.db_path,
                   "SELECT id FROM label_events ORDER BY id")
    ids = [m.event_id for m in posted if isinstance(m, (LabelRecorded, LabelUndone))]
    assert ids == [r[0] for r in stored if r[0] != 2] and len(stored) == 4
    assert not any(isinstance(m, CaseShown) for m in posted)  # never left the first case
