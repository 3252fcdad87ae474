"""Issue 38 item 7's defects, each through the real app under Pilot on a real store: a new
dataset's name shown whole without `r`, the Runs list keeping its time column at 80
columns, distinct κ-plot entries in the Statistics list, and model registration showing
progress."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Input

from tests.tui.helpers import screen_text, wait_until
from tests.tui.test_workbench import workbench_db  # noqa: F401  (the fixture)
from workbench.tui.workbench_app import WorkbenchApp

pytestmark = pytest.mark.asyncio

LONG_NAME = "medmcqa-validation-subset-2024"


async def test_a_new_dataset_name_shows_whole_without_refresh(workbench_db, tmp_path):  # noqa: F811
    data = tmp_path / f"{LONG_NAME}.jsonl"
    data.write_text('{"question": "Fever and stiff neck?", "options": {"A": "Meningitis", '
                    '"B": "Migraine"}, "answer_idx": "A"}\n', encoding="utf-8")
    app = WorkbenchApp(workbench_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("4")
        await wait_until(pilot, lambda: "dataset(s)" in screen_text(app))
        await pilot.press("i")
        await pilot.pause()
        app.screen.query_one("#path", Input).value = str(data)
        await pilot.press("enter")
        table = app.screen.query_one("#datasets-table", DataTable)
        await wait_until(pilot, lambda: table.row_count == 3)
        # No key pressed: the name is drawn in full (it was cut to the old width until `r`).
        await wait_until(pilot, lambda: LONG_NAME in screen_text(app), seconds=5)


@pytest.mark.parametrize("attempt", range(3))
async def test_runs_keeps_its_time_column_at_80(workbench_db, attempt):  # noqa: F811
    app = WorkbenchApp(workbench_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.screen.runs)
        await wait_until(pilot, lambda: "48/48" in screen_text(app), seconds=5)
        lines = screen_text(app).splitlines()
        at = next(n for n, line in enumerate(lines) if line.strip().startswith("id "))
        header, row = lines[at], lines[at + 1]
        assert header.rstrip().endswith("time") and "chest-audit" in row
        assert row.rstrip().endswith("0:00:00")


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_kappa_plot_entries_read_differently(annotation_db, monkeypatch, size):
    # The coordinator's Statistics list had eight κ entries all reading "Plot: κ over
    # paired labels…" (the caption cut to the list's width).
    from textual.widgets import OptionList

    from tests.tui.helpers import case_codes, label_everything
    from tests.tui.test_coordinator_screen import ALICE, BOB
    from tests.tui.test_signin_gate import at_the_gate, sign_in
    from tests.tui.conftest import PASSPHRASE

    codes = case_codes(annotation_db.db_path)
    for person, values in ((annotation_db.alice, ALICE), (annotation_db.bob, BOB)):
        label_everything(annotation_db.db_path, person,
                         {c: {"gold_shift": v, "validity": "valid"}
                          for c, v in zip(codes, values, strict=True)})
    async with at_the_gate(annotation_db.db_path, monkeypatch, size) as (app, pilot):
        await sign_in(pilot, "carol", PASSPHRASE)
        await wait_until(pilot, lambda: not app.locked)
        await pilot.press("3")
        await wait_until(pilot, lambda: app.screen.report is not None, seconds=60)
        options = app.screen.query_one("#sections", OptionList)
        kappa = [str(options.get_option_at_index(i).prompt)
                 for i in range(options.option_count)
                 if str(options.get_option_at_index(i).id).startswith("figure:")
                 and str(options.get_option_at_index(i).prompt).startswith("κ")]
        assert len(kappa) >= 4, kappa  # gold_shift and validity, each full and binary
        assert len(set(kappa)) == len(kappa), kappa
        assert "κ gold_shift" in kappa and "κ₂ gold_shift" in kappa


async def test_registering_a_model_shows_its_progress(workbench_db):  # noqa: F811
    # Registering a GGUF (a 253 MB one takes 8-12 s on 2 cores) showed nothing until done.
    from workbench.models.registry import embedded_model_path

    app = WorkbenchApp(workbench_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("4")
        await wait_until(pilot, lambda: "dataset(s)" in screen_text(app))
        screen = app.screen
        await pilot.press("a")
        await pilot.pause()
        app.screen.query_one("#path", Input).value = str(embedded_model_path())
        app.screen.query_one("#name", Input).value = "smol-again"
        await pilot.press("enter")
        table = screen.query_one("#models-table", DataTable)
        await wait_until(pilot, lambda: table.row_count == 4, seconds=120)
    seen = screen.progress_seen
    assert seen[0].startswith("registering ") and seen[1].startswith("reading the GGUF")
    hashing = [line for line in seen if line.startswith("hashing ")]
    assert len(hashing) >= 2 and hashing[-1].endswith("(100%)…"), seen
    assert any(line.startswith("asking llama.cpp") for line in seen), seen
