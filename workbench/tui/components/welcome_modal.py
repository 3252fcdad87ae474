"""Shown by `paw ui` when the database file does not exist yet: create it with the demo set?"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static


class WelcomeModal(ModalScreen[bool]):
    """Returns True to create the database with the demo set, False to quit."""

    BINDINGS = [Binding("y,enter", "answer(True)", "create with demo set"),
                Binding("n,escape", "answer(False)", "quit")]

    DEFAULT_CSS = """
    WelcomeModal { align: center middle; }
    WelcomeModal > Vertical { width: 80%; max-width: 80; height: auto;
                              border: thick $primary; background: $surface; padding: 0 1; }
    """

    def __init__(self, db_path: str) -> None:
        super().__init__()
        self.db_path = db_path

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content.assemble(
                ("No PAW database yet", "bold"), "\n",
                f"{self.db_path} does not exist. Create it and import the demo set (78 "
                "clinical vignettes written for PAW, dataset 'demo')? You can then launch an "
                "audit with n on the Runs screen.\n\n",
                ("y", "bold"), " create with the demo set   ", ("n", "bold"), " quit"))

    def action_answer(self, create: bool) -> None:
        """Close with the answer."""
        self.dismiss(create)
