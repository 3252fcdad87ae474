"""The question and its edit: one inline diff at 80 columns, side by side when wide.

Narrow terminals show the edited question once, with the words the edit removed struck
through where they stood and the words it inserted highlighted, so the whole edit costs
no extra lines. From 110 columns the original and the edited question stand side by side
(a screen with `HORIZONTAL_BREAKPOINTS` sets its `-wide` class there).
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import Container
from textual.content import Content
from textual.widgets import Static

REMOVED_STYLE = "bold strike $text-error on $error-muted"
"""How text the edit removed or replaced is drawn."""

INSERTED_STYLE = "bold $text-warning on $warning-muted"
"""How text the edit inserted is drawn."""

INLINE_TITLE = ("Edited question · [strike]struck[/]: removed · "
                "[b $text-warning on $warning-muted]highlighted[/]: inserted")
"""Title of the inline diff (the legend of its two styles)."""


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


def inline(segments: Sequence[tuple[str, str]]) -> Content:
    """The core's edit segments as one text: removed struck through, inserted highlighted."""
    styles = {"removed": REMOVED_STYLE, "inserted": INSERTED_STYLE}
    return Content.assemble(*[(text, styles[kind]) if kind in styles else text
                              for kind, text in segments])


class QuestionDiff(Container):
    """Context (if any), then the inline diff (narrow) or both questions (wide)."""

    # The wide layout keys on the screen's `-wide` class: a scoped DEFAULT_CSS would prefix
    # these selectors with `QuestionDiff` and they would never match.
    SCOPED_CSS = False

    DEFAULT_CSS = """
    QuestionDiff { height: auto; layout: vertical; }
    QuestionDiff > Static {
        height: auto;
        border-top: round $primary 50%;
        border-title-color: $text-primary;
        padding: 0 1;
    }
    QuestionDiff > #context { border: none; color: $text-muted; }
    QuestionDiff > #original, QuestionDiff > #edited { display: none; }
    Screen.-wide QuestionDiff {
        layout: grid; grid-size: 2; grid-columns: 1fr 1fr; grid-rows: auto;
    }
    Screen.-wide QuestionDiff > #context { column-span: 2; }
    Screen.-wide QuestionDiff > #inline { display: none; }
    Screen.-wide QuestionDiff > #original, Screen.-wide QuestionDiff > #edited {
        display: block;
    }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="context")
        both = Static(id="inline")
        both.border_title = INLINE_TITLE
        yield both
        original = Static(id="original")
        original.border_title = "Original question"
        yield original
        edited = Static(id="edited")
        edited.border_title = "Edited question (as the model saw it)"
        yield edited

    def show(self, *, question: str, edited: str, removed: Sequence[tuple[int, int]],
             inserted: Sequence[tuple[int, int]], segments: Sequence[tuple[str, str]],
             context: str | None = None) -> None:
        """Display a case's question and its edit.

        Args:
            question: the original question.
            edited: the edited question.
            removed: spans of `question` the edit removed or replaced.
            inserted: spans of `edited` the edit inserted.
            segments: the core's inline diff runs ('same', 'removed', 'inserted', 'gap').
            context: an optional passage shown above.
        """
        context_widget = self.query_one("#context", Static)
        context_widget.display = bool(context)
        context_widget.update(Content(context or ""))
        self.query_one("#inline", Static).update(inline(segments))
        self.query_one("#original", Static).update(
            highlighted(question, removed, REMOVED_STYLE))
        self.query_one("#edited", Static).update(
            highlighted(edited, inserted, INSERTED_STYLE))


def edit_changes(segments: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The edit alone: (removed, inserted) per change, in order ('' where it only inserted
    or only removed). Unchanged runs of blanks between two changed runs do not split one."""
    changes: list[tuple[str, str]] = []
    removed = inserted = ""
    for kind, text in segments:
        if kind == "removed":
            removed += text
        elif kind == "inserted":
            inserted += text
        elif kind in ("same", "gap") and not text.strip() and (removed or inserted):
            continue
        elif removed or inserted:
            changes.append((removed.strip(), inserted.strip()))
            removed = inserted = ""
    if removed or inserted:
        changes.append((removed.strip(), inserted.strip()))
    return [c for c in changes if c[0] or c[1]]


def _cut(text: str, room: int) -> str:
    return text if len(text) <= room else text[:max(1, room - 1)].rstrip() + "…"


def edit_summary(segments: Sequence[tuple[str, str]], budget: int = 150) -> Content:
    """One or two lines naming the edit: “removed” → “inserted” per change (struck /
    highlighted as in the diff), runs cut with '…' to about `budget` characters in all.

    Pinned above a case whose panels are scrolled to the reasoning or the answers, so the
    edit a decision is about stays in view (the adjudication screen).
    """
    changes = edit_changes(segments)
    if not changes:
        return Content("Edit: no word of the question changed")
    room = max(8, (budget - 6 - 5 * len(changes)) // (2 * len(changes)))
    parts: list[str | tuple[str, str]] = ["Edit: "]
    for n, (removed, inserted) in enumerate(changes):
        if n:
            parts.append(" · ")
        if removed:
            parts.append((f"“{_cut(removed, room)}”", REMOVED_STYLE))
        if removed and inserted:
            parts.append(" → ")
        if inserted:
            parts.append((f"“{_cut(inserted, room)}”", INSERTED_STYLE))
        if not inserted:
            parts.append(" removed")
        elif not removed:
            parts.append(" inserted")
    return Content.assemble(*parts)
