"""A modal that shows one error message (a failed label write or recomputation)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from workbench.tui.components.help_modal import HELP_KEYS


class ErrorModal(ModalScreen[None]):
    """Shows `title` and `message`; enter or escape closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,enter", "close", "Close", tooltip="close this message"), HELP_KEYS]

    DEFAULT_CSS = """
    ErrorModal { align: center middle; }
    ErrorModal > Vertical {
        width: 80%; max-width: 90; height: auto; border: thick $error;
        background: $surface; padding: 0 1;
    }
    """

    def __init__(self, title: str, message: str) -> None:
        super().__init__()
        self.title_text = title
        self.message = message

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content.assemble((self.title_text, "bold $text-error"), "\n",
                                          self.message, "\n\n", ("enter", "bold"), " close"))

    def action_close(self) -> None:
        """Dismiss the error."""
        self.dismiss(None)
