"""One case's evidence in a scrolling pane, and which of it has actually been on screen.

The panels are the codebook's evidence (`annotate.codebook.EVIDENCE`): the question with
its edit, the options with the gold, the model's answers, its reasoning. A label field
names what it depends on (`Field.needs`); the labelling screen asks `unseen(needs)` before
it records a value, so a rater cannot answer harm without the answers, or chain
registration without the reasoning, having been on screen. A panel counts as seen once
every one of its lines has been inside the viewport during this session — a long chain
has to be scrolled through, not merely begun.

Only frames composed for the case on screen count. After `show` draws another case the
compositor's map still describes the previous case — its panels, their heights, its scroll
position — until the screen's layout is next refreshed (`call_after_refresh` can run
before that), so nothing is recorded until the screen's `screen_layout_refresh_signal`
has fired after `show` (`_drawn`), the new case starts scrolled to its top at once (never
drawn at the previous case's offset), and a frame whose scroll offset is not the pane's
current one is skipped. Lines seen at one height of a panel (before a resize re-wrapped
it) are not added to lines seen at another.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget

from workbench.tui.widgets.answer_panel import AnswerPanel
from workbench.tui.widgets.chain_panel import ChainPanel
from workbench.tui.widgets.options_panel import OptionsPanel
from workbench.tui.widgets.question_diff import QuestionDiff

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from annotate.sets.cases import CaseView

PANEL_KEYS: dict[str, str] = {"question": "e", "options": "o", "answers": "a",
                              "chain": "c"}
"""The key that brings each panel into view (shown in the footer legend)."""


class CasePanels(VerticalScroll, can_focus=False):
    """Question (with the edit), options, answers and reasoning of one case."""

    class PanelsSeen(Message):
        """Another panel of the case has now been on screen in full."""

        def __init__(self, code: str, names: tuple[str, ...]) -> None:
            super().__init__()
            self.code = code
            """The case."""
            self.names = names
            """Every panel of it seen in full so far."""

    DEFAULT_CSS = """
    CasePanels { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.code: str | None = None
        """The case shown."""
        self._drawn: str | None = None
        """The case the compositor's last frame shows (None between `show` and the refresh
        that draws it)."""
        self._seen: dict[str, dict[str, tuple[int, set[int]] | bool]] = {}

    def compose(self) -> ComposeResult:
        yield QuestionDiff()
        yield OptionsPanel()
        yield AnswerPanel()
        yield ChainPanel()

    def on_mount(self) -> None:
        self.watch(self, "scroll_y", self._scrolled, init=False)
        self.screen.screen_layout_refresh_signal.subscribe(self, self._layout_refreshed)

    def _scrolled(self) -> None:
        self.call_after_refresh(self.note_visible)

    def on_resize(self) -> None:
        self.call_after_refresh(self.note_visible)

    # ---- what is on screen ----------------------------------------------------------

    def panel(self, name: str) -> Widget:
        """The widget that shows evidence `name` ('question', 'options', ...)."""
        kinds: dict[str, type[Widget]] = {"question": QuestionDiff, "options": OptionsPanel,
                                          "answers": AnswerPanel, "chain": ChainPanel}
        return self.query_one(kinds[name])

    def present(self) -> list[str]:
        """Evidence panels this case shows, top to bottom."""
        return [name for name in PANEL_KEYS if self.panel(name).display]

    def show(self, view: CaseView, alternative: str | None = None) -> None:
        """Draw a case (and start tracking what of it is seen, unless it is the same case)."""
        self.query_one(QuestionDiff).show(
            question=view.question, edited=view.edited_question,
            removed=view.original_spans, inserted=view.edited_spans, segments=view.segments,
            context=view.context)
        self.query_one(OptionsPanel).show(view.options, view.gold, alternative)
        self.query_one(AnswerPanel).show(before=view.answer_before, after=view.answer_after,
                                         options=view.options_dict)
        self.query_one(ChainPanel).show(view.chain_after)
        if view.code != self.code:
            self.code = view.code
            self._drawn = None  # the last frame is the previous case's: read nothing from it
            # At once, not after the next refresh (Textual's default): otherwise one frame
            # shows the new case at the previous case's scroll offset.
            self.scroll_home(animate=False, immediate=True)
        self._seen.setdefault(view.code, {})
        self.call_after_refresh(self.note_visible)

    def _layout_refreshed(self, _screen: object) -> None:
        """The screen's layout was refreshed: the compositor's map now shows the case that
        `show` drew last, so its frames count from here on."""
        self._drawn = self.code
        self.note_visible()

    def _frame_is_current(self, geometry: object) -> bool:
        """True when a panel's geometry in the map was laid out at the pane's present scroll
        offset (a map from before a scroll places it elsewhere)."""
        region, virtual = geometry.region, geometry.virtual_region  # type: ignore[attr-defined]
        return region.y - virtual.y == self.content_region.y - round(self.scroll_y)

    def _rows(self, name: str) -> tuple[int, int] | None:
        """(top, height) of a panel in the pane's virtual space, None if not laid out."""
        widget = self.panel(name)
        if not widget.display:
            return None
        region = widget.virtual_region
        if region.height <= 0:
            return None
        return region.y, region.height

    def note_visible(self) -> None:
        """Record which lines of each panel are on screen, from the last composed frame
        (the compositor's map: what the rater was actually shown, not a pending layout)."""
        from textual.errors import NoWidget

        if self.code is None or self._drawn != self.code or not self.is_mounted:
            return
        seen = self._seen.setdefault(self.code, {})
        before = sum(1 for value in seen.values() if value is True)
        for name in self.present():
            if seen.get(name) is True:
                continue
            try:
                geometry = self.screen.find_widget(self.panel(name))
            except NoWidget:
                continue
            if not self._frame_is_current(geometry):
                return  # a frame from before the last scroll: the next refresh brings one
            region, visible = geometry.region, geometry.region.intersection(geometry.clip)
            if region.height <= 0:
                continue
            partial = seen.get(name)
            # Lines are counted per height: a resize that re-wraps the panel starts over.
            lines = partial[1] if isinstance(partial, tuple) and partial[0] == region.height \
                else set()
            lines.update(y - region.y for y in range(visible.y, visible.bottom))
            seen[name] = True if lines >= set(range(region.height)) else (region.height, lines)
        done = tuple(name for name, value in seen.items() if value is True)
        if len(done) > before:
            self.post_message(self.PanelsSeen(self.code, done))

    def was_seen(self, name: str) -> bool:
        """True once every line of panel `name` has been on screen (absent panels count as
        seen: a case without a flip has no answers to read)."""
        if name not in self.present() or self.code is None:
            return True
        return self._seen.get(self.code, {}).get(name) is True

    def unseen(self, names: Iterable[str]) -> list[str]:
        """Those of `names` not yet seen in full, in order."""
        return [name for name in names if not self.was_seen(name)]

    def reveal(self, name: str) -> None:
        """Scroll so that panel `name` is in view: from its first unseen line if it is taller
        than the pane, else the whole of it."""
        rows = self._rows(name)
        if rows is None:
            return
        start, size = rows
        height = self.scrollable_content_region.height
        target = start
        partial = self._seen.get(self.code or "", {}).get(name)
        lines = partial[1] if isinstance(partial, tuple) and partial[0] == size else None
        if lines is not None and size > height:
            target = start + min((r for r in range(size) if r not in lines), default=0)
        elif size <= height and start >= self.scroll_y and start + size <= self.scroll_y + height:
            return  # already entirely in view
        self.scroll_to(y=target, animate=False)
        self.call_after_refresh(self.note_visible)
