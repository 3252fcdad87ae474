"""The model's reasoning after the edit (chain-registration cases only, names scrubbed)."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static


class ChainPanel(Static):
    """The scrubbed chain of thought the model wrote for the edited question."""

    DEFAULT_CSS = """
    ChainPanel {
        height: auto;
        border-top: round $primary 50%;
        border-title-color: $text-primary;
        padding: 0 1;
    }
    """

    def on_mount(self) -> None:
        self.border_title = "Model's reasoning after the edit"

    def show(self, chain: str | None) -> None:
        """Display the reasoning; hides the panel when there is none to show."""
        self.display = bool(chain)
        self.update(Content(chain or ""))
