"""A yes/no question over the screen (quitting while a run launched here is working)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static


class ConfirmModal(ModalScreen[bool]):
    """Returns True for `y`, False for `n` or escape."""

    BINDINGS = [Binding("y", "answer(True)", "yes"),
                Binding("n,escape", "answer(False)", "no")]

    DEFAULT_CSS = """
    ConfirmModal { align: center middle; }
    ConfirmModal > Vertical { width: 80%; max-width: 80; height: auto;
                              border: thick $warning; background: $surface; padding: 0 1; }
    """

    def __init__(self, title: str, question: str) -> None:
        super().__init__()
        self.title_text = title
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content.assemble((self.title_text, "bold"), "\n", self.question,
                                          "\n\n", ("y", "bold"), " yes   ", ("n", "bold"),
                                          " no (escape)"))

    def action_answer(self, answer: bool) -> None:
        """Close with the answer."""
        self.dismiss(answer)
