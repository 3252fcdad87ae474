"""The prompt after a stereotype flag: which kind of assumption (the category's digit keys).

Like the new-answer prompt after "shifted", it asks the field that the value just chosen
brings in, and the two are recorded together (`annotate.labels.COMPANIONS`), so the shared
file shows the same events whatever the value.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from annotate.codebook import FIELDS
from workbench.tui.components.help_modal import HELP_KEYS


class CategoryModal(ModalScreen[str | None]):
    """Asks one categorical field by its digit keys; dismisses with the value, or None on
    escape (nothing recorded)."""

    HELP_TITLE = "which kind"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "back", tooltip="back without recording anything"),
        HELP_KEYS,
    ]

    DEFAULT_CSS = """
    CategoryModal { align: center bottom; }
    CategoryModal > Vertical {
        width: 100%; max-width: 90; height: auto; border: thick $warning;
        background: $surface; padding: 0 1; margin-bottom: 1;
    }
    """

    def __init__(self, field: str) -> None:
        super().__init__()
        self.field = FIELDS[field]
        """The field asked (e.g. stereotype_category)."""

    def compose(self) -> ComposeResult:
        lines = [Content.assemble((self.field.question, "bold"), " · press its key")]
        for value in self.field.values:
            lines.append(Content.assemble((value.key, "bold $text-accent"),
                                          f"  {value.value}: {value.help}"))
        with Vertical():
            yield Static(Content("\n").join(lines), id="category-prompt")
        yield Footer(compact=True)

    def help_rows(self) -> list[tuple[str, str]]:
        """The value keys, read by `on_key`, for the `?` help."""
        return [(v.key, f"{v.value}: {v.help}") for v in self.field.values]

    def on_key(self, event: events.Key) -> None:
        """A value's key records it."""
        value = self.field.value_for_key(event.character or "")
        if value is not None:
            event.stop()
            event.prevent_default()
            self.dismiss(value)

    def action_cancel(self) -> None:
        """Close without choosing."""
        self.dismiss(None)
