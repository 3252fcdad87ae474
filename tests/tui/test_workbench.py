"""`paw ui`: the auditor's workbench driven by Pilot against real stores.

Runs are launched through the real form and the real engine; the fake backend stands in for
llama.cpp except in the one test marked `model`, which launches a short run of the embedded
SmolLM2 from the form and watches it finish.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, OptionList, Select, SelectionList

from store.db import open_db
from store.runs import find_run, list_runs
from tests.builders import AuditBuilder
from tests.tui.helpers import screen_text, wait_until
from workbench.models.fake import FakeBackend
from workbench.tui.workbench_app import WorkbenchApp

pytestmark = pytest.mark.asyncio

CHAIN = ("Step 1: The patient has 3 findings.\nStep 2: Fever points to the first option.\n"
         "Step 3: Therefore the first option.\nAnswer: A")


def fake_factory(delay: float = 0.0):
    """A backend factory for runs launched from the UI: every CoT answer is `CHAIN`."""

    def respond(prompt, sampler):
        if delay:
            time.sleep(delay)
        if "Answer with" in prompt[-200:]:
            return " A"
        return CHAIN

    return lambda model: FakeBackend(respond)


@pytest.fixture
def workbench_db(tmp_path) -> str:
    """A real WAL file: one hand-built two-arm audit and the demo set."""
    from workbench.datasets.demo import import_demo

    path = str(tmp_path / "paw.db")
    db = open_db(path)
    b = AuditBuilder(db, audit="chest-audit")
    arms = [b.arm("smol/cot"), b.arm("qwen/cot")]
    for i in range(6):
        q = b.item(f"q{i}")
        for n, arm in enumerate(arms):
            b.baseline(arm, q, answer="A")
            b.perturbed(arm, q, operator_id="M5_severity_a", family="M5", intent="D",
                        answer="B" if (i + n) % 2 else "A", old="acute", new="chronic")
            b.perturbed(arm, q, operator_id="F1_truncate_50", family="F1", intent="D",
                        answer="A")
            b.perturbed(arm, q, operator_id="F4_insert_a", family="F4", intent="P",
                        answer="C" if i == 2 else "A")
    import_demo(db)
    db.conn.close()
    return path


async def _fill_form(pilot, *, operators="M2", limit="1", max_tokens="32",
                     models=("default",)) -> None:
    screen = pilot.app.screen
    screen.query_one("#dataset", Select).value = "demo"
    chosen = screen.query_one("#models", SelectionList)
    chosen.deselect_all()
    for name in models:
        chosen.select(name)
    screen.query_one("#operators", Input).value = operators
    screen.query_one("#limit", Input).value = limit
    screen.query_one("#max-tokens", Input).value = max_tokens
    await pilot.pause()


async def test_runs_screen_lists_runs_with_status_and_blocks(workbench_db):
    app = WorkbenchApp(workbench_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: "chest-audit" in screen_text(app)
                         and "24/24" in screen_text(app))
        text = screen_text(app)
        assert "chest-audit" in text and "finished" in text and "48/48" in text
        # The selected run's blocks, with the report command.
        assert "baseline" in text and "12/12" in text and "24/24" in text
        assert "paw report --audit chest-audit" in text
        assert "1-5 screens" in text and "new audit" in text  # the key legend
        await pilot.press("enter")  # the highlighted run's flips
        await wait_until(pilot, lambda: app.current_mode == "flips"
                         and app.screen.page is not None)
        assert "chest-audit" in screen_text(app)


async def test_launch_from_the_form_runs_and_lists_the_audit(workbench_db):
    app = WorkbenchApp(workbench_db, backend_factory=fake_factory())
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await pilot.press("n")
        await _fill_form(pilot)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: app.live is not None and not app.live.active,
                         seconds=60)
        snapshot = app.live.snapshot()
        assert snapshot.state == "finished", snapshot.message
        await wait_until(pilot, lambda: snapshot.name in screen_text(app))
    db = open_db(workbench_db)
    run = find_run(db, snapshot.name)
    assert (run.kind, run.dataset, run.models, run.status) == ("audit", "demo", ("default",),
                                                               "finished")
    assert run.jobs_done == run.jobs_total > 0


async def test_a_bad_form_is_refused_in_place(workbench_db):
    app = WorkbenchApp(workbench_db, backend_factory=fake_factory())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("n")
        await _fill_form(pilot, operators="M9")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "error: --operators" in screen_text(app)
        assert app.live is None  # nothing launched; the form stays open
        await pilot.press("escape")
        await pilot.pause()
        assert "chest-audit" in screen_text(app)


async def test_cancel_keeps_what_finished_and_resume_completes(workbench_db):
    app = WorkbenchApp(workbench_db, backend_factory=fake_factory(delay=0.15))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("n")
        await _fill_form(pilot, operators="M", limit="3")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: app.live.snapshot().generated >= 2, seconds=60)
        await pilot.press("c")
        await wait_until(pilot, lambda: not app.live.active, seconds=60)
        name = app.live.snapshot().name
        assert app.live.snapshot().state == "stopped"
        db = open_db(workbench_db)
        stopped = find_run(db, name)
        assert stopped.status == "interrupted"
        assert 0 < stopped.jobs_done < stopped.jobs_total
        await _resume_second_row(app, pilot)
        await wait_until(pilot, lambda: app.live.snapshot().state == "finished", seconds=90)
    done = find_run(open_db(workbench_db), name)
    assert done.status == "finished" and done.jobs_done == done.jobs_total
    assert done.generations >= stopped.generations


async def test_statistics_screen_shows_report_sections_and_the_plane(workbench_db):
    app = WorkbenchApp(workbench_db)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await pilot.press("3")
        await wait_until(pilot, lambda: app.screen.report is not None, seconds=60)
        options = app.screen.query_one("#sections", OptionList)
        # One option per section, plus one per figure with plot data (the FCS plane).
        assert options.option_count == len(app.screen.report.sections) + 1
        text = screen_text(app)
        # The plane comes first, drawn by plotext: its legend, and each arm's exact point.
        assert "FCS = 0.5 (chance)" in text and "smol/cot: AFR_D" in text
        options.highlighted = 1  # Table 3
        await pilot.pause()
        table = app.screen.query_one("#section-table", DataTable)
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        assert [r[0] for r in rows] == ["smol/cot", "qwen/cot"]
        assert "Table 3" in screen_text(app)


async def test_models_and_data_screen_lists_and_refuses_a_bad_model(workbench_db, tmp_path):
    app = WorkbenchApp(workbench_db)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await pilot.press("4")
        await wait_until(pilot, lambda: "dataset(s)" in screen_text(app))
        text = screen_text(app)
        assert "default" in text and "SmolLM2-135M-Instruct.Q4_1.gguf" in text
        assert "demo" in text and "78" in text
        bogus = tmp_path / "not-a-model.gguf"
        bogus.write_text("hello")
        await pilot.press("a")
        await pilot.pause()
        app.screen.query_one("#path", Input).value = str(bogus)
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Could not register" in screen_text(app))
        assert "not-a-model.gguf" in screen_text(app)


async def test_import_from_the_ui_uses_the_cli_validation(workbench_db, tmp_path):
    good = tmp_path / "mine.jsonl"
    good.write_text('{"question": "Fever and stiff neck?", "options": {"A": "Meningitis", '
                    '"B": "Migraine"}, "answer_idx": "A"}\n')
    app = WorkbenchApp(workbench_db)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await pilot.press("4")
        await pilot.pause()
        await pilot.press("i")
        await pilot.pause()
        app.screen.query_one("#path", Input).value = str(good)
        await pilot.press("enter")
        await wait_until(pilot, lambda: "mine" in screen_text(app))
    db = open_db(workbench_db)
    assert db.execute("SELECT COUNT(*) FROM items i JOIN datasets d ON d.id = i.dataset_id "
                      "WHERE d.name = 'mine'").fetchone()[0] == 1


async def test_a_missing_database_is_offered_with_the_demo_set(tmp_path):
    path = tmp_path / "new.db"
    app = WorkbenchApp(str(path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "No PAW database yet" in screen_text(app)
        assert not path.exists()  # nothing is created before the auditor says so
        await pilot.press("y")
        await wait_until(pilot, lambda: path.exists())
    db = open_db(path)
    assert db.execute("SELECT COUNT(*) FROM items").fetchone()[0] == 78


async def test_declining_creates_nothing(tmp_path):
    path = tmp_path / "new.db"
    app = WorkbenchApp(str(path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause()
    assert not path.exists()


async def test_quitting_mid_run_keeps_every_finished_generation(workbench_db):
    app = WorkbenchApp(workbench_db, backend_factory=fake_factory(delay=0.1))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("n")
        await _fill_form(pilot, operators="M", limit="3")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: app.live.snapshot().generated >= 2, seconds=60)
        generated = app.live.snapshot().generated
        name = app.live.snapshot().name
        await pilot.press("q")  # asks first: a run is working
        await pilot.pause()
        from workbench.tui.components.confirm_modal import ConfirmModal

        assert isinstance(app.screen, ConfirmModal) and app.live.active
        await pilot.press("n")  # stay: the run goes on
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmModal) and app.live.active
        await pilot.press("q", "y")
    # The worker stops after the generation in flight; what it finished is stored.
    for _ in range(100):
        if not app.live.active:
            break
        time.sleep(0.05)
    db = open_db(workbench_db)
    run = find_run(db, name)
    assert run.generations >= generated
    assert run.status == "interrupted"


@pytest.mark.model
async def test_a_short_real_run_launched_from_the_form(workbench_db):
    """The embedded SmolLM2 through llama.cpp, launched and watched from the UI."""
    app = WorkbenchApp(workbench_db, threads=2)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await pilot.press("n")
        await _fill_form(pilot, operators="M2_sex", limit="1", max_tokens="24")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: app.live is not None and not app.live.active,
                         seconds=900)
        snapshot = app.live.snapshot()
        assert snapshot.state == "finished", snapshot.message
        assert snapshot.generated >= 2 and snapshot.model == "default"
    runs = {r.name: r for r in list_runs(open_db(workbench_db))}
    assert runs[snapshot.name].status == "finished"


@pytest.mark.model
async def test_cancel_stops_a_short_real_run_short_of_its_total_and_r_resumes_it(
        workbench_db):
    """`c` on a small run of the embedded SmolLM2 (batched decoding, every job of a stage
    in flight at once): the run stops at the next decode step, interrupted, and `r`
    finishes it. (The step-level stop itself, which failed before, is pinned exactly in
    tests/models/test_batching.py; here the timing of the key press is the real one.)"""
    app = WorkbenchApp(workbench_db, threads=2)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await pilot.press("n")
        await _fill_form(pilot, operators="M2_sex", limit="2", max_tokens="48")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: app.live is not None and
                         app.live.snapshot().generated >= 1, seconds=900)
        await pilot.press("c")
        await wait_until(pilot, lambda: not app.live.active, seconds=600)
        snapshot = app.live.snapshot()
        assert snapshot.state == "stopped", snapshot.message
        stopped = find_run(open_db(workbench_db), snapshot.name)
        assert stopped.status == "interrupted"
        assert 0 < stopped.jobs_done < stopped.jobs_total
        await _resume_second_row(app, pilot)
        await wait_until(pilot, lambda: app.live.snapshot().state in ("finished", "failed"),
                         seconds=900)
        assert app.live.snapshot().state == "finished", app.live.snapshot().message
    done = find_run(open_db(workbench_db), snapshot.name)
    assert done.status == "finished" and done.jobs_done == done.jobs_total


@pytest.mark.filterwarnings("ignore::pytest.PytestWarning")

async def _resume_second_row(app, pilot) -> None:
    """Select the interrupted run (the second of two rows) on Runs and resume it with r."""
    table = app.screen.query_one("#runs", DataTable)
    await wait_until(pilot, lambda: table.row_count == 2)
    table.move_cursor(row=1)
    await pilot.pause()
    await pilot.press("r")


async def test_the_rater_app_has_no_route_to_auditor_screens():
    # async only because the module marks every test asyncio (a sync one warns)
    from workbench.tui.app import AnnotationApp, CoordinatorApp

    for app_class in (AnnotationApp, CoordinatorApp):
        assert not app_class.MODES, app_class
        keys = {b.key for b in app_class.BINDINGS}
        assert not keys & {"1", "2", "3", "4"}
    source = Path("workbench/tui/app.py").read_text()
    assert "workbench_app" not in source and "screens.runs" not in source


async def test_flip_inspector_filters_pages_and_opens_a_case(workbench_db):
    app = WorkbenchApp(workbench_db)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await pilot.press("2")
        screen = app.screen
        await wait_until(pilot, lambda: screen.page is not None)
        flips = screen.page.total
        # Hand count from the fixture: M5 flips where (i + arm) is odd (6 of 12 edits), and
        # F4 on q2 for both arms; F1 never flips.
        assert flips == 8
        assert f"{flips} flips match" in screen_text(app)
        await pilot.press("i")  # intent: D
        await wait_until(pilot, lambda: screen.filter.intents == ("D",) and
                         screen.page.total == 6)
        await pilot.press("f")  # kept answers
        await wait_until(pilot, lambda: screen.filter.flipped is False and
                         screen.page.total == 24 - 6)
        await pilot.press("x")
        await wait_until(pilot, lambda: screen.page.total == 8)
        await pilot.press("slash")
        await pilot.pause()
        screen.query_one("#search", Input).value = "F4_insert"
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.page.total == 2)
        await pilot.press("enter")  # open the case
        await wait_until(pilot, lambda: getattr(app.screen, "case", None) is not None)
        case_screen = app.screen
        first = case_screen.case.id
        assert case_screen.case.operator_id == "F4_insert_a"
        await wait_until(pilot, lambda: "FLIPPED" in screen_text(app))  # drawn
        text = screen_text(app)
        assert "◆ gold" in text and "(not edited: the edit is in the chain below)" in text
        await pilot.press("n")
        await pilot.pause()
        assert case_screen.case.id != first
        await pilot.press("y")
        await pilot.pause()
        assert app.clipboard == str(case_screen.case.id)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen


def _signer(pilot, form):
    """Types a name and passphrase into a sign-in form (the gate) and presses enter."""

    async def sign_in(name: str, passphrase: str) -> None:
        form.query_one("#name", Input).value = name
        form.query_one("#passphrase", Input).value = passphrase
        form.query_one("#passphrase", Input).focus()
        await pilot.press("enter")

    return sign_in


async def test_coordination_needs_the_coordinator_passphrase(annotation_db, monkeypatch):
    # With people registered the workbench starts on its sign-in gate (screens/signin.py;
    # the lock-out after three wrong passphrases: tests/tui/test_signin_gate.py).
    from tests.tui.conftest import PASSPHRASE, SET_NAME
    from workbench import signin_attempts
    from workbench.tui.screens import signin

    monkeypatch.setattr(signin_attempts, "FAILURE_DELAYS_S", (0.0,))
    app = WorkbenchApp(annotation_db.db_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await pilot.press("5")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, signin.SignInScreen)  # no coordination before sign-in
        sign_in = _signer(pilot, form)
        await sign_in("alice", PASSPHRASE)  # a rater, with her right passphrase
        await wait_until(pilot, lambda: "paw annotate --rater alice" in screen_text(app))
        assert form.failures.count == 0 and app.person is None
        await sign_in("carol", "wrong passphrase")
        await wait_until(pilot, lambda: form.failures.count == 1)
        assert "2 attempt(s)" in screen_text(app) and app.person is None
        await sign_in("carol", PASSPHRASE)
        await wait_until(pilot, lambda: not app.locked)
        await pilot.press("5")
        await pilot.pause()
        assert str(app.screen.query_one("#set", Select).value) == SET_NAME
        app.screen.query_one("#passphrase", Input).focus()
        await pilot.press("enter")  # signed in at the gate: not asked again
        await wait_until(pilot, lambda: type(app.screen).__name__ == "CoordinatorScreen")
        assert app.person.name == "carol" and app.set_name == SET_NAME
        await wait_until(pilot, lambda: "raters:" in screen_text(app), seconds=30)
