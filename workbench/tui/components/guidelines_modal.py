"""`g` on the labelling screen: the codebook's definitions of the case's fields, beside the
case (Prodigy, Potato and Label Studio show their guidelines next to the task)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from workbench.present.guidelines import guidelines
from workbench.tui.components.help_modal import HELP_KEYS


class GuidelinesModal(ModalScreen[None]):
    """What each question of the case asks and what each value means
    (`workbench.present.guidelines`); escape, `g` or `q` closes it."""

    HELP_TITLE = "codebook guidelines"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,g,q", "close", "close", key_display="esc",
                tooltip="close the guidelines, back to the case"),
        HELP_KEYS,
    ]

    DEFAULT_CSS = """
    GuidelinesModal { align: center middle; }
    GuidelinesModal > VerticalScroll {
        width: 100%; max-width: 100; height: auto; max-height: 100%; border: thick $accent;
        background: $surface; padding: 0 1; margin-bottom: 1;
    }
    """

    def __init__(self, fields: Sequence[str]) -> None:
        super().__init__()
        self.fields = [f for f in fields]
        """The case's fields, in the order the label panel asks them."""

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static("[b]Guidelines[/b] · the questions of this case and what each "
                         "value means", markup=True)
            yield Static("\n".join(guidelines(self.fields)), markup=False, id="guidelines")
        yield Footer(compact=True)

    def action_close(self) -> None:
        """Close the guidelines."""
        self.dismiss(None)
