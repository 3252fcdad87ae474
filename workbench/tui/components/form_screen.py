"""A screen whose form is a few fields typed in order and ends with a passphrase.

Textual moves the focus on Tab (and the forms on Enter) only once the focused input has
processed the keys queued before it: keys typed quickly — at tmux or paste speed, or by a
touch typist — after `alice<tab>` still reached the name field, so the passphrase stood
there in clear text ("alicealice-c" in the walk of issue 22). Here Tab, shift+Tab and Enter
are priority bindings, handled when the app reads the key, and the focus moves with
`Screen.set_focus` at once (not `Widget.focus`, which is deferred), so every later key goes
to the next field. The order stops at the passphrase: Tab there does not wrap round to the
name (a passphrase retyped from habit, `name<tab>passphrase`, after a failed try would land
in the name field), and shift+Tab back into a field selects its text, so typing replaces it.

Enter on the passphrase calls `submit` once each field has handled the keys sent to it
before (their values read as typed). A subclass lists its fields in `FIELDS` (selectors,
the passphrase last) and implements `submit`. A `Select` keeps its own Enter (it opens the
list).
"""

from __future__ import annotations

from textual.binding import Binding
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, Select


FOCUS_NOW: list[Binding] = [
    Binding("tab", "app.focus_next", "next field", show=False, priority=True),
    Binding("shift+tab", "app.focus_previous", "previous field", show=False, priority=True)]
"""Tab / shift+Tab for any form (the launch, model and import forms): the focus moves when
the key is read (`Screen.focus_next` is immediate), so the keys after it reach the next
field. Not app-wide: the labelling screen's Tab moves between its panels."""


class FormScreen(Screen[None]):
    """Fields in a fixed order, focus moved as the keys are read; Enter signs in at the end."""

    FIELDS: tuple[str, ...] = ("#name", "#passphrase")
    """The form's fields in order, the passphrase last."""

    BINDINGS = [Binding("tab", "field(1)", "next field", show=False, priority=True),
                Binding("shift+tab", "field(-1)", "previous field", show=False,
                        priority=True),
                Binding("enter", "form_enter", "next field / sign in", show=False,
                        priority=True)]

    def fields(self) -> list[Widget]:
        """The form's widgets in order."""
        return [self.query_one(selector) for selector in self.FIELDS]

    def _current(self) -> Widget | None:
        """The field holding the focus (a Select's open list counts as the Select)."""
        focused = self.focused
        order = self.fields()
        for node in () if focused is None else focused.ancestors_with_self:
            if node in order:
                return node
        return None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "form_enter" and isinstance(self._current(), Select):
            return False  # the Select's own Enter opens its list and picks from it
        return True

    def action_field(self, step: int) -> None:
        """Tab / shift+Tab: the next / previous field, stopping at both ends."""
        order = self.fields()
        current = self._current()
        if current is None:  # focus off the form: back to its first field
            self._move(order[0])
            return
        index = order.index(current) + (1 if step > 0 else -1)
        if 0 <= index < len(order):
            self._move(order[index])

    def action_form_enter(self) -> None:
        """Enter: the next field; on the last (the passphrase), `submit`."""
        order = self.fields()
        if self._current() is order[-1]:
            self._after_queued_keys(order, self.submit)
        else:
            self.action_field(1)

    @staticmethod
    def _after_queued_keys(widgets: list[Widget], callback) -> None:
        """Run `callback` once every widget has handled the keys already sent to it.

        Enter is handled when the app reads it, but the characters before it may still wait
        in the inputs' own queues (their values not updated yet): a callback queued behind
        them on each input in turn reads the values as typed.
        """
        if not widgets:
            callback()
            return
        first, rest = widgets[0], widgets[1:]
        first.call_later(FormScreen._after_queued_keys, rest, callback)

    def _move(self, widget: Widget) -> None:
        self.set_focus(widget)  # now, before the keys already read go to the old field
        if isinstance(widget, Input) and widget is not self.fields()[-1]:
            widget.select_all()  # typing replaces the value instead of appending to it

    def submit(self) -> None:
        """Sign in with what the fields hold (the subclass's check)."""
        raise NotImplementedError
