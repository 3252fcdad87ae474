"""One case of the flip inspector: the panes of `workbench.present.case` (the ones `paw flips
show` prints), each in its own bordered widget: the original and edited question side by side
(stacked under 110 columns) with the edit highlighted, the options with gold and which answer
chose which, the option distributions before and after as bars with their JSD, and the chains
(for an F-block case the original and edited chain side by side, and the continuation). `n`/`p`
step through the list's cases; `y` copies the case id; `s` shows the case in the store's terms
(ids, a Python and a SQL line) for a script.
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

from workbench.present.case import PANE_KEYS, case_panes, store_ids_text
from workbench.tui.host import WorkbenchHost

if TYPE_CHECKING:
    from analysis.flips.case import FlipCase


class FlipCaseScreen(Screen[None]):
    """The case `ids[index]`; `n`/`p` move through `ids` (the inspector's current page)."""

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]

    DEFAULT_CSS = """
    FlipCaseScreen #case-body { height: 1fr; }
    FlipCaseScreen .pane { border: round $primary; height: auto; padding: 0 1; }
    FlipCaseScreen .pair { height: auto; }
    FlipCaseScreen.-narrow .pair { layout: vertical; }
    FlipCaseScreen.-wide .pair { layout: horizontal; }
    FlipCaseScreen.-wide .pair > .pane { width: 1fr; }
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
        def pane(key: str) -> Static:
            return Static("", id=key, classes="pane", markup=False)

        yield Static("", id="status", markup=False)
        # One widget per pane key (`PANE_KEYS`), drawn or hidden per case; a before/after
        # pair shares a row from 110 columns.
        with VerticalScroll(id="case-body"):
            yield Static("", id="header", markup=False)
            yield pane("context")
            with Horizontal(id="texts", classes="pair"):
                yield pane("original")
                yield pane("edited")
            yield pane("options")
            yield pane("distribution")
            with Horizontal(id="chains", classes="pair"):
                yield pane("chain_original")
                yield pane("chain_edited")
            yield pane("output")
            yield pane("baseline")
        yield Footer()

    def on_mount(self) -> None:
        self.show_case()

    def show_case(self) -> None:
        """Read the case from the store and draw its panes (a few indexed reads)."""
        from analysis.flips.case import flip_case

        case = flip_case(self.paw.db, self.ids[self.index])
        self.case = case
        self.query_one("#status", Static).update(
            f"case {self.index + 1} of {len(self.ids)} on this page · n next · p prev · "
            f"escape back")
        panes = {pane.key: pane for pane in case_panes(case)}
        for key in PANE_KEYS:
            widget = self.query_one(f"#{key}", Static)
            pane = panes.get(key)
            widget.display = pane is not None
            if pane is None:
                continue
            # Text, not str: a title is never read as markup.
            widget.border_title = Text(pane.title) if pane.title else None
            widget.border_subtitle = Text(pane.note) if pane.note else None
            widget.update(pane.text())
        self.query_one("#chains").display = "chain_original" in panes

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
            self.notify(store_ids_text(self.case), title="In the store", timeout=15)
