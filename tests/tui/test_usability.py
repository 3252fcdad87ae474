"""Issue 22 driven by Pilot on real stores: help where users look for it, the launch form's
defaults and in-place checks, no traceback from the welcome prompt, the run clock, the
Statistics screen's plots and record view at 80×24 and 120×36."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Input, OptionList, SelectionList

from tests.tui.helpers import screen_text, typed_fast, wait_until
from tests.tui.test_workbench import workbench_db  # noqa: F401 - the shared fixture
from workbench.tui.components.help_modal import HelpModal
from workbench.tui.components.launch_modal import SMALL_DEFAULTS, LaunchModal
from workbench.tui.live import LiveRun
from workbench.tui.widgets.figure_plot import FigurePlot
from workbench.tui.workbench_app import WorkbenchApp

SIZES = [(80, 24), (120, 36)]


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("key,screen_keys", [
    ("1", ["new audit", "resume", "cancel", "flips", "stats"]),
    ("2", ["flips/kept/all", "family", "arm", "search", "clear filters", "prev page"]),
    ("3", ["recompute", "table", "record", "other run"]),
])
async def test_question_mark_lists_every_key_of_the_screen(workbench_db, size, key,
                                                           screen_keys):
    app = WorkbenchApp(workbench_db)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.press(key)
        await pilot.pause()
        assert "? help" in screen_text(app)  # in the footer
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpModal)
        listed = [what for _, what in app.screen.rows]
        for expected in screen_keys:
            assert any(what.startswith(expected) for what in listed), (expected, listed)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpModal)
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpModal)
        await pilot.press("escape")


@pytest.mark.asyncio
async def test_the_welcome_prompt_on_a_missing_folder_ends_in_one_line(tmp_path, capsys):
    app = WorkbenchApp(str(tmp_path / "missing-folder" / "x.db"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
    assert app.return_code == 1
    out, err = capsys.readouterr()
    # The reason closes the app and is raised by `run_workbench` as a UserError, which
    # the CLI prints as its one line (an exit message was broken by rich at 80 columns).
    assert "\n" not in app.exit_error and app.exit_error.endswith("does not exist")
    assert "missing-folder" in app.exit_error
    assert "Traceback" not in out + err
    assert not (tmp_path / "missing-folder").exists()


async def opened(pilot, key: str, kind: type):
    """Press `key` and return the screen it opened, checked to be a `kind`."""
    await pilot.press(key)
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, kind), screen
    return screen


@pytest.mark.asyncio
async def test_the_launch_form_starts_small_checks_in_place_and_enter_does_not_launch(
        workbench_db):
    app = WorkbenchApp(workbench_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        form = await opened(pilot, "n", LaunchModal)
        for field, value in SMALL_DEFAULTS.items():
            assert form.query_one(f"#{field}", Input).value == value
        assert "[x] default" in screen_text(app) and "[ ] strict_medical@1" in screen_text(app)
        form.query_one("#operators", Input).focus()
        await pilot.press("end", "backspace", "backspace", "backspace", "backspace",
                          "backspace", "backspace", "backspace", "M", "9")
        await pilot.pause()
        assert "--operators: expected" in str(
            form.query_one("#operators-error").render())  # under the field, as typed
        await pilot.press("enter")  # enter moves on; it never launches
        await pilot.pause()
        assert app.live is None and isinstance(app.screen, LaunchModal)
        assert app.screen.focused is form.query_one("#limit", Input)
        await pilot.press("backspace", "x")
        await pilot.pause()
        assert "limit: expected a whole number, got 'x'" in str(
            form.query_one("#limit-error").render())
        templates = form.query_one("#templates", SelectionList)
        templates.focus()
        await pilot.press("down", "space")
        await pilot.pause()
        assert "[x] strict_medical@1" in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert app.live is None


def test_the_run_clock_stops_when_the_run_ends():
    from workbench.engine.events import AuditFinished

    live = LiveRun(name="r")
    live.apply(AuditFinished(audit="r", generated=3, job_counts={}, elapsed_s=1.0))
    first = live.snapshot().elapsed_s
    import time

    time.sleep(0.3)
    assert live.snapshot().elapsed_s == first
    assert live.snapshot().state == "finished"


def test_model_loading_is_said_in_words():
    from workbench.engine.events import StageStarted
    from workbench.models.events import ModelLoaded

    live = LiveRun(name="r")
    live.apply(StageStarted(stage="stage 1", model="default", to_generate=4))
    assert "loading default and running its batching self-check" in live.snapshot().message
    live.apply(ModelLoaded(name="default", seconds=2.5))
    assert "loaded in 2.5 s" in live.snapshot().message


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES)
async def test_statistics_plots_the_figures_and_shows_a_row_as_a_record(workbench_db, size):
    app = WorkbenchApp(workbench_db)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.press("3")
        await wait_until(pilot, lambda: app.screen.report is not None, seconds=60)
        screen = app.screen
        figures = [f for f in screen.report.figures if f.plot is not None]
        assert figures and screen.shown == "figure:0"  # the plane comes first
        plot = screen.query_one("#figure", FigurePlot)
        assert plot.display and plot.data.title.endswith("answer-flip plane")
        assert {s.label for s in plot.data.series} >= {"smol/cot", "qwen/cot"}
        text = screen_text(app)
        assert "FCS = 0.5 (chance)" in text and "┤" in text  # plotext's axis ticks
        screen.query_one("#sections", OptionList).highlighted = 1  # Table 3
        await pilot.pause()
        table = screen.query_one("#section-table", DataTable)
        assert table.fixed_columns == 1
        await pilot.press("v")  # the highlighted row as a record: every column visible
        await pilot.pause()
        text = screen_text(app)
        assert "row 1 of 2" in text
        header = [str(c.label) for c in table.columns.values()]
        # every column is on screen or a page key away (^d is in the footer while a
        # record is shown): Table 3 has more columns than 24 lines
        seen, pages = text, 0
        while not all(column in seen for column in header) and pages < 10:
            await pilot.press("ctrl+d")
            await pilot.pause()
            seen += screen_text(app)
            pages += 1
        for column in header:
            assert column in seen, column
        assert "^d more" in text or pages == 0
        await pilot.press(*["ctrl+u"] * pages)
        await pilot.pause()
        await pilot.press("down")
        await pilot.pause()
        assert "row 2 of 2" in screen_text(app) and "qwen/cot" in screen_text(app)


def _shuffle_store(tmp_path) -> str:
    from store.db import open_db
    from tests.builders import AuditBuilder

    path = str(tmp_path / "shuffle.db")
    db = open_db(path)
    b = AuditBuilder(db, audit="shuffle-audit")
    arm = b.arm("smol/cot")
    options = {"A": "Viral gastroenteritis", "B": "Intussusception", "C": "Acute appendicitis",
               "D": "Functional constipation"}
    q = b.item("q1", gold="C", options=options)
    b.baseline(arm, q, answer="A", option_probs={"A": 0.72, "B": 0.06, "C": 0.08, "D": 0.14})
    shuffled = {"A": options["B"], "B": options["A"], "C": options["D"], "D": options["C"]}
    b.perturbed(arm, q, operator_id="option_shuffle", family="shuffle", answer="D",
                options=shuffled, gold="D", role="shuffle",
                option_probs={"A": 0.35, "B": 0.07, "C": 0.19, "D": 0.39})
    db.conn.close()
    return path


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES)
async def test_a_shuffle_case_pairs_each_option_with_where_it_moved(tmp_path, size):
    path = _shuffle_store(tmp_path)
    item_options = {"A": "Viral gastroenteritis", "B": "Intussusception",
                    "C": "Acute appendicitis", "D": "Functional constipation"}
    app = WorkbenchApp(path)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.press("2")
        await wait_until(pilot, lambda: app.screen.page is not None and app.screen.page.rows)
        await pilot.press("enter")
        await pilot.pause()
        text = screen_text(app)
        assert "Options before → after the shuffle" in text
        # The original A (0.72 before) is paired with the letter it moved to, not with the
        # shuffled A; each before/after row is one option text.
        moved = {t: label for label, t in app.screen.case.options_after}
        for label, option in item_options.items():
            assert f"{label} → {moved[option]}" in text
        row = next(line for line in text.splitlines() if f"A → {moved[item_options['A']]}"
                   in line and "0.72" in line)
        after = dict(app.screen.case.probs_after)[moved[item_options["A"]]]
        assert f"{after:4.2f}" in row


@pytest.mark.asyncio
async def test_g_picks_a_family_from_a_list(workbench_db):
    from workbench.tui.components.pick_modal import PickModal

    app = WorkbenchApp(workbench_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("2")
        await wait_until(pilot, lambda: app.screen.values.get("families"))
        await pilot.press("g")
        await pilot.pause()
        assert isinstance(app.screen, PickModal)
        assert app.screen.values == ["F1", "F4", "M5"]
        await pilot.press("M", "enter")  # one letter jumps to M5
        await pilot.pause()
        assert app.screen.filter.families == ("M5",)
        assert "g family:M5" in screen_text(app)
        # The highlighted row in full under the table (the arm is cut in the table at 80).
        await wait_until(pilot, lambda: "smol/cot" in str(
            app.screen.query_one("#row-detail").render()) or "qwen/cot" in str(
            app.screen.query_one("#row-detail").render()))


@pytest.mark.asyncio
async def test_q_quits_inside_the_new_answer_prompt(annotation_db):
    from tests.tui.conftest import SET_NAME
    from tests.tui.helpers import events
    from tests.tui.test_annotate_screen import _start
    from workbench.tui.app import AnnotationApp
    from workbench.tui.components.alt_letter_modal import AltLetterModal

    app = AnnotationApp(annotation_db.db_path, annotation_db.alice, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _start(pilot)
        code = screen.current.code
        await pilot.press("3")
        await pilot.pause()
        assert isinstance(app.screen, AltLetterModal)
        assert "q quit" in screen_text(app)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code in (0, None) and not app.is_running
    # 'shifted' is stored with its new answer or not at all (issue 35: one shape whatever
    # the value), so quitting in the prompt stores nothing for this case.
    assert events(annotation_db.db_path, "alice") == []
    assert code


@pytest.mark.asyncio
async def test_keys_typed_off_the_sign_in_form_reach_no_screen_key(workbench_db):
    from workbench.tui.screens.coordination import CoordinationScreen

    app = WorkbenchApp(workbench_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        form = await opened(pilot, "5", CoordinationScreen)
        for _ in range(6):  # tab never leaves the form: it stops at the passphrase
            await pilot.press("tab")
            assert isinstance(app.screen.focused, Input)
        assert app.screen.focused is form.query_one("#passphrase")
        form.set_focus(None)  # off the inputs some other way (a click on the text)
        await pilot.press("1", "q")
        await pilot.pause()
        assert app.screen is form and app.is_running  # neither switched nor quit
        assert app.screen.focused is form.query_one("#name")  # back to the form


@pytest.mark.asyncio
async def test_the_import_form_keeps_its_format_and_offers_skip_bad_and_map(workbench_db,
                                                                           tmp_path):
    from textual.widgets import Checkbox, Select

    from workbench.tui.screens.models_data import ImportModal

    bad = tmp_path / "two.jsonl"
    bad.write_text('{"id": "x1", "question": "Q?", "options": {"A": "a", "B": "b"}, '
                   '"answer": "A"}\n{"id": "x2", "question": "Q?", "answer": "A"}\n',
                   encoding="utf-8")
    app = WorkbenchApp(workbench_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("4")
        await pilot.pause()
        modal = await opened(pilot, "i", ImportModal)
        modal.query_one("#format", Select).value = "jsonl"
        modal.query_one("#skip-bad", Checkbox).value = True
        modal.query_one("#path", Input).value = str(bad)
        modal.query_one("#path", Input).focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, ImportModal))
        await wait_until(pilot, lambda: "skipped 1 bad row" in " ".join(
            str(n.message) for n in app._notifications))
        await pilot.press("i")
        await pilot.pause()
        assert app.screen.query_one("#format", Select).value == "jsonl"  # not medqa again
        assert app.screen.query_one("#skip-bad", Checkbox).value is True


@pytest.mark.asyncio
async def test_the_launch_form_takes_fast_keys_in_their_own_fields(workbench_db):
    # Keys queued at once (tmux send-keys, a paste, a fast typist): on the old form the
    # focus moved only after the operators field had taken the keys that followed the
    # enter, so "M4<enter>5" read "M45" there (the issue's `M4_negation_a1`).
    app = WorkbenchApp(workbench_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        form = await opened(pilot, "n", LaunchModal)
        operators = form.query_one("#operators", Input)
        form.set_focus(operators)
        operators.select_all()
        await pilot.pause()
        typed_fast(app, "M4\r5\t1\t")
        await pilot.pause(0.5)
        assert [form.query_one(f"#{f}", Input).value for f in ("operators", "limit", "seed")] \
            == ["M4", "5", "1"]
        assert app.screen.focused is form.query_one("#max-tokens", Input)


@pytest.mark.asyncio
async def test_the_import_form_takes_fast_keys_in_their_own_fields(workbench_db):
    from workbench.tui.screens.models_data import ImportModal

    app = WorkbenchApp(workbench_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        form = ImportModal()
        answers = []
        app.push_screen(form, answers.append)
        await pilot.pause()
        assert form.focused is form.query_one("#path", Input)
        typed_fast(app, "data/x.jsonl\tmine\r")
        await pilot.pause(0.5)
        assert answers and answers[0][1:3] == ("data/x.jsonl", "mine")
