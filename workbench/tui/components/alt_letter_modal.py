"""The prompt after "shifted": which option is correct after the edit (letter or Yes/No)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from annotate.codebook import option_keys
from workbench.tui.components.help_modal import HELP_KEYS
from workbench.tui.widgets.options_panel import option_line


class AltLetterModal(ModalScreen[str | None]):
    """Asks for the new correct option; the only place where option keys record a label.

    Every option but the gold is offered with its key from `annotate.codebook.option_keys`
    (a letter option is its own key; Yes / No / Maybe are y / n / m). Dismisses with the
    chosen label as the case spells it, or None on escape.
    """

    HELP_TITLE = "which option is correct after the edit"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "back to gold shift",
                tooltip="back to the gold-shift question without choosing"),
        HELP_KEYS,
    ]

    DEFAULT_CSS = """
    AltLetterModal { align: center bottom; }
    AltLetterModal > Vertical {
        width: 100%; max-width: 90; height: auto; border: thick $warning;
        background: $surface; padding: 0 1; margin-bottom: 1;
    }
    """

    def __init__(self, options: Sequence[tuple[str, str]], gold: str) -> None:
        super().__init__()
        keys = option_keys([label for label, _ in options])
        texts = dict(options)
        self.keys: dict[str, str] = {key: label for key, label in keys.items() if label != gold}
        """key -> option label, for every option but the gold."""
        self.options = [(label, texts[label]) for label in self.keys.values()]
        """The options the rater may pick (every option but the gold)."""
        self.gold = gold

    def compose(self) -> ComposeResult:
        lines = [Content.assemble(("Which option is correct after the edit?", "bold"),
                                  f"  (gold was {self.gold}) · press its key")]
        for key, label in self.keys.items():
            line = option_line(label, dict(self.options)[label])
            if key.upper() == label:  # a letter option: the key is the label itself
                line[0] = (label, "bold $text-accent")
                lines.append(Content.assemble(*line))
            else:
                lines.append(Content.assemble((key, "bold $text-accent"), "  ", *line))
        lines.append(Content.assemble(("esc", "bold $text-accent"), " back to gold shift · ",
                                      ("q", "bold $text-accent"), " quit (labels so far are "
                                      "stored)"))
        with Vertical():
            yield Static(Content("\n").join(lines), id="alt-prompt")
        # Its own footer over the labelling screen's: there the view keys (e o c) were
        # listed while `c` here records option C.
        yield Footer(compact=True)

    def help_rows(self) -> list[tuple[str, str]]:
        """The option keys, read by `on_key` (they are not bindings), for the `?` help."""
        texts = dict(self.options)
        return [(key, f"option {label} is correct after the edit: {texts[label]}")
                for key, label in self.keys.items()] + [
            ("q", "quit (every label so far is already stored)")]

    def on_key(self, event: events.Key) -> None:
        """A key naming one of the offered options records it (case-insensitive)."""
        if event.character is None:
            return
        label = self.keys.get(event.character.lower())
        if label is not None:
            event.stop()
            event.prevent_default()
            self.dismiss(label)
        elif event.character == "q":  # not an option key here: quit, as everywhere else
            event.stop()
            self.app.exit()

    def action_cancel(self) -> None:
        """Close without choosing."""
        self.dismiss(None)
