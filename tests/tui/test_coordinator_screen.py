"""Pilot tests of the coordinator screen: labels written from outside -> agreement redrawn."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.tui.conftest import PASSPHRASE, SET_NAME
from tests.tui.helpers import case_codes, label_everything, screen_text, wait_until
from workbench.tui.app import CoordinatorApp
from workbench.tui.components.error_modal import ErrorModal
from workbench.tui.screens.coordinator import CoordinatorScreen
from workbench.tui.widgets.agreement_table import AgreementTable

pytestmark = pytest.mark.asyncio

ROOT = Path(__file__).resolve().parents[2]

# Gold-shift labels by case (codes sorted), rows alice, columns bob:
#   alice: N N A A N N      bob: N A A N N N        (N = no_shift, A = ambiguous)
#   table            bob N  bob A
#     alice N          3      1
#     alice A          1      1
#   p_o = 4/6; p_e = (4/6)(4/6) + (2/6)(2/6) = 20/36
#   kappa = (24/36 - 20/36) / (16/36) = 0.25  -> Landis-Koch "fair"
#   AC1 (q = 3 categories): pi = 2/3, 1/3, 0; p_e = (2/9 + 2/9 + 0) / 2 = 2/9
#       AC1 = (2/3 - 2/9) / (7/9) = 4/7 = 0.571...
ALICE = ["no_shift", "no_shift", "ambiguous", "ambiguous", "no_shift", "no_shift"]
BOB = ["no_shift", "ambiguous", "ambiguous", "no_shift", "no_shift", "no_shift"]


def _row(app, key: str) -> list[str]:
    """field, form, N, raw, κ, CI, AC1, band, note (by column key, whatever their order)."""
    table = app.screen.query_one(AgreementTable)
    return [str(table.get_cell(key, column)) for column in
            ("field", "form", "n", "raw", "kappa", "ci", "ac1", "lk", "note")]


async def test_kappa_appears_and_updates_as_labels_arrive_from_outside(annotation_db):
    app = CoordinatorApp(annotation_db.db_path, annotation_db.carol, SET_NAME)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CoordinatorScreen)
        await wait_until(pilot, lambda: screen.report is not None)
        table = screen.query_one(AgreementTable)
        # No labels yet: N 0 and kappa explicitly undefined, never 0.
        assert _row(app, "gold_shift|full")[2:5] == ["0", "—", "undefined"]
        assert "waiting for two raters" in screen_text(app)

        codes = case_codes(annotation_db.db_path)
        label_everything(annotation_db.db_path, annotation_db.alice,
                         {c: {"gold_shift": v} for c, v in zip(codes, ALICE)})
        label_everything(annotation_db.db_path, annotation_db.bob,
                         {c: {"gold_shift": v} for c, v in zip(codes, BOB)})
        await wait_until(pilot, lambda: _row(app, "gold_shift|full")[2] == "6")
        field, form, n, raw, kappa, ci, ac1, words, note = _row(app, "gold_shift|full")
        assert (field, form, n, raw, kappa, ac1, words) == (
            "gold_shift", "3-way", "6", "66.7 %", "0.25", "0.57", "fair")
        assert ci.startswith("[") and ci.endswith("]")
        # N = 6 < 2·3² = 18: flagged as small; the Wald interval 0.25 ± 1.96·SE runs past 1
        # and is cut there (flagged 'clipped').
        assert note == "clipped, small N" and ci.endswith(", 1.00]")
        # Binary (shifted vs not): both raters said "not" everywhere -> undefined.
        assert _row(app, "gold_shift|binary")[4] == "undefined"
        assert table.cursor_row == 0
        text = screen_text(app)
        assert "alice (rows) × bob (columns)" in text
        assert "κ 0.25" in text  # the confusion panel summary of the highlighted row

        # One more label changes the table: bob relabels the 2nd case "no_shift".
        #   table: alice N -> bob N 4, bob A 0; alice A -> bob N 1, bob A 1
        #   p_o = 5/6; p_e = (4/6)(5/6) + (2/6)(1/6) = 22/36
        #   kappa = (30/36 - 22/36) / (14/36) = 8/14 = 0.571... -> "0.57", "moderate"
        # Written by a separate rater process (logs in with the passphrase), as in a real
        # session at another terminal.
        script = (
            "import sys\n"
            "from annotate.events import record_label, start_session\n"
            "from annotate.trust.people import authenticate\n"
            "from store import open_db\n"
            "db = open_db(sys.argv[1])\n"
            "bob = authenticate(db, 'bob', sys.argv[2])\n"
            "record_label(db, bob, start_session(db, bob, 'pilot'), sys.argv[3], "
            "'gold_shift', 'no_shift')\n")
        # Blocking on purpose: the label is committed by the other process before we wait.
        done = subprocess.run(  # noqa: ASYNC221
            [sys.executable, "-c", script, annotation_db.db_path, PASSPHRASE, codes[1]],
            cwd=ROOT, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        await wait_until(pilot, lambda: _row(app, "gold_shift|full")[4] == "0.57")
        assert _row(app, "gold_shift|full")[3] == "83.3 %"
        assert _row(app, "gold_shift|full")[7] == "moderate"


async def test_progress_undefined_state_and_confusion_matrix_follow_the_cursor(annotation_db):
    codes = case_codes(annotation_db.db_path)
    # Both raters: validity "valid" everywhere (one category -> kappa undefined); alice
    # also completes the first case's every field so her progress reads 1 / 6.
    label_everything(annotation_db.db_path, annotation_db.alice,
                     {c: {"gold_shift": "no_shift", "validity": "valid"} for c in codes[:1]})
    label_everything(annotation_db.db_path, annotation_db.bob,
                     {c: {"validity": "valid"} for c in codes})
    label_everything(annotation_db.db_path, annotation_db.alice,
                     {c: {"validity": "valid"} for c in codes[1:]})
    app = CoordinatorApp(annotation_db.db_path, annotation_db.carol, SET_NAME)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        screen = app.screen
        await wait_until(pilot, lambda: screen.report is not None)
        text = screen_text(app)
        # Alice finished case 1 only if it asks neither harm nor chain; count from the core.
        from annotate.agreement.tables import progress
        from store import open_db

        db = open_db(annotation_db.db_path)
        expected = {p.name: f"{p.done} / {p.total}" for p in progress(db, SET_NAME)}
        db.conn.close()
        assert expected["bob"] == "0 / 6"  # bob never set gold_shift
        for name, shown in expected.items():
            assert any(name in line and shown in line for line in text.splitlines())

        assert _row(app, "validity|full")[2:5] == ["6", "100.0 %", "undefined"]
        assert _row(app, "validity|full")[7] == "undefined"
        await pilot.press("down", "down")  # rows: gold 3-way, gold binary, validity 3-way
        await pilot.pause()
        assert screen.selected == "validity|full"
        text = screen_text(app)
        assert "Confusion: validity (3-way)" in text
        assert "κ undefined (only one category used so far (valid)" in text
        assert "By family: validity (3-way)" in text


async def test_stratum_table_cycles_family_dataset_model(annotation_db):
    app = CoordinatorApp(annotation_db.db_path, annotation_db.carol, SET_NAME)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        screen = app.screen
        await wait_until(pilot, lambda: screen.report is not None)
        assert screen.report.dimension == "family"
        assert {a.stratum for a in screen.report.by_stratum} == {
            "family=M2", "family=M3", "family=M4", "family=M5"}
        await pilot.press("b")
        await wait_until(pilot, lambda: screen.report.dimension == "dataset")
        assert "By dataset" in screen_text(app)
        await pilot.press("b")
        await wait_until(pilot, lambda: screen.report.dimension == "model")
        assert {a.stratum for a in screen.report.by_stratum} == {
            "model=qwen2.5-7b", "model=smollm2"}


async def test_a_rater_cannot_open_the_coordinator_screen(annotation_db):
    app = CoordinatorApp(annotation_db.db_path, annotation_db.alice, SET_NAME)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, ErrorModal)
        coordinator = app.screen_stack[-2]
        assert isinstance(coordinator, CoordinatorScreen)
        assert coordinator.report is None and coordinator._worker is None
        assert coordinator.query_one(AgreementTable).row_count == 0


async def test_kappa_plot_follows_the_field_and_ends_at_the_live_kappa(annotation_db):
    from workbench.tui.widgets.figure_plot import FigurePlot

    codes = case_codes(annotation_db.db_path)
    label_everything(annotation_db.db_path, annotation_db.alice,
                     {c: {"gold_shift": v, "validity": "valid"} for c, v in zip(codes, ALICE)})
    label_everything(annotation_db.db_path, annotation_db.bob,
                     {c: {"gold_shift": v, "validity": "valid"} for c, v in zip(codes, BOB)})
    app = CoordinatorApp(annotation_db.db_path, annotation_db.carol, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.report is not None)
        # The tables' recomputations leave the series out (most of their cost at 10,000
        # labels, bench/tui_screens.py); `k` asks for it.
        assert screen.report.series_for("gold_shift|full") is None
        await pilot.press("k")
        await wait_until(pilot, lambda: screen.report.series_for("gold_shift|full"))
        await pilot.pause()
        plot = screen.query_one("#kappa-plot", FigurePlot)
        assert plot.region.height >= 12 and screen.region.contains_region(plot.region)
        # Pairs complete in bob's order (he labelled second): the cases by code, so the
        # series is kappa of the first n of ALICE/BOB; its last point is the live 0.25.
        series = plot.data.series[0].y
        assert len(series) == 6 and series[-1] == pytest.approx(0.25)
        assert plot.data.title == "κ over paired labels: gold_shift (3-way)"
        text = screen_text(app)
        assert "gold_shift (3-way): κ 0.25" in text and "AC1 0.57" in text
        assert "↑↓ field" in text and "κ plot" in text  # the keys, in the footer
        await pilot.press("down")  # the next row: gold_shift's binary form
        await pilot.pause()
        assert plot.data.title == "κ over paired labels: gold_shift (shifted vs not)"
        await pilot.press("k")  # back to the tables, the row kept
        await pilot.pause()
        assert screen.selected == "gold_shift|binary"
        assert screen.focused is screen.query_one(AgreementTable)


async def test_at_80_columns_ac1_band_and_note_of_the_row_are_on_screen(annotation_db):
    from workbench.tui.widgets.confusion_matrix import ConfusionMatrix

    codes = case_codes(annotation_db.db_path)
    label_everything(annotation_db.db_path, annotation_db.alice,
                     {c: {"gold_shift": v} for c, v in zip(codes, ALICE)})
    label_everything(annotation_db.db_path, annotation_db.bob,
                     {c: {"gold_shift": v} for c, v in zip(codes, BOB)})
    app = CoordinatorApp(annotation_db.db_path, annotation_db.carol, SET_NAME)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.report is not None)
        await wait_until(pilot, lambda: _row(app, "gold_shift|full")[2] == "6")
        await pilot.pause()
        matrix = screen.query_one(ConfusionMatrix)
        # The table's AC1/band/note columns are scrolled sideways and the confusion panel
        # is below the fold (checked: this is why the line exists); the row's summary line
        # under the status says them in full, inside the screen without scrolling.
        assert not screen.region.contains_region(matrix.region)
        line = screen.query_one("#row-summary")
        assert line.region.height >= 1 and screen.region.contains_region(line.region)
        lines = screen_text(app).splitlines()[line.region.y:line.region.bottom]
        summary = " ".join(lines)
        assert "gold_shift (3-way): κ 0.25" in summary
        assert "AC1 0.57" in summary and "fair" in summary and "small N" in summary
