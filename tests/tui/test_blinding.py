"""Blinding: walk every state of a rater's session and assert that no widget holds a model
identity, another rater's labels or any agreement figure (issue 6, criterion 2)."""

from __future__ import annotations

import re

import pytest

from tests.tui.conftest import ARM_LABELS, CASES, MODEL_NAMES, SET_NAME
from tests.tui.helpers import all_text, case_codes, label_everything, screen_text
from workbench.tui.app import AnnotationApp
from workbench.tui.components.alt_letter_modal import AltLetterModal
from workbench.tui.components.note_modal import NoteModal
from workbench.tui.screens.annotate import AnnotateScreen

BOB_NOTE = "bob-private-remark"

# Whole words (case-insensitive) that must never reach a rater's widget.
FORBIDDEN_WORDS = [
    *MODEL_NAMES, "qwen", "qwen2", *ARM_LABELS, "cot",            # model identity, arms
    *{c[0] for c in CASES}, "M2", "M3", "M4", "M5",               # operators, families
    "synthetic", "chest-pain-audit", "stratum", "strata",         # dataset, audit, strata
    "bob", BOB_NOTE,                                              # the other rater
    "kappa", "κ", "AC1", "Gwet", "agreement", "agree", "Landis",  # agreement figures
    "confusion", "moderate", "substantial", "slight",
]


def _leaks(text: str) -> list[str]:
    return [w for w in FORBIDDEN_WORDS
            if re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", text, flags=re.IGNORECASE)]


def test_the_checker_can_fail():
    # Guard against a blinding test that cannot fail: each kind of leak is caught.
    assert _leaks("answered by smollm2/cot") == ["smollm2", "smollm2/cot", "cot"]
    assert _leaks("Cohen's κ 0.25 (fair), AC1 0.57") == ["κ", "AC1"]
    assert _leaks("bob said no_shift") == ["bob"]
    assert _leaks("As [model] I note the edit; no crushing chest pain") == []


async def _snapshot_states(pilot, app, seen: list[tuple[str, str]], label: str) -> None:
    await pilot.pause()
    seen.append((label, all_text(app)))


@pytest.mark.asyncio
async def test_no_rater_screen_shows_identity_other_labels_or_agreement(annotation_db):
    # all_text reads every widget's content, scrolled out of view or not, so one terminal
    # size covers what a larger one would draw.
    # Bob has labelled every case, with a note, before alice starts.
    codes = case_codes(annotation_db.db_path)
    label_everything(annotation_db.db_path, annotation_db.bob,
                     {c: {"gold_shift": "ambiguous", "validity": "invalid", "note": BOB_NOTE}
                      for c in codes})
    app = AnnotationApp(annotation_db.db_path, annotation_db.alice, SET_NAME)
    states: list[tuple[str, str]] = []
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AnnotateScreen)
        for step in range(len(screen.cases)):
            view = screen.current
            # Bob's labels exist in the store, yet none is alice's.
            assert view.my_labels == ()
            await _snapshot_states(pilot, app, states, f"case {step} unlabelled")
            await pilot.press("3")                      # shifted -> letter prompt
            assert isinstance(app.screen, AltLetterModal)
            await _snapshot_states(pilot, app, states, f"case {step} letter prompt")
            await pilot.press("d")
            await pilot.press("n")                      # note input
            assert isinstance(app.screen, NoteModal)
            await _snapshot_states(pilot, app, states, f"case {step} note input")
            await pilot.press("x", "enter")
            await _snapshot_states(pilot, app, states, f"case {step} partly labelled")
            if step == 0:                               # the command palette (same each case)
                await pilot.press("ctrl+p")
                await _snapshot_states(pilot, app, states, f"case {step} palette")
                await pilot.press("escape")
            for _ in range(4):                          # validity, harm?, chain?
                if screen.active is None:
                    break
                await pilot.press("1")
            await pilot.press("enter")                  # complete: on to the next case
        await _snapshot_states(pilot, app, states, "all labelled")
        assert "6 / 6 labelled" in screen_text(app)

    assert len(states) == 4 * 6 + 1 + 1
    for label, text in states:
        assert _leaks(text) == [], f"{label}: {_leaks(text)}"
    # The walk did see the model's (scrubbed) reasoning and the case codes.
    everything = "\n".join(text for _, text in states)
    assert "As [model] I note the edit" in everything
    assert all(code in everything for code in codes)
    by_label = dict(states)
    assert "Which option is correct after the edit?" in by_label["case 0 letter prompt"]
    assert "Note for the coordinator" in by_label["case 0 note input"]
    assert "Next unlabelled case" in by_label["case 0 palette"]
