"""The prompt after "shifted": which option letter is correct after the edit."""

from __future__ import annotations

from collections.abc import Sequence

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static


class AltLetterModal(ModalScreen[str | None]):
    """Asks for the new correct option; the only place where letter keys record a label.

    Dismisses with the chosen label (as the case spells it), or None on escape.
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    DEFAULT_CSS = """
    AltLetterModal { align: center bottom; }
    AltLetterModal > Vertical {
        width: 100%; max-width: 90; height: auto; border: thick $warning;
        background: $surface; padding: 0 1; margin-bottom: 1;
    }
    """

    def __init__(self, options: Sequence[tuple[str, str]], gold: str) -> None:
        super().__init__()
        self.options = [(label, text) for label, text in options if label != gold]
        """The options the rater may pick (every option but the gold)."""
        self.gold = gold

    def compose(self) -> ComposeResult:
        lines = [Content.assemble(("Which option is correct after the edit?", "bold"),
                                  f"  (gold was {self.gold}) · press its letter")]
        for label, text in self.options:
            lines.append(Content.assemble((label, "bold $text-accent"), "  ", text))
        lines.append(Content.assemble(("esc", "bold $text-accent"), " back to gold shift"))
        with Vertical():
            yield Static(Content("\n").join(lines), id="alt-prompt")

    def on_key(self, event: events.Key) -> None:
        """A letter naming one of the offered options records it (case-insensitive)."""
        if event.character is None or not event.character.isalpha():
            return
        for label, _ in self.options:
            if label.lower() == event.character.lower():
                event.stop()
                event.prevent_default()
                self.dismiss(label)
                return

    def action_cancel(self) -> None:
        """Close without choosing."""
        self.dismiss(None)
