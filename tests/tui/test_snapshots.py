"""Snapshot tests of the key screens (pytest-textual-snapshot); update with --snapshot-update
after checking the SVGs by eye.

The labelling screen is pinned for the four kinds of case a clinician meets
(`tests.tui.clinic`), at 80×24 and 120×36, each in the state where the field that
depends on the most evidence is active: a long MCQ and a yes/no case as they open (gold
shift: question and options), a harm case and a chain case after gold shift and
validity (harm: the answers; chain registration: the reasoning).
"""

from __future__ import annotations

import pytest

from tests.tui.clinic import SET_NAME as CLINIC
from tests.tui.clinic import kind_of
from tests.tui.conftest import SET_NAME
from tests.tui.helpers import case_codes, label_everything, wait_until
from workbench.tui.app import AnnotationApp, CoordinatorApp

# Everything in the fixture is seeded (case codes, each rater's order), so the screens are
# reproducible; only wall-clock times are pinned below.
FIXED_CLOCK = "2025-01-01T12:00:00.000000+00:00"

SIZES = [(80, 24), (120, 36)]

# kind -> keys pressed once the case is on screen
CASE_STATES = {"long_mcq": [], "yes_no": [], "harm": ["1", "1"], "chain": ["1", "1"]}


def _open_case(kind: str):
    async def run_before(pilot) -> None:
        await pilot.pause()
        screen = pilot.app.screen
        while kind_of(screen.current) != kind:
            await pilot.press("right_square_bracket")
        for key in CASE_STATES[kind]:
            await pilot.press(key)
        await pilot.pause()
    return run_before


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("kind", list(CASE_STATES))
def test_labelling_screen(snap_compare, clinic_db, kind, size):
    app = AnnotationApp(clinic_db.db_path, clinic_db.alice, CLINIC)
    assert snap_compare(app, run_before=_open_case(kind), terminal_size=size)


def test_yes_no_shift_prompt_80x24(snap_compare, clinic_db):
    app = AnnotationApp(clinic_db.db_path, clinic_db.alice, CLINIC)

    async def run_before(pilot) -> None:
        await _open_case("yes_no")(pilot)
        await pilot.press("3")
        await pilot.pause()

    assert snap_compare(app, run_before=run_before, terminal_size=(80, 24))


def test_letter_prompt_80x24(snap_compare, annotation_db):
    app = AnnotationApp(annotation_db.db_path, annotation_db.alice, SET_NAME)
    assert snap_compare(app, press=["3"], terminal_size=(80, 24))


def _label_pilot_set(annotation_db) -> None:
    codes = case_codes(annotation_db.db_path)
    alice = ["no_shift", "no_shift", "ambiguous", "ambiguous", "no_shift", "no_shift"]
    bob = ["no_shift", "ambiguous", "ambiguous", "no_shift", "no_shift", "no_shift"]
    label_everything(annotation_db.db_path, annotation_db.alice,
                     {c: {"gold_shift": v, "validity": "valid"} for c, v in zip(codes, alice)})
    label_everything(annotation_db.db_path, annotation_db.bob,
                     {c: {"gold_shift": v, "validity": "borderline" if i % 3 else "valid"}
                      for i, (c, v) in enumerate(zip(codes, bob))})


def test_coordinator_screen_120x36(snap_compare, annotation_db, monkeypatch):
    app, computed = _coordinator(annotation_db, monkeypatch)
    assert snap_compare(app, run_before=computed, terminal_size=(120, 36))


def _coordinator(annotation_db, monkeypatch, keys=()):
    monkeypatch.setattr("workbench.tui.screens.coordinator.clock_text", lambda _: "12:00:00")
    monkeypatch.setattr("workbench.tui.widgets.rater_progress.time_text",
                        lambda _: FIXED_CLOCK[:19].replace("T", " "))
    _label_pilot_set(annotation_db)
    app = CoordinatorApp(annotation_db.db_path, annotation_db.carol, SET_NAME)

    async def computed(pilot) -> None:
        # Settled: the report drawn, and the highlighted row's detail drawn from it (the
        # table's RowHighlighted arrives a message later; under CI load one pause missed it).
        await wait_until(pilot, lambda: app.screen.report is not None and str(
            app.screen.query_one("#row-summary").render()).strip() != "")
        await pilot.pause()
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
        await pilot.pause()

    return app, computed


def test_coordinator_screen_80x24(snap_compare, annotation_db, monkeypatch):
    # At 80 the table scrolls sideways (field and form fixed); the line under the confusion
    # matrix gives κ, CI, band, AC1 and the note flags of the highlighted row in full.
    app, computed = _coordinator(annotation_db, monkeypatch)
    assert snap_compare(app, run_before=computed, terminal_size=(80, 24))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_coordinator_kappa_plot(snap_compare, annotation_db, monkeypatch, size):
    # `k`: κ after the first n paired labels of gold_shift (3-way), drawn with plotext.
    app, computed = _coordinator(annotation_db, monkeypatch, keys=["k"])
    assert snap_compare(app, run_before=computed, terminal_size=size)
