"""Free-text note input for the current case (optional field)."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from annotate.codebook import MAX_NOTE_CHARS
from workbench.tui.components.help_modal import HELP_KEYS


class NoteModal(ModalScreen[str | None]):
    """Dismisses with the note text on enter (empty text clears the note), None on escape."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", tooltip="close without saving the note"),
        HELP_KEYS,  # F1 (`?` is typed into the note)
    ]

    DEFAULT_CSS = """
    NoteModal { align: center bottom; }
    NoteModal > Vertical {
        width: 100%; max-width: 90; height: auto; border: thick $accent;
        background: $surface; padding: 0 1; margin-bottom: 1;
    }
    """

    def __init__(self, current: str | None) -> None:
        super().__init__()
        self.current = current or ""
        """The note already recorded for this case (prefilled)."""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Note for the coordinator · enter saves · empty clears · esc cancels")
            yield Input(value=self.current, max_length=MAX_NOTE_CHARS,
                        placeholder="e.g. stem ambiguous even before the edit", id="note-input")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        """Close without saving."""
        self.dismiss(None)
