"""The labelling screen: one blinded case at a time, one key per label value.

Every keypress that sets a label is recorded at once, on the UI thread, through the app's
`annotate.labelling.Labelling` — the shared store (`annotate.events.record_label`) or the
rater's own file (`annotate.raterfile.labelling`): one small transaction, and doing it
synchronously means a keypress can never be lost between the key and a queued write. The
screen reads cases only through the core's blinded `CaseView`, so nothing here can show a
model, an arm, another rater's labels or an agreement figure.

A field is refused until what it depends on (`annotate.codebook.Field.needs`: the edited
question, the options with the gold, the model's answers, its reasoning) has been on
screen in full; the panel concerned is scrolled into view and the label panel says why.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, ClassVar, cast

from textual.app import ComposeResult, SystemCommand
from textual.binding import BindingType
from textual.screen import Screen
from textual.widgets import Footer, Static

from annotate.codebook import FIELDS, FieldKind, option_keys
from annotate.labels import COMPANIONS
from store.errors import UserError
from workbench.tui.host import SessionHost
from workbench.tui.messages import CaseShown, LabelRecorded, LabelUndone
from workbench.tui.widgets.case_panels import PANEL_KEYS, CasePanels
from workbench.tui.screens.annotate_keys import LABELLING_KEYS
from workbench.tui.widgets.label_panel import LabelPanel, waiting_text

if TYPE_CHECKING:
    from annotate.labelling import Labelling
    from annotate.sets.cases import CaseView

APP_NAME = "paw-tui"
"""Stamped (with the package version) on the rater's session and every event."""



def required_fields(view: CaseView) -> list[str]:
    """Fields a case needs before it counts as labelled (all applicable but the note)."""
    return [f for f in view.fields if FIELDS[f].kind != FieldKind.TEXT]


def is_complete(view: CaseView) -> bool:
    """True when every required field of the case has a current label."""
    labels = view.labels_dict
    return all(f in labels for f in required_fields(view))


class AnnotateScreen(Screen[None]):
    """A rater's queue of cases; see docs/tui.md for the keys."""

    CSS_PATH = "annotate.tcss"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]

    HELP_TITLE = "labelling a case"

    BINDINGS: ClassVar[list[BindingType]] = LABELLING_KEYS

    def __init__(self) -> None:
        super().__init__()
        self.cases: list[CaseView] = []
        """The rater's queue, in their own seeded order (views refreshed after each label)."""
        self.index = 0
        """Position of the case on screen in `cases`."""
        self.active: str | None = None
        """The field the digit keys set now; None when every field is set."""
        self.labelling: Labelling | None = None
        """The session labels go through (from the app: the store or the rater's file)."""
        self.complete: set[str] = set()
        """Codes of the cases every required field of which is labelled."""
        self._shown_at = time.monotonic()
        self._keys_state: tuple | None = None
        """What the footer's keys were last refreshed for (`_refresh_keys`)."""

    @property
    def paw(self) -> SessionHost:
        """The app, as the `SessionHost` it provides."""
        return cast(SessionHost, self.app)

    @property
    def current(self) -> CaseView | None:
        """The case on screen (None for an empty set)."""
        return self.cases[self.index] if self.cases else None

    @property
    def panels(self) -> CasePanels:
        """The case's evidence pane."""
        return self.query_one(CasePanels)

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        yield CasePanels(id="case")
        yield LabelPanel()
        yield Footer(compact=True, show_command_palette=False)  # ctrl+p opens it still

    def on_mount(self) -> None:
        try:
            labelling = self.paw.open_labelling(APP_NAME)
            labelling.start()
            self.cases = labelling.queue()
            self.labelling = labelling
        except UserError as exc:
            self.paw.show_error("Cannot start labelling", exc)
            return
        self.complete = {v.code for v in self.cases if is_complete(v)}
        # Resume where the rater left off: the first case not fully labelled.
        self.index = next((i for i, v in enumerate(self.cases) if not is_complete(v)), 0)
        self._show()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide the keys of panels this case does not have (no answers unless it flipped)."""
        if action == "reveal" and self.cases:
            return parameters[0] in self.panels.present()
        if action == "done":  # enter moves on only from a complete case
            return self.current is not None and self.current.code in self.complete
        return True

    # ---- drawing --------------------------------------------------------------------

    def _first_unset(self, view: CaseView, after: str | None = None) -> str | None:
        """The first required field without a label, starting after `after` (wrapping)."""
        order = required_fields(view)
        labels = view.labels_dict
        start = order.index(after) + 1 if after in order else 0
        for name in order[start:] + order[:start]:
            if name not in labels:
                return name
        return None

    def _unseen(self, field: str | None) -> list[str]:
        """Evidence `field` needs that has not been on screen in full yet."""
        if field is None:
            return []
        self.panels.note_visible()
        return self.panels.unseen(FIELDS[field].needs)

    def _show(self, active: str | None = None, *, reveal: bool = False) -> None:
        """Draw the current case; `active` picks the field (default: first unset).

        Args:
            active: the field to make active.
            reveal: scroll to the first panel the active field needs and that is unseen.
        """
        view = self.current
        status = self.query_one("#status", Static)
        if view is None:
            status.update("This set has no cases.")
            return
        self.active = active if active in view.fields else self._first_unset(view)
        status.update(f"case {view.code} · {self.index + 1} of {len(self.cases)} in your "
                      f"order · {len(self.complete)} / {len(self.cases)} labelled · "
                      f"rater {self.paw.person.name}")
        self.panels.show(view, view.labels_dict.get("gold_shift_alt"))
        self._draw_labels()
        self._refresh_keys()
        if reveal:
            self.call_after_refresh(self._reveal_needed)

    def _refresh_keys(self) -> None:
        """Refresh the footer's keys only when one of them came or went (`check_action`:
        the panels this case has, and `enter` once it is complete). Textual's Footer
        rebuilds every key widget on `refresh_bindings` — 80–120 ms of the 67–149 ms a next
        case took (`bench/tui_screens.py`, docs/tui.md) — while the next case usually
        changes no key."""
        view = self.current
        state = (tuple(sorted(self.panels.present())),
                 view is not None and view.code in self.complete)
        if state != self._keys_state:
            self._keys_state = state
            self.refresh_bindings()

    def _draw_labels(self) -> None:
        view = self.current
        if view is None:
            return
        self.query_one(LabelPanel).show(
            view.fields, view.labels_dict, self.active,
            option_keys=self._option_keys(view), unseen=self._unseen(self.active),
            panel_keys=PANEL_KEYS)

    def on_case_panels_panels_seen(self, message: CasePanels.PanelsSeen) -> None:
        """A panel came fully into view: the label panel's 'read … first' hint changes."""
        if self.current is not None and message.code == self.current.code:
            self._draw_labels()

    def _reveal_needed(self) -> None:
        unseen = self._unseen(self.active)
        if unseen:
            self.panels.reveal(unseen[0])
        self._draw_labels()

    @staticmethod
    def _option_keys(view: CaseView) -> dict[str, str]:
        return {key: label for key, label in option_keys([lab for lab, _ in view.options])
                .items() if label != view.gold}

    def _go(self, index: int) -> None:
        """Move to case `index` (clamped) and restart its time-on-item clock."""
        if not self.cases:
            return
        self.index = max(0, min(index, len(self.cases) - 1))
        self._shown_at = time.monotonic()
        self._show()
        self.post_message(CaseShown(self.cases[self.index].code, self.index + 1))

    def _refresh_current(self) -> None:
        view = self.current
        if view is not None and self.labelling is not None:
            fresh = self.labelling.view(view.code)
            self.cases[self.index] = fresh
            if is_complete(fresh):
                self.complete.add(fresh.code)
            else:
                self.complete.discard(fresh.code)

    # ---- recording ------------------------------------------------------------------

    def _record(self, field: str, value: str | None, companion: str | None = None) -> bool:
        """Commit one label event (with its companion's, `annotate.labels.COMPANIONS`) now;
        False (and an error modal) if the core refused it."""
        view = self.current
        if view is None or self.labelling is None:
            return False
        from annotate.codebook import MAX_TIME_ON_ITEM_MS

        # A screen left open longer than a day records a day (the bound every event has).
        elapsed_ms = min(int((time.monotonic() - self._shown_at) * 1000), MAX_TIME_ON_ITEM_MS)
        try:
            event = self.labelling.record(view.code, field, value, time_on_item_ms=elapsed_ms,
                                          companion=companion)
        except UserError as exc:
            self.paw.show_error("Label not recorded", exc)
            return False
        self._refresh_current()
        self.post_message(LabelRecorded(view.code, field, event.value, event.id))
        return True

    def _advance_after(self, field: str) -> None:
        """Next unset field of this case; once every required field is set the case stays
        (a note can still be added, a field changed) until enter or ] moves on."""
        view = self.current
        assert view is not None
        if field == "gold_shift" and view.labels_dict.get("gold_shift") == "shifted" \
                and "gold_shift_alt" not in view.labels_dict:
            self._ask_alternative()
            return
        following = self._first_unset(view, after=field)
        if following is not None:
            self._show(active=following, reveal=True)
            return
        self._show(active=None)

    def _next_case_after_complete(self) -> None:
        nxt = self.index + 1
        if nxt < len(self.cases):
            self._go(nxt)
            return
        pending = next((i for i, v in enumerate(self.cases) if v.code not in self.complete),
                       None)
        if pending is None:
            self.notify(f"All {len(self.cases)} cases labelled. Thank you.", timeout=6)
        else:
            self.notify("End of your queue: back to the first case still unlabelled.")
            self._go(pending)

    def _ask_alternative(self, with_shift: bool = False) -> None:
        """The new answer; `with_shift`: recorded together with gold shift 'shifted' (the
        two events of every gold-shift label), else alone (a 'shifted' without one)."""
        from workbench.tui.components.alt_letter_modal import AltLetterModal
        view = self.current
        assert view is not None

        def chosen(letter: str | None) -> None:
            if letter is None:
                self._show(active="gold_shift")  # esc: back to gold shift, nothing recorded
            elif (self._record("gold_shift", "shifted", companion=letter) if with_shift
                  else self._record("gold_shift_alt", letter)):
                self._advance_after("gold_shift_alt")

        self.app.push_screen(AltLetterModal(view.options, view.gold), chosen)

    def _ask_category(self, field: str, value: str) -> None:
        """The companion a value brings in (stereotype's category), recorded with it."""
        from workbench.tui.components.category_modal import CategoryModal
        companion = COMPANIONS[field][0]

        def chosen(category: str | None) -> None:
            if category is None:
                self._show(active=field)
            elif self._record(field, value, companion=category):
                self._advance_after(companion)

        self.app.push_screen(CategoryModal(companion), chosen)

    def _refuse_unseen(self, field: str) -> bool:
        """True (and the missing panel scrolled into view) when `field` cannot be set yet."""
        unseen = self._unseen(field)
        if not unseen:
            return False
        self.app.bell()
        self.panels.reveal(unseen[0])
        self.notify(f"Not recorded: {waiting_text(unseen, PANEL_KEYS)} "
                    "(pagedown scrolls a long panel).", severity="warning", timeout=4)
        self._draw_labels()
        return True

    # ---- actions --------------------------------------------------------------------

    def action_digit(self, key: str) -> None:
        """Set the active field to the value whose key is `key`."""
        if self.active is None or self.current is None:
            self.app.bell()
            return
        if self._refuse_unseen(self.active):
            return
        if self.active == "gold_shift_alt":
            self._ask_alternative()  # the option itself is chosen inside the prompt
            return
        spec = FIELDS[self.active]
        value = spec.value_for_key(key)
        if value is None:
            self.app.bell()  # e.g. '4' on a three-valued field
            return
        field = self.active
        if field in COMPANIONS and value not in COMPANIONS[field][1]:
            # The field it brings in is asked first; both are recorded together.
            if field == "gold_shift":
                self._ask_alternative(with_shift=True)
            else:
                self._ask_category(field, value)
            return
        if self._record(field, value):
            self._advance_after(field)

    def action_undo(self) -> None:
        """Undo this session's latest label (a new event restores the previous value)."""
        if self.labelling is None:
            return
        try:
            event = self.labelling.undo()
        except UserError as exc:
            self.paw.show_error("Undo failed", exc)
            return
        if event is None:
            self.notify("Nothing to undo in this session.")
            return
        where = next((i for i, v in enumerate(self.cases) if v.code == event.code), self.index)
        self.index = where
        self._shown_at = time.monotonic()
        self._refresh_current()
        view = self.current
        assert view is not None
        self._show(active=event.field if event.field in required_fields(view) else None)
        self.post_message(LabelUndone(event.code, event.field, event.value, event.id))

    def action_done(self) -> None:
        """enter on a complete case: the next case (at the end of the queue, the first
        still unlabelled)."""
        if self.current is not None and self.current.code in self.complete:
            self._next_case_after_complete()

    def action_skip(self) -> None:
        """Leave this case for later and go to the next one (nothing is recorded)."""
        self._go(self.index + 1 if self.index + 1 < len(self.cases) else 0)

    def action_case(self, step: int) -> None:
        """Previous (-1) or next (+1) case in the rater's order."""
        self._go(self.index + step)

    def action_field(self, step: int) -> None:
        """Move the active field up or down (to relabel a field already set)."""
        view = self.current
        if view is None:
            return
        order = required_fields(view)
        if "gold_shift_alt" in order:
            order.remove("gold_shift_alt")  # changed through gold_shift '3' and its prompt
        if self.active not in order:
            at = 0 if step > 0 else len(order) - 1
        else:
            at = (order.index(self.active) + step) % len(order)
        self._show(active=order[at], reveal=True)

    def action_reveal(self, name: str) -> None:
        """Bring one panel of the case into view (question, options, answers, reasoning)."""
        self.panels.reveal(name)
        self.call_after_refresh(self._draw_labels)

    def action_next_panel(self) -> None:
        """Bring the next panel of the case into view (wrapping)."""
        present = self.panels.present()
        if not present:
            return
        top = self.panels.scroll_y
        later = [name for name in present
                 if self.panels.panel(name).virtual_region.y > top + 0.5]
        self.action_reveal(later[0] if later else present[0])

    def action_note(self) -> None:
        """Open the note input for this case."""
        from workbench.tui.components.note_modal import NoteModal

        view = self.current
        if view is None:
            return

        def saved(text: str | None) -> None:
            if text is None:
                return
            value = text.strip() or None
            if value != view.labels_dict.get("note") and self._record("note", value):
                self._show(active=self.active)

        self.app.push_screen(NoteModal(view.labels_dict.get("note")), saved)

    def action_guidelines(self) -> None:
        """Show the codebook's definitions of this case's fields."""
        from workbench.tui.components.guidelines_modal import GuidelinesModal

        view = self.current
        if view is not None:
            self.app.push_screen(GuidelinesModal(view.fields))

    def action_scroll_case(self, step: int) -> None:
        """Scroll the case (question, options, answers) a page up or down."""
        panels = self.panels
        panels.scroll_page_down(animate=False) if step > 0 else \
            panels.scroll_page_up(animate=False)
        self.call_after_refresh(self._draw_labels)

    def palette_commands(self) -> list[SystemCommand]:
        """Labelling commands offered in the command palette (ctrl+p)."""
        def first_open() -> None:
            self._go(next((i for i, v in enumerate(self.cases) if v.code not in self.complete),
                          self.index))

        return [
            SystemCommand("Undo last label", "Restore the value before your latest label",
                          self.action_undo),
            SystemCommand("Next unlabelled case", "Jump to the first case not fully labelled",
                          first_open),
            SystemCommand("Add a note", "Write a free-text note on this case",
                          self.action_note),
            SystemCommand("Skip case", "Leave this case for later", self.action_skip),
        ]
