"""The model's answer before and after the edit (flips only) and, when asked, its reasoning."""

from __future__ import annotations

from collections.abc import Mapping

from textual.content import Content
from textual.widgets import Static


class AnswerPanel(Static):
    """`before → after` answers of the (unnamed) model; hidden when there is nothing to show."""

    DEFAULT_CSS = """
    AnswerPanel {
        height: auto;
        border: round $primary 50%;
        border-title-color: $text-primary;
        padding: 0 1;
    }
    """

    def on_mount(self) -> None:
        self.border_title = "Model answer"

    def show(self, *, before: str | None, after: str | None, options: Mapping[str, str],
             chain: str | None = None) -> None:
        """Display the answers; hides the panel when neither a flip nor a chain is given.

        Args:
            before: the model's answer label to the original question (flips only).
            after: its answer label to the edited question (flips only).
            options: label -> option text, to spell the answers out.
            chain: the model's reasoning after the edit (chain-registration cases only).
        """
        parts: list[Content] = []
        if before is not None and after is not None:
            parts.append(Content.assemble(
                ("before the edit: ", "$text-muted"), (before, "bold"), " ",
                options.get(before, ""), "\n",
                ("after the edit:  ", "$text-muted"), (after, "bold $text-warning"), " ",
                options.get(after, ""),
            ))
        if chain:
            parts.append(Content.assemble(("reasoning after the edit:\n", "$text-muted"), chain))
        self.display = bool(parts)
        self.update(Content("\n").join(parts))
