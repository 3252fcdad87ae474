"""The labelling screen's keys (`workbench.tui.screens.annotate`), each with the words the
`?` help shows a clinician (its tooltip); the footer shows the short descriptions."""

from __future__ import annotations

from textual.binding import Binding, BindingType

from workbench.tui.widgets.case_panels import PANEL_KEYS
from workbench.tui.widgets.label_panel import PANEL_NAMES

_VIEW = Binding.Group("view")
_CASE = Binding.Group("case", compact=True)

LABELLING_KEYS: list[BindingType] = [
    Binding("1", "digit('1')", "label", key_display="1…", tooltip="answer the "
            "highlighted question (▸ under Labels): each value's key is beside it"),
    *[Binding(str(d), f"digit('{d}')", show=False) for d in range(2, 10)],
    Binding("u,ctrl+z", "undo", "undo", key_display="u",
            tooltip="undo your latest label (the value before it comes back)"),
    Binding("s", "skip", "skip", show=False,  # the footer is full at 80 columns
            tooltip="leave this case for later (nothing is recorded)"),
    Binding("n", "note", "note", tooltip="write a note on this case for the coordinator"),
    Binding("enter", "done", "next", key_display="⏎",
            tooltip="go to the next case (once every question of this one is answered)"),
    Binding("up", "field(-1)", "field", key_display="↑↓",
            tooltip="move to another question of this case, to change its answer"),
    Binding("down", "field(1)", show=False),
    Binding("left_square_bracket,left", "case(-1)", "prev", key_display="[", group=_CASE,
            tooltip="previous case in your order"),
    Binding("right_square_bracket,right", "case(1)", "next", key_display="]",
            group=_CASE, tooltip="next case in your order"),
    *[Binding(key, f"reveal('{name}')", name, group=_VIEW, tooltip=f"show {PANEL_NAMES[name]}")
      for name, key in PANEL_KEYS.items()],
    Binding("tab", "next_panel", show=False, tooltip="show the next part of the case"),
    Binding("pageup", "scroll_case(-1)", show=False, key_display="pgup/pgdn",
            tooltip="scroll the case a page up / down"),
    Binding("pagedown", "scroll_case(1)", show=False),
    Binding("g", "guidelines", "guide",
            tooltip="the guidelines: what each question asks and each value means"),
    Binding("q", "app.quit", "quit", tooltip="quit (every label so far is already stored)"),
]
"""Digits set the active field; the rest move, show, undo, note, guide and quit."""
