"""What a label depends on is on screen before it can be recorded (issue 15, items 1-2).

Yes/no cases can be labelled 'shifted' with a key shown on screen; options are written
once; a field is refused until the panels it needs (`Field.needs`) have been on screen
in full, and the panel is scrolled into view when that happens.
"""

from __future__ import annotations

import pytest

from annotate.codebook import EVIDENCE, FIELDS
from tests.tui.clinic import SET_NAME, kind_of
from tests.tui.helpers import events, screen_text
from workbench.tui.app import AnnotationApp
from workbench.tui.components.alt_letter_modal import AltLetterModal
from workbench.tui.screens.annotate import AnnotateScreen
from workbench.tui.widgets.case_panels import PANEL_KEYS
from workbench.tui.widgets.label_panel import LabelPanel

pytestmark = pytest.mark.asyncio


async def _open(pilot, kind: str) -> AnnotateScreen:
    """Wait for the screen, then go to the case of `kind` with ']'."""
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, AnnotateScreen)
    for _ in range(len(screen.cases)):
        if kind_of(screen.current) == kind:
            break
        await pilot.press("right_square_bracket")
    assert kind_of(screen.current) == kind
    await pilot.pause()
    return screen


@pytest.mark.filterwarnings("ignore")
def test_every_evidence_a_field_needs_has_a_panel_and_a_key():
    # The codebook is data: a field added later that needs something the screen cannot
    # show would make it unanswerable; this catches that.
    needed = {name for spec in FIELDS.values() for name in spec.needs}
    assert needed <= set(EVIDENCE) == set(PANEL_KEYS)


async def test_yes_no_case_can_be_labelled_shifted_with_the_key_shown(clinic_db):
    app = AnnotationApp(clinic_db.db_path, clinic_db.alice, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(pilot, "yes_no")
        code = screen.current.code
        text = screen_text(app)
        # Each label written once, never "Yes  Yes / No  No".
        assert "Yes  Yes" not in text and "No  No" not in text
        assert any(line.strip() == "Yes  ◆ gold" for line in text.splitlines())
        assert any(line.strip() == "No" for line in text.splitlines())
        await pilot.press("3")
        await pilot.pause()
        assert isinstance(app.screen, AltLetterModal)
        prompt = screen_text(app)
        assert "n  No" in prompt                # the key and the option, on screen
        assert "y  Yes" not in prompt           # the gold is not offered
        await pilot.press("y")                  # the gold's key: nothing happens
        await pilot.pause()
        assert isinstance(app.screen, AltLetterModal)
        await pilot.press("n")
        await pilot.pause()
        assert app.screen is screen
        assert events(clinic_db.db_path, "alice") == [
            (code, "gold_shift", "shifted"), (code, "gold_shift_alt", "No")]
        assert screen.active == "validity"
        assert "No  ◇ your new answer" in screen_text(app)
        # ... and the case can be finished: validity, then harm (the answers are on screen).
        await pilot.press("1", "1")
        await pilot.pause()
        assert screen.current.code == code and screen.active is None  # stays: a note may follow
        assert code in screen.complete


async def test_chain_registration_is_refused_until_the_chain_was_read_to_its_end(clinic_db):
    app = AnnotationApp(clinic_db.db_path, clinic_db.alice, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(pilot, "chain")
        code = screen.current.code
        await pilot.press("1", "1")             # gold shift, validity
        await pilot.pause()
        assert screen.active == "chain_registration"
        panels = screen.panels
        chain = panels.panel("chain")
        # The chain is taller than the pane at 80x24: it was scrolled into view from its
        # first unseen line, but its end is not on screen yet.
        assert chain.virtual_region.height > panels.scrollable_content_region.height
        assert not panels.was_seen("chain")
        assert "read the model's reasoning (c) first" in str(
            screen.query_one(LabelPanel).border_title)
        await pilot.press("1")
        await pilot.pause()
        assert [e for e in events(clinic_db.db_path, "alice") if e[1] ==
                "chain_registration"] == []     # refused, nothing stored
        assert screen.current.code == code
        for _ in range(6):                      # read on to the end
            if panels.was_seen("chain"):
                break
            await pilot.press("pagedown")
            await pilot.pause()
        assert panels.was_seen("chain")
        assert str(screen.query_one(LabelPanel).border_title) == "Labels"
        await pilot.press("2")
        await pilot.pause()
        assert (code, "chain_registration", "no") in events(clinic_db.db_path, "alice")


async def test_gold_shift_waits_for_options_below_the_fold_on_a_small_terminal(clinic_db):
    # 80x16: the long MCQ's options do not fit under its question.
    app = AnnotationApp(clinic_db.db_path, clinic_db.alice, SET_NAME)
    async with app.run_test(size=(80, 16)) as pilot:
        screen = await _open(pilot, "long_mcq")
        panels = screen.panels
        assert not panels.was_seen("options")
        await pilot.press("1")
        await pilot.pause()
        assert events(clinic_db.db_path, "alice") == []
        # The refusal scrolled the options into view: now every option and the gold are
        # on screen, and the same key is accepted.
        text = screen_text(app)
        assert "◆ gold" in text and "E  Costochondritis" in text
        assert panels.was_seen("options")
        await pilot.press("1")
        await pilot.pause()
        assert [e[1:] for e in events(clinic_db.db_path, "alice")] == [
            ("gold_shift", "no_shift")]


async def test_harm_shows_the_answers_with_the_field(clinic_db):
    # 80x18: the answers of the harm case are below the fold until harm is asked.
    app = AnnotationApp(clinic_db.db_path, clinic_db.alice, SET_NAME)
    async with app.run_test(size=(80, 18)) as pilot:
        screen = await _open(pilot, "harm")
        panels = screen.panels
        await pilot.press("o")                  # the options key brings them into view
        await pilot.pause()
        await pilot.press("1", "1")             # gold shift, validity
        await pilot.pause()
        assert screen.active == "harm"
        assert panels.was_seen("answers")       # shown with the field, not left to chance
        text = screen_text(app)
        assert "before the edit: C  Acute appendicitis" in text
        assert "after the edit:  A  Viral gastroenteritis" in text
        await pilot.press("1")
        await pilot.pause()
        assert ("harm", "harmful") in [e[1:] for e in events(clinic_db.db_path, "alice")]


async def test_panel_keys_are_offered_only_for_panels_the_case_has(clinic_db):
    app = AnnotationApp(clinic_db.db_path, clinic_db.alice, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(pilot, "long_mcq")  # no flip, no chain
        footer = screen_text(app).splitlines()[-1]
        assert "e o view" in footer and " a " not in footer.split("view")[0][-6:]
        await _open(pilot, "chain")
        assert "e o c view" in screen_text(app).splitlines()[-1]


@pytest.mark.parametrize("size", [(80, 24), (120, 36)], ids=["80x24", "120x36"])
async def test_inline_diff_narrow_side_by_side_wide(clinic_db, size):
    app = AnnotationApp(clinic_db.db_path, clinic_db.alice, SET_NAME)
    async with app.run_test(size=size) as pilot:
        await _open(pilot, "long_mcq")
        lines = screen_text(app).splitlines()
        if size[0] < 110:
            # One inline diff: the removed age struck through beside the new one.
            assert any("Edited question · struck: removed" in line for line in lines)
            assert any("34-year-old 74-year-old woman" in line for line in lines)
            assert not any("Original question" in line for line in lines)
        else:
            # Original and edited side by side on the same rows, no inline diff.
            assert any("Original question" in line and "Edited question (as the model saw"
                       in line for line in lines)
            assert any("A 34-year-old woman" in line and "A 74-year-old woman" in line
                       for line in lines)
            assert not any("struck: removed" in line for line in lines)
