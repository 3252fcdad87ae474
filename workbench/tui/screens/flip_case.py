"""One case of the flip inspector: original vs edited text side by side (stacked under 110
columns) with the edit highlighted, options with gold, answers, the option distributions
before and after as bars with their JSD, and for F-block cases the original and edited chain
and the continuation. `n`/`p` step through the list's cases; `y` copies the case id; `s`
shows the case in the store's terms (ids, a Python and a SQL line) for a script.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from workbench.tui.host import WorkbenchHost
from workbench.tui.widgets import flip_view as view

if TYPE_CHECKING:
    from analysis.flips.case import FlipCase


EDITED_TITLES: dict[str, str] = {
    "demographic": "Question with the demographic edit",
    "cfv_answer": "Changed case (the model's CFV proposal)",
}
"""Title of the edited text of a seed-003 edit (others: 'Edited question')."""


class FlipCaseScreen(Screen[None]):
    """The case `ids[index]`; `n`/`p` move through `ids` (the inspector's current page)."""

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]

    DEFAULT_CSS = """
    FlipCaseScreen #case-body { height: 1fr; }
    FlipCaseScreen .pane { border: round $primary; height: auto; padding: 0 1; }
    FlipCaseScreen #texts { height: auto; }
    FlipCaseScreen.-narrow #texts { layout: vertical; }
    FlipCaseScreen.-wide #texts { layout: horizontal; }
    FlipCaseScreen.-wide #texts > .pane { width: 1fr; }
    """

    BINDINGS = [
        Binding("escape", "app.pop_screen", "back"),
        Binding("n", "step(1)", "next"),
        Binding("p", "step(-1)", "prev"),
        Binding("y", "copy_id", "copy id"),
        Binding("s", "store_ids", "store ids"),
        Binding("q", "app.quit", "quit"),
    ]

    def __init__(self, ids: Sequence[int], index: int = 0) -> None:
        super().__init__()
        self.ids = list(ids)
        self.index = index
        self.case: FlipCase | None = None
        """The case on screen."""

    @property
    def paw(self) -> WorkbenchHost:
        """The app, as the `WorkbenchHost` it provides."""
        return cast(WorkbenchHost, self.app)

    def compose(self) -> ComposeResult:
        yield Static("", id="status", markup=False)
        with VerticalScroll(id="case-body"):
            yield Static("", id="case-header", markup=False)
            with Horizontal(id="texts"):
                yield Static("", id="original", classes="pane", markup=False)
                yield Static("", id="edited", classes="pane", markup=False)
            yield Static("", id="options", classes="pane", markup=False)
            yield Static("", id="distribution", classes="pane", markup=False)
            yield Static("", id="chains", classes="pane", markup=False)
            yield Static("", id="output", classes="pane", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.show_case()

    def show_case(self) -> None:
        """Read the case from the store and draw it (a few indexed reads)."""
        from analysis.flips.case import flip_case

        case = flip_case(self.paw.db, self.ids[self.index])
        self.case = case
        self.query_one("#status", Static).update(
            f"case {self.index + 1} of {len(self.ids)} on this page · n next · p prev · "
            f"escape back")
        self.query_one("#case-header", Static).update(view.header_text(case))
        removed, inserted = case.question_spans
        original = self.query_one("#original", Static)
        edited = self.query_one("#edited", Static)
        if case.edited_question == case.question:
            # F-block and shuffle edits leave the question as it was: once, so that at
            # 80×24 the options (and the chain's edit) are not pushed two pages down.
            original.border_title = "Question (not edited: " + (
                "the options were shuffled)" if case.role == "shuffle" else
                "the edit is in the chain below)" if case.block == "F" else "unchanged)")
            original.update(case.question)
            edited.display = False
        else:
            original.border_title = "Original question"
            edited.display = True
            edited.border_title = EDITED_TITLES.get(case.role,
                                                    "Edited question (as the model saw it)")
            original.update(view.highlighted(case.question, removed, view.REMOVED))
            edited.update(view.highlighted(case.edited_question, inserted, view.INSERTED))
        options = self.query_one("#options", Static)
        if case.role == "shuffle":
            options.border_title = "Options before → after the shuffle"
            options.update(view.shuffle_options_text(case))
        else:
            options.border_title = "Options" + (
                f" (gold = the change's target {case.gold_after}; original gold "
                f"{case.gold_before})" if case.role == "cfv_answer" else "")
            options.update(view.options_text(case.options_after, case.gold_after,
                                             case.base_answer, case.answer))
        dist = self.query_one("#distribution", Static)
        dist.border_title = "Option distribution at the answer position"
        dist.update(view.distribution_text(case))
        chains = self.query_one("#chains", Static)
        if case.block == "F" and case.original_chain is not None:
            chains.display = True
            chains.border_title = "Baseline chain (edited part struck) → edited chain"
            old_spans, new_spans = case.chain_spans
            text = Text()
            text.append_text(view.highlighted(case.original_chain, old_spans, view.REMOVED))
            text.append("\n\n— edited, the model continued from here —\n", style="dim")
            text.append_text(view.highlighted(case.edited_chain or "", new_spans,
                                              view.INSERTED))
            chains.update(text)
        else:
            chains.display = False
        output = self.query_one("#output", Static)
        output.border_title = ("Continuation of the edited chain" if case.block == "F"
                               else "The model's answer to the edited question")
        output.update(case.output or "(no output stored)")

    def action_step(self, step: int) -> None:
        """The next or previous case of the inspector's page."""
        target = self.index + step
        if 0 <= target < len(self.ids):
            self.index = target
            self.show_case()
            self.query_one("#case-body", VerticalScroll).scroll_home(animate=False)

    def action_copy_id(self) -> None:
        """Copy the case id (the job id `paw flips show` takes) to the clipboard."""
        if self.case is not None:
            self.app.copy_to_clipboard(str(self.case.id))
            self.notify(f"copied case id {self.case.id} (paw flips show {self.case.id})")

    def action_store_ids(self) -> None:
        """Show the case in the store's terms, for a script."""
        if self.case is not None:
            self.notify(view.ids_text(self.case), title="In the store", timeout=15)
