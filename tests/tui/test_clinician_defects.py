"""The smaller defects clinicians met at a real terminal (issue 35, criterion 6), each
pinned at 80×24 with Pilot on a real store."""

from __future__ import annotations

import pytest

from tests.tui.conftest import SET_NAME
from tests.tui.helpers import events, screen_text
from workbench.tui.app import AnnotationApp
from workbench.tui.components.alt_letter_modal import AltLetterModal
from workbench.tui.components.guidelines_modal import GuidelinesModal
from workbench.tui.screens.annotate import AnnotateScreen

pytestmark = pytest.mark.asyncio


async def _plain_case(pilot, screen: AnnotateScreen) -> None:
    await pilot.press(*["left_square_bracket"] * screen.index)
    for _ in range(len(screen.cases)):
        view = screen.current
        if not view.ask_harm and not view.ask_chain_registration:
            return
        await pilot.press("right_square_bracket")
    raise AssertionError("no plain case in the fixture")


def _footer(app) -> str:
    return screen_text(app).splitlines()[-1]


async def test_the_raters_footer_fits_80_columns_in_every_state(annotation_db):
    app = AnnotationApp(annotation_db.db_path, annotation_db.alice, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        footers = []
        for _ in range(len(screen.cases)):  # every kind of case, the widest view group too
            footers.append(_footer(app))
            await pilot.press("right_square_bracket")
            await pilot.pause()
        await _plain_case(pilot, screen)
        await pilot.press("1", "1")  # complete: `⏎ next` joins the footer
        await pilot.pause()
        assert screen.active is None
        footers.append(_footer(app))
        assert "⏎ next" in footers[-1]
        for footer in footers:
            for legend in ("1… label", "u undo", "n note", "view", "g guide", "q quit"):
                assert legend in footer, (legend, footer)
        assert any("e o a c view" in footer for footer in footers)


async def test_the_new_answer_prompt_footer_offers_only_its_own_keys(annotation_db):
    app = AnnotationApp(annotation_db.db_path, annotation_db.alice, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        await _plain_case(pilot, screen)
        code = screen.current.code
        await pilot.press("3")
        await pilot.pause()
        assert isinstance(app.screen, AltLetterModal)
        footer = _footer(app)
        assert "esc back to gold shift" in footer
        assert "view" not in footer and "c chain" not in footer, footer
        await pilot.press("c")  # records option C, as the prompt says
        await pilot.pause()
        assert events(annotation_db.db_path, "alice")[-2:] == [
            (code, "gold_shift", "shifted"), (code, "gold_shift_alt", "C")]


async def test_g_shows_the_codebook_beside_the_case(annotation_db):
    app = AnnotationApp(annotation_db.db_path, annotation_db.alice, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("g")
        await pilot.pause()
        assert isinstance(app.screen, GuidelinesModal)
        text = screen_text(app)
        assert "2 borderline: odd or strained but answerable" in text
        assert "Gold shift — Does the edit change which answer is correct?" in text
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, AnnotateScreen)


def test_paw_annotate_help_prints_the_codebook():
    from click.testing import CliRunner

    from workbench.cli import cli

    text = CliRunner().invoke(cli, ["annotate", "--help"], env={"COLUMNS": "80"}).output
    assert "2 borderline: odd or strained but answerable" in text
    assert "3 unclear: cannot tell (dropped from the rule validation)" in text
    assert max(len(line) for line in text.splitlines()) <= 80


@pytest.mark.parametrize("first", [False, True], ids=["a-key", "adjudicate-screen"])
async def test_adjudicating_a_chain_decision_shows_the_reasoning_at_80x24(clinic_db, first):
    from tests.tui.helpers import wait_until
    from tests.tui.test_adjudicate_screen import PLAN, _label
    from workbench.tui.app import CoordinatorApp
    from workbench.tui.screens.adjudicate import AdjudicateScreen
    from workbench.tui.widgets.case_panels import CasePanels

    # The chain field is the only disagreement: the screen opens on it.
    agree = {kind: (labels[0], labels[0]) for kind, labels in PLAN.items()}
    plan = dict(agree, chain=({"gold_shift": "no_shift", "validity": "valid",
                               "chain_registration": "yes"},
                              {"gold_shift": "no_shift", "validity": "valid",
                               "chain_registration": "no"}))
    codes = _label(clinic_db, plan)
    # `paw adjudicate --screen` opens on it at once; from the coordinator's view, `a`.
    app = CoordinatorApp(clinic_db.db_path, clinic_db.carol, "clinic", adjudicate=first)
    async with app.run_test(size=(80, 24)) as pilot:
        if first:
            await wait_until(pilot, lambda: isinstance(app.screen, AdjudicateScreen))
        else:
            await wait_until(pilot, lambda: getattr(app.screen, "report", None) is not None)
            await pilot.press("a")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AdjudicateScreen)
        assert (screen.current.code, screen.current.field) == (codes["chain"],
                                                               "chain_registration")
        await pilot.pause()
        text = screen_text(app)
        chain = screen.query_one(CasePanels).panel("chain")
        assert chain.display
        # Lines of the reasoning itself are on screen, above the decision panel.
        assert "Inferior leads look at the" in text.split("Chain registration ·")[0], text



async def test_the_coordinators_table_keeps_kappa_and_ac1_in_view_at_80(annotation_db):
    from tests.tui.helpers import case_codes, label_everything, wait_until
    from workbench.tui.app import CoordinatorApp
    from workbench.tui.widgets.agreement_table import AgreementTable

    codes = case_codes(annotation_db.db_path)
    label_everything(annotation_db.db_path, annotation_db.alice,
                     {c: {"gold_shift": v} for c, v in zip(codes, ["no_shift", "no_shift",
                      "ambiguous", "ambiguous", "no_shift", "no_shift"])})
    label_everything(annotation_db.db_path, annotation_db.bob,
                     {c: {"gold_shift": v} for c, v in zip(codes, ["no_shift", "ambiguous",
                      "ambiguous", "no_shift", "no_shift", "no_shift"])})
    app = CoordinatorApp(annotation_db.db_path, annotation_db.carol, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.screen.query_one(AgreementTable).row_count > 0
                         and str(app.screen.query_one(AgreementTable).get_cell(
                             "gold_shift|full", "n")) == "6")
        await pilot.pause()
        lines = screen_text(app).splitlines()
        header = next(line for line in lines if " κ " in line and "field" in line)
        assert "AC1" in header, header  # was scrolled off once numbers widened the columns
        row = next(line for line in lines if "gold_shift" in line and "3-way" in line)
        assert "0.25" in row and "0.57" in row, row  # κ and AC1 (hand-worked in
        # tests/tui/test_coordinator_screen.py)
