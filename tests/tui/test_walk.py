"""Defects met walking `paw ui` as a newcomer in tmux (issue 22, criterion 5), pinned on real
stores with Pilot: an unedited question shown twice (the options and the chain's edit pushed
down at 80×24), the inspector keeping its first run after another was chosen on Runs, and an
empty flip list that did not say which key widens it."""

from __future__ import annotations

import pytest

from store.db import open_db
from tests.builders import AuditBuilder
from tests.tui.helpers import screen_text, wait_until
from workbench.tui.workbench_app import WorkbenchApp

SIZES = [(80, 24), (120, 36)]

QUESTION = ("A 58-year-old man presents with crushing substernal chest pain. Which coronary "
            "artery is most likely occluded?")


def _store(tmp_path) -> str:
    """Run 1 'first-audit': one F-block edit and one option shuffle, no flips.
    Run 2 'second-audit': one M-block flip."""
    path = str(tmp_path / "walk.db")
    db = open_db(path)
    b = AuditBuilder(db, audit="first-audit")
    arm = b.arm("smol/cot")
    options = {"A": "Right coronary artery", "B": "Left circumflex artery",
               "C": "Left anterior descending artery", "D": "Left main coronary artery"}
    q = b.item("q1", gold="A", options=options)
    b.baseline(arm, q, answer="A", output="Step 1: the inferior leads. So A.")
    b.perturbed(arm, q, operator_id="F1_truncate_50", family="F1", intent="D", answer="A",
                output="Step 1: the inferior")
    shuffled = {"A": options["B"], "B": options["C"], "C": options["A"], "D": options["D"]}
    b.perturbed(arm, q, operator_id="option_shuffle", family="shuffle", answer="C",
                options=shuffled, gold="C", role="shuffle")
    b2 = AuditBuilder(db, audit="second-audit")
    arm2 = b2.arm("smol/cot")
    q2 = b2.item("q2", gold="A")
    b2.baseline(arm2, q2, answer="A")
    b2.perturbed(arm2, q2, operator_id="M5_severity_a", family="M5", intent="D", answer="B",
                 old="acute", new="chronic")
    db.conn.close()
    return path


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES)
async def test_an_unedited_question_is_shown_once_with_the_options_on_the_first_screen(
        tmp_path, size):
    app = WorkbenchApp(_store(tmp_path))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.press("down")  # run 1 (the list selects the newest)
        await pilot.pause()
        app.focus_audit = 1
        await pilot.press("2")
        await wait_until(pilot, lambda: app.screen.page is not None)
        await pilot.press("f", "f")  # flips → kept → all edits
        await wait_until(pilot, lambda: app.screen.page is not None
                         and len(app.screen.page.rows) == 2)
        for step, title in ((0, "the edit is in the chain below"),
                            (1, "the options were shuffled")):
            if step == 0:
                await pilot.press("enter")
            else:
                await pilot.press("n")
            await pilot.pause()
            text = screen_text(app)
            assert title in text
            assert "Edited question" not in text
            # Once, titled "Question", why it is not edited on the pane's bottom border.
            assert text.count("─ Question ─") == 1 and text.count("(not edited:") == 1
            # The options panel starts on the first screen, even at 80×24.
            assert "Options" in text


@pytest.mark.asyncio
async def test_the_inspector_follows_the_run_chosen_on_the_runs_screen(tmp_path):
    app = WorkbenchApp(_store(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await wait_until(pilot, lambda: len(app.screen.runs) == 2)
        await pilot.press("2")
        await wait_until(pilot, lambda: app.screen.page is not None)
        assert "second-audit" in screen_text(app)
        await pilot.press("1")
        await pilot.pause()
        await pilot.press("up")  # run 1
        await pilot.pause()
        assert app.focus_audit == 1
        await pilot.press("2")
        await wait_until(pilot, lambda: app.screen.audit_id == 1 and
                         app.screen._drawn_request == app.screen._request)
        await pilot.pause()
        assert "run 1 · 0 flips match" in screen_text(app)


@pytest.mark.asyncio
async def test_an_empty_flip_list_says_which_key_widens_it(tmp_path):
    app = WorkbenchApp(_store(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.focus_audit = 1
        await pilot.press("2")
        await wait_until(pilot, lambda: app.screen.page is not None)
        await pilot.pause()
        text = screen_text(app)
        assert "0 flips match · refreshed" in text and "· f flips/kept/all edits" in text
        await pilot.press("f", "f")
        await wait_until(pilot, lambda: app.screen.page is not None
                         and len(app.screen.page.rows) == 2)
        await pilot.pause()
        assert "2 edits match" in screen_text(app)
