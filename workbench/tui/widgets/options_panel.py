"""The answer options of a case, with the gold and (once chosen) the rater's new answer marked."""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.widgets import Static


def option_line(label: str, text: str) -> list[str | tuple[str, str]]:
    """`A  text` parts; a label that is its own text (Yes / No / Maybe) is written once."""
    if text.strip().lower() == label.strip().lower():
        return [(label, "bold")]
    # Plain text parts: option text is data, never markup.
    return [(label, "bold"), "  ", text]


class OptionsPanel(Static):
    """Options as `A  text` lines; the gold is marked `gold`, a chosen alternative `new`."""

    DEFAULT_CSS = """
    OptionsPanel {
        height: auto;
        border-top: round $primary 50%;
        border-title-color: $text-primary;
        padding: 0 1;
    }
    """

    def on_mount(self) -> None:
        self.border_title = "Options · ◆ gold"

    def show(self, options: Sequence[tuple[str, str]], gold: str,
             alternative: str | None = None) -> None:
        """Display the options.

        Args:
            options: (label, text) pairs in display order.
            gold: the gold label of the original question.
            alternative: the option this rater chose as now correct, if any.
        """
        lines: list[Content] = []
        for label, text in options:
            if label == gold:
                tag: tuple[str, str] = ("  ◆ gold", "bold $text-success")
            elif label == alternative:
                tag = ("  ◇ your new answer", "bold $text-warning")
            else:
                tag = ("", "")
            lines.append(Content.assemble(*option_line(label, text), tag))
        self.update(Content("\n").join(lines))
