"""Choose one value from a list (a filter's families or arms) instead of cycling through it."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

ANY = "\x00any"
"""The option id of "any" (no filter)."""


class PickModal(ModalScreen[str | None]):
    """Returns the chosen value, `ANY` for no filter, or None when cancelled (escape)."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]

    DEFAULT_CSS = """
    PickModal { align: center middle; }
    PickModal > Vertical { width: 70%; max-width: 70; height: auto; max-height: 90%;
                           border: thick $primary; background: $surface; padding: 0 1; }
    PickModal OptionList { height: 14; }
    """

    def __init__(self, title: str, values: Sequence[str], current: str | None) -> None:
        super().__init__()
        self.title_text = title
        self.values = list(values)
        """The values offered (after "any")."""
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(f"{self.title_text} · ↑↓ enter choose · type to jump · "
                              "escape cancel", style="bold"))
            yield OptionList(Option("any (no filter)", id=ANY),
                             *[Option(Text(v), id=v) for v in self.values], id="pick")

    def on_mount(self) -> None:
        options = self.query_one("#pick", OptionList)
        options.highlighted = (self.values.index(self.current) + 1
                               if self.current in self.values else 0)
        options.focus()

    def on_key(self, event) -> None:
        # A printable key jumps to the next value starting with it (M4 is two keys away).
        if event.character and event.character.isprintable() and len(event.character) == 1:
            options = self.query_one("#pick", OptionList)
            start = (options.highlighted or 0)
            ids = [ANY, *self.values]
            for step in range(1, len(ids) + 1):
                at = (start + step) % len(ids)
                if ids[at].lower().startswith(event.character.lower()):
                    options.highlighted = at
                    event.stop()
                    return

    @on(OptionList.OptionSelected, "#pick")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        """Close without changing the filter."""
        self.dismiss(None)
