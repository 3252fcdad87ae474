"""Pilot tests of the adjudication screen: reached from the coordinator app, the case in
view, both raters' labels and notes, values as keys, refusals in place (issue 15, item 3)."""

from __future__ import annotations

import pytest

from tests.tui.clinic import SET_NAME, kind_of
from tests.tui.helpers import query, screen_text, wait_until
from workbench.tui.app import CoordinatorApp
from workbench.tui.screens.adjudicate import AdjudicateScreen
from workbench.tui.screens.coordinator import CoordinatorScreen
from workbench.tui.widgets.decision_panel import DecisionPanel

pytestmark = pytest.mark.asyncio

# Labels by case kind: (alice, bob). Disagreements: gold shift on the long MCQ (no_shift
# vs shifted B->A... shifted to A), harm on the harm case, gold shift on the chain case.
PLAN = {
    "long_mcq": ({"gold_shift": "no_shift", "validity": "valid", "note": "age alone"},
                 {"gold_shift": "shifted", "gold_shift_alt": "A", "validity": "valid",
                  "note": "old patient: think again"}),
    "yes_no": ({"gold_shift": "no_shift", "validity": "valid", "harm": "harmful"},
               {"gold_shift": "no_shift", "validity": "valid", "harm": "harmful"}),
    "harm": ({"gold_shift": "no_shift", "validity": "valid", "harm": "harmful"},
             {"gold_shift": "no_shift", "validity": "valid", "harm": "neutral"}),
    "chain": ({"gold_shift": "no_shift", "validity": "valid", "chain_registration": "yes"},
              {"gold_shift": "ambiguous", "validity": "valid", "chain_registration": "yes"}),
}


def _label(clinic_db, plan: dict | None = None) -> dict[str, str]:
    """Record `plan` (default PLAN) through the core; returns kind -> case code."""
    from annotate.events import record_label, start_session
    from annotate.sets.annotation_set import rater_queue
    from store import open_db

    db = open_db(clinic_db.db_path)
    try:
        codes = {kind_of(v): v.code for v in rater_queue(db, SET_NAME, clinic_db.alice)}
        for index, person in enumerate((clinic_db.alice, clinic_db.bob)):
            session = start_session(db, person, SET_NAME)
            for kind, labels in (plan or PLAN).items():
                for field, value in labels[index].items():
                    record_label(db, person, session, codes[kind], field, value)
    finally:
        db.conn.close()
    return codes


async def _adjudication(pilot, app) -> AdjudicateScreen:
    await wait_until(pilot, lambda: getattr(app.screen, "report", None) is not None)
    assert isinstance(app.screen, CoordinatorScreen)
    await pilot.press("a")
    await pilot.pause()
    assert isinstance(app.screen, AdjudicateScreen)
    return app.screen


def _adjudications(db_path: str) -> list[tuple]:
    return query(db_path, "SELECT c.code, a.field, a.value, a.reason FROM adjudications a "
                          "JOIN annotation_cases c ON c.id = a.case_id ORDER BY a.id")


async def test_the_case_both_raters_and_the_values_are_on_screen(clinic_db):
    codes = _label(clinic_db)
    app = CoordinatorApp(clinic_db.db_path, clinic_db.carol, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _adjudication(pilot, app)
        assert {(d.code, d.field) for d in screen.queue} == {
            (codes["long_mcq"], "gold_shift"), (codes["harm"], "harm"),
            (codes["chain"], "gold_shift")}
        # Walk to the long MCQ's decision and read what is on screen.
        while screen.current.code != codes["long_mcq"]:
            await pilot.press("right_square_bracket")
        text = screen_text(app)
        assert "74-year-old" in text                          # the edited question
        assert "B  Pulmonary embolism  ◆ gold" in text         # options with the gold
        assert "note: age alone" in text and "note: old patient: think again" in text
        assert "alice  no_shift" in text and "bob    shifted" in text
        assert "new answer A" in text                          # bob's other labels
        assert "1 no_shift  2 ambiguous  3 shifted" in text    # the values as keys
        # The harm decision shows the model's answers.
        while screen.current.code != codes["harm"]:
            await pilot.press("right_square_bracket")
        text = screen_text(app)
        assert "before the edit: C  Acute appendicitis" in text
        assert "1 harmful  2 appropriate  3 neutral  4 unsure" in text


async def test_invalid_value_and_empty_reason_are_refused_in_place(clinic_db):
    codes = _label(clinic_db)
    app = CoordinatorApp(clinic_db.db_path, clinic_db.carol, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _adjudication(pilot, app)
        while screen.current.code != codes["chain"]:
            await pilot.press("right_square_bracket")
        await pilot.press("7")                       # not a value of gold_shift
        await pilot.pause()
        assert app.screen is screen                  # no dialog, no exit
        assert "'7' is not a value of gold_shift" in screen_text(app)
        await pilot.press("2")                       # ambiguous; the reason input opens
        await pilot.pause()
        panel = screen.query_one(DecisionPanel)
        assert screen.focused is panel.reason and screen.chosen == "ambiguous"
        await pilot.press("enter")                   # no reason: refused by the core
        await pilot.pause()
        assert "not recorded: reason" in screen_text(app)
        assert _adjudications(clinic_db.db_path) == []
        await pilot.press(*"mild pain, same vessel", "enter")
        await pilot.pause()
        assert _adjudications(clinic_db.db_path) == [
            (codes["chain"], "gold_shift", "ambiguous", "mild pain, same vessel")]
        assert f"recorded gold_shift = ambiguous for {codes['chain']}" in screen_text(app)
        # The raters' own labels are untouched.
        # (25 labels, and the companion of each of the 8 gold-shift labels.)
        assert query(clinic_db.db_path, "SELECT COUNT(*) FROM label_events")[0][0] == 33


async def test_final_shifted_asks_for_the_new_answer_with_option_keys(clinic_db):
    codes = _label(clinic_db)
    app = CoordinatorApp(clinic_db.db_path, clinic_db.carol, SET_NAME)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _adjudication(pilot, app)
        while screen.current.code != codes["long_mcq"]:
            await pilot.press("right_square_bracket")
        await pilot.press("3", *"older patient, PE less likely", "enter")
        await pilot.pause()
        decision = screen.current
        assert (decision.code, decision.field, decision.follow_up) == (
            codes["long_mcq"], "gold_shift_alt", True)
        assert "A  C  D  E" in screen_text(app)     # option keys, the gold B left out
        await pilot.press("b")                      # the gold: refused in place
        await pilot.pause()
        assert "'b' is not a value of gold_shift_alt" in screen_text(app)
        await pilot.press("a", *"pneumothorax fits an older smoker", "enter")
        await pilot.pause()
        assert _adjudications(clinic_db.db_path)[-2:] == [
            (codes["long_mcq"], "gold_shift", "shifted", "older patient, PE less likely"),
            (codes["long_mcq"], "gold_shift_alt", "A", "pneumothorax fits an older smoker")]
        await pilot.press("escape")                 # back to the coordinator's view
        await pilot.pause()
        assert isinstance(app.screen, CoordinatorScreen)


async def test_a_rater_gets_no_adjudication_screen(clinic_db):
    app = CoordinatorApp(clinic_db.db_path, clinic_db.alice, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("escape", "a")            # close the role error, try anyway
        await pilot.pause()
        assert not isinstance(app.screen, AdjudicateScreen)


async def test_a_chain_decision_keeps_the_edit_in_view_at_80x24(clinic_db):
    # The raters disagree on chain registration: the decision scrolls the case to the
    # model's long reasoning, and the edit ("crushing" -> "mild") must still be on screen.
    plan = {**PLAN, "chain": (PLAN["chain"][0],
                              {**PLAN["chain"][1], "chain_registration": "no"})}
    codes = _label(clinic_db, plan)
    app = CoordinatorApp(clinic_db.db_path, clinic_db.carol, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _adjudication(pilot, app)
        while (screen.current.code, screen.current.field) != (codes["chain"],
                                                               "chain_registration"):
            await pilot.press("right_square_bracket")
        await pilot.pause()
        await pilot.pause()
        from workbench.tui.widgets.case_panels import CasePanels

        panels = screen.query_one(CasePanels)
        chain = panels.panel("chain")
        question = panels.panel("question")
        # The case was scrolled to the reasoning: the question panel (with the diff) is
        # above the pane's visible part ...
        assert panels.scroll_y > 0
        assert question.virtual_region.bottom <= panels.scroll_y
        assert chain.virtual_region.y < panels.scroll_y + panels.scrollable_content_region.height
        # ... and the pinned edit line is on screen, with both words of the edit.
        edit = screen.query_one("#edit")
        assert edit.region.height >= 1 and screen.region.contains_region(edit.region)
        lines = screen_text(app).splitlines()[edit.region.y:edit.region.bottom]
        shown = "\n".join(lines)
        assert "“crushing” → “mild”" in shown, shown
        assert "e question" in screen_text(app)  # the whole question is one key away


async def test_the_last_decision_stays_readable_at_80_columns(clinic_db):
    # The walk at 80x24 ended on "… · 4 decided now · recorded validity =" (cut): with
    # nothing left, the status wraps and names the value and the case decided last.
    codes = _label(clinic_db)
    app = CoordinatorApp(clinic_db.db_path, clinic_db.carol, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _adjudication(pilot, app)
        reasons = iter(("first reason", "second reason", "third reason", "fourth reason"))
        while screen.current is not None:
            await pilot.press("1", *next(reasons), "enter")
            await pilot.pause()
            if screen.current is not None and screen.current.follow_up:
                await pilot.press("escape")  # not reached with value 1 (no shift)
        last_case = _adjudications(clinic_db.db_path)[-1][0]
        status = screen.query_one("#status")
        lines = screen_text(app).splitlines()[status.region.y:status.region.bottom]
        shown = " ".join(line.strip() for line in lines)
        assert "nothing left to adjudicate" in shown and "3 decided now" in shown, shown
        assert f"for {last_case}" in shown and "esc back" in shown, shown
        assert last_case in codes.values()
