"""The answer options of a case, with the gold and (once chosen) the rater's new answer marked."""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.widgets import Static


class OptionsPanel(Static):
    """Options as `A  text` lines; the gold is marked `gold`, a chosen alternative `new`."""

    DEFAULT_CSS = """
    OptionsPanel {
        height: auto;
        border: round $primary 50%;
        border-title-color: $text-primary;
        padding: 0 1;
    }
    """

    def on_mount(self) -> None:
        self.border_title = "Options"

    def show(self, options: Sequence[tuple[str, str]], gold: str,
             alternative: str | None = None) -> None:
        """Display the options.

        Args:
            options: (label, text) pairs in display order.
            gold: the gold label of the original question.
            alternative: the letter this rater chose as now correct, if any.
        """
        lines: list[Content] = []
        for label, text in options:
            if label == gold:
                tag: tuple[str, str] = ("  ◆ gold", "bold $text-success")
            elif label == alternative:
                tag = ("  ◇ your new answer", "bold $text-warning")
            else:
                tag = ("", "")
            # Plain text parts: option text is data, never markup.
            lines.append(Content.assemble((f"{label}", "bold"), "  ", text, tag))
        self.update(Content("\n").join(lines))
