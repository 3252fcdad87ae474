"""Snapshot tests of the key screens (pytest-textual-snapshot); update with --snapshot-update
after checking the SVGs by eye."""

from __future__ import annotations

import pytest

from tests.tui.conftest import SET_NAME
from tests.tui.helpers import case_codes, label_everything, wait_until
from workbench.tui.app import AnnotationApp, CoordinatorApp

# Everything in the fixture is seeded (case codes, each rater's order), so the screens are
# reproducible; only wall-clock times are pinned below.
FIXED_CLOCK = "2025-01-01T12:00:00.000000+00:00"


def test_labelling_screen_80x24(snap_compare, annotation_db):
    app = AnnotationApp(annotation_db.db_path, annotation_db.alice, SET_NAME)
    # After gold_shift = no_shift: validity is the active field.
    assert snap_compare(app, press=["1"], terminal_size=(80, 24))


def test_letter_prompt_80x24(snap_compare, annotation_db):
    app = AnnotationApp(annotation_db.db_path, annotation_db.alice, SET_NAME)
    assert snap_compare(app, press=["3"], terminal_size=(80, 24))


def test_labelling_screen_side_by_side_120x36(snap_compare, annotation_db):
    app = AnnotationApp(annotation_db.db_path, annotation_db.alice, SET_NAME)
    # A case with harm and chain-registration questions (4th in alice's seeded order).
    assert snap_compare(app, press=["]", "]", "]", "]"], terminal_size=(120, 36))


def test_coordinator_screen_120x36(snap_compare, annotation_db, monkeypatch):
    monkeypatch.setattr("workbench.tui.screens.coordinator.clock_text", lambda _: "12:00:00")
    monkeypatch.setattr("workbench.tui.widgets.rater_progress.time_text",
                        lambda _: FIXED_CLOCK[:19].replace("T", " "))
    codes = case_codes(annotation_db.db_path)
    alice = ["no_shift", "no_shift", "ambiguous", "ambiguous", "no_shift", "no_shift"]
    bob = ["no_shift", "ambiguous", "ambiguous", "no_shift", "no_shift", "no_shift"]
    label_everything(annotation_db.db_path, annotation_db.alice,
                     {c: {"gold_shift": v, "validity": "valid"} for c, v in zip(codes, alice)})
    label_everything(annotation_db.db_path, annotation_db.bob,
                     {c: {"gold_shift": v, "validity": "borderline" if i % 3 else "valid"}
                      for i, (c, v) in enumerate(zip(codes, bob))})
    app = CoordinatorApp(annotation_db.db_path, annotation_db.carol, SET_NAME)

    async def computed(pilot) -> None:
        await wait_until(pilot, lambda: app.screen.report is not None)
        await pilot.pause()

    assert snap_compare(app, run_before=computed, terminal_size=(120, 36))
