"""The model's answer before and after the edit (flips only)."""

from __future__ import annotations

from collections.abc import Mapping

from textual.content import Content
from textual.widgets import Static

from workbench.tui.widgets.options_panel import option_line


class AnswerPanel(Static):
    """`before` and `after` answers of the (unnamed) model; hidden when it did not flip."""

    DEFAULT_CSS = """
    AnswerPanel {
        height: auto;
        border-top: round $primary 50%;
        border-title-color: $text-primary;
        padding: 0 1;
    }
    """

    def on_mount(self) -> None:
        self.border_title = "Model answer"

    def show(self, *, before: str | None, after: str | None,
             options: Mapping[str, str]) -> None:
        """Display the answers; hides the panel unless both are given.

        Args:
            before: the model's answer label to the original question (flips only).
            after: its answer label to the edited question (flips only).
            options: label -> option text, to spell the answers out.
        """
        if before is None or after is None:
            self.display = False
            self.update("")
            return
        self.display = True
        after_line = option_line(after, options.get(after, ""))
        after_line[0] = (after, "bold $text-warning")  # the changed answer stands out
        self.update(Content.assemble(
            ("before the edit: ", "$text-muted"), *option_line(before, options.get(before, "")),
            "\n", ("after the edit:  ", "$text-muted"), *after_line))
