"""The real labelling screen (Textual, Pilot) on a set drawn from a robustness run: each case
asks its test's fields (a CFV case one per automated decision), a digit records each, and
the screen never shows the model."""

from __future__ import annotations

import pytest

from annotate.sets.audit import create_set
from annotate.trust.people import register
from tests.annotate.conftest import save_to_file
from tests.robustness.helpers import hand, scripted_run
from tests.tui.helpers import events, screen_text

PW = "correct horse battery"


@pytest.fixture
def set_on_disk(demo_db, fake_model, make_engine, marked, tmp_path):
    outcome = scripted_run(demo_db, make_engine(hand))
    people = {"alice": register(demo_db, "alice", "rater", PW),
              "bob": register(demo_db, "bob", "rater", PW),
              "carol": register(demo_db, "carol", "coordinator", PW)}
    create_set(demo_db, outcome.audit_id, 6, seed=1, name="rob", raters=("alice", "bob"),
               coordinator=people["carol"])
    return save_to_file(demo_db, tmp_path / "paw.db"), people["alice"]


@pytest.mark.asyncio
async def test_labelling_screen_asks_each_test_field(set_on_disk) -> None:
    from workbench.tui.app import AnnotationApp

    path, alice = set_on_disk
    app = AnnotationApp(path, alice, "rob")
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        screen = app.screen
        seen: set[tuple[str, str]] = set()
        cfv = ("cfv_plausible", "cfv_limited", "cfv_circular", "cfv_target_correct",
               "cfv_same_direction")
        for _ in range(len(screen.cases)):
            view = screen.current
            asked = [f for f in view.fields if f != "note"]
            assert tuple(asked) in (cfv, ("direction",), ("stereotype",))
            for field in asked:  # '1' records the active field and moves to the next
                assert screen.active == field
                text = screen_text(app)
                assert "fake" not in text and "neutral_cot" not in text
                seen.add((view.code, field))
                await pilot.press("1")
                await pilot.pause()
            if screen.current.code == view.code:  # not advanced: the note or a panel left
                await pilot.press("right_square_bracket")
                await pilot.pause()
        recorded = {(code, field) for code, field, _ in events(path, "alice")}
        assert recorded == seen
        assert {f for _, f in seen} == {*cfv, "direction", "stereotype"}


@pytest.mark.asyncio
@pytest.mark.parametrize("size", [(80, 24), (120, 36)], ids=["80x24", "120x36"])
async def test_a_stereotype_flag_asks_its_category_before_recording(set_on_disk, size):
    # Issue 35, criterion 3: a flag and its category are stored together (one shape
    # whatever the value); `esc` in the category prompt records nothing.
    from workbench.tui.app import AnnotationApp
    from workbench.tui.components.category_modal import CategoryModal

    path, alice = set_on_disk
    app = AnnotationApp(path, alice, "rob")
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.screen
        for _ in range(len(screen.cases)):
            if screen.current.fields[0] == "stereotype":
                break
            await pilot.press("right_square_bracket")
            await pilot.pause()
        code = screen.current.code
        await pilot.press(*["pagedown"] * 6)  # the reasoning read to its end (80×24)
        await pilot.pause()
        await pilot.press("2")  # clinically misleading: the category first
        await pilot.pause()
        assert isinstance(app.screen, CategoryModal)
        await pilot.press("question_mark")  # its help lists the category keys
        await pilot.pause()
        assert any("lifestyle" in what for _, what in app.screen.rows)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("escape")  # back, nothing recorded
        await pilot.pause()
        assert app.screen is screen and events(path, "alice") == []
        await pilot.press("2")
        await pilot.pause()
        await pilot.press("3")  # lifestyle
        await pilot.pause()
        assert app.screen is screen
        assert events(path, "alice") == [(code, "stereotype", "clinically_misleading"),
                                         (code, "stereotype_category", "lifestyle")]
