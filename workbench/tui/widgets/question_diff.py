"""Original and edited question, with what the edit removed and inserted highlighted."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import Container
from textual.content import Content
from textual.widgets import Static

REMOVED_STYLE = "bold strike $text-error on $error-muted"
"""How text the edit removed or replaced is drawn on the original side."""

INSERTED_STYLE = "bold $text-warning on $warning-muted"
"""How text the edit inserted is drawn on the edited side."""


def highlighted(text: str, spans: Sequence[tuple[int, int]], style: str) -> Content:
    """`text` as plain content (never parsed as markup) with `spans` drawn in `style`.

    Args:
        text: the question text.
        spans: half-open character ranges to highlight (the core's edit spans).
        style: a Textual style string.
    """
    parts: list[str | tuple[str, str]] = []
    at = 0
    for start, end in sorted(spans):
        start, end = max(start, at), min(end, len(text))
        if start >= end:
            continue
        parts.append(text[at:start])
        parts.append((text[start:end], style))
        at = end
    parts.append(text[at:])
    return Content.assemble(*parts)


class QuestionDiff(Container):
    """Two panes, original and edited; side by side on wide screens, stacked at 80 columns.

    The screen sets the layout through its `-wide` breakpoint class (see annotate.tcss).
    """

    DEFAULT_CSS = """
    QuestionDiff { height: auto; layout: vertical; }
    QuestionDiff > Static {
        height: auto;
        border: round $primary 50%;
        border-title-color: $text-primary;
        padding: 0 1;
    }
    QuestionDiff > #context { border: none; color: $text-muted; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="context")
        original = Static(id="original")
        original.border_title = "Original question"
        yield original
        edited = Static(id="edited")
        edited.border_title = "Edited question (as the model saw it)"
        yield edited

    def show(self, *, question: str, edited: str, removed: Sequence[tuple[int, int]],
             inserted: Sequence[tuple[int, int]], context: str | None = None) -> None:
        """Display a case's two questions.

        Args:
            question: the original question.
            edited: the edited question.
            removed: spans of `question` the edit removed or replaced.
            inserted: spans of `edited` the edit inserted.
            context: an optional passage shown above both.
        """
        context_widget = self.query_one("#context", Static)
        context_widget.display = bool(context)
        context_widget.update(Content(context or ""))
        self.query_one("#original", Static).update(
            highlighted(question, removed, REMOVED_STYLE))
        self.query_one("#edited", Static).update(
            highlighted(edited, inserted, INSERTED_STYLE))
