"""The flip inspector: an audit's edits, filtered and sorted, one page at a time; enter opens a
case side by side with the edit highlighted and the option distributions before and after.

Every query is `analysis.flips.listing` (the same as `paw flips`): `list_flips` pages in SQL over
the indexed `flip_index`, so opening and filtering stay fast on 50,000 edits; each filter
change runs in a thread worker with its own connection and only the newest result is drawn.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from workbench.tui.host import WorkbenchHost
from workbench.tui.widgets.list_table import ListTable
from workbench.tui.messages import FilterValuesRead, FlipsListed

if TYPE_CHECKING:
    from analysis.flips.listing import FlipFilter, FlipPage, FlipRow

PAGE = 50
"""Rows per page (a 36-row terminal shows about 30)."""

ORDER_CYCLE: tuple[str, ...] = ("id", "jsd", "family", "item", "arm")
"""Sort orders `o` cycles through (keys of `analysis.flips.listing.ORDERS`)."""

FLIPPED_CYCLE: tuple[bool | None, ...] = (True, False, None)
"""flips only → kept answers only → every answered edit."""


def _cycle(values: tuple, current: Any) -> Any:
    return values[(values.index(current) + 1) % len(values)] if current in values else values[0]


def filter_line(flt: FlipFilter, order: str, all_audits: bool) -> str:
    """The filter bar: each filter's key and current value (the inspector's own legend)."""
    def one(values: tuple[str, ...]) -> str:
        return values[0] if values else "any"

    shown = {True: "flips", False: "kept", None: "all edits"}[flt.flipped]
    chain = {None: "any", True: "updated", False: "not updated"}[flt.chain_updated]
    scope = f"a all runs{' · d dataset:' + (flt.dataset or 'any') if all_audits else ''}"
    return (f"f {shown} · b block:{one(flt.blocks)} · g family:{one(flt.families)} · "
            f"i intent:{one(flt.intents)} · m arm:{one(flt.arms)} · u chain:{chain} · "
            f"j judge:{flt.judge or 'any'} · o sort:{order} · {scope}"
            f"{'(on)' if all_audits else '(off)'} · / text:{flt.text or '–'}")


def row_cells(row: FlipRow) -> tuple[str, ...]:
    """One table row of the flip list: a shuffle's answer by option text (its flip is by
    text: the letters alone can read 'A→A'), and whether the row flipped, in every mode."""
    chain = {None: "–", True: "yes", False: "no"}[row.chain_updated]
    flip = {None: "–", True: "yes", False: "no"}[row.flipped]
    return (str(row.id), row.item, row.operator_id, row.intent or "–",
            row.answer_cell(width=9, letters=False), flip,
            "–" if row.jsd is None else f"{row.jsd:.3f}", chain, ",".join(row.judge) or "–",
            row.arm)


COLUMNS = ("id", "item", "operator", "int.", "answer", "flip", "JSD", "chain", "judge",
           "arm")
"""The arm comes last: its labels are long, and at 80 columns the rest must stay visible."""


class FlipsScreen(Screen[None]):
    """Filterable, sortable, paginated list of edits; enter shows the case."""

    DEFAULT_CSS = """
    FlipsScreen #filters { height: auto; padding: 0 1; background: $boost 50%; }
    FlipsScreen #search { display: none; border: none; height: 1; padding: 0 1; }
    FlipsScreen #search.shown { display: block; }
    FlipsScreen #flips { height: 1fr; }
    FlipsScreen #row-detail { height: 1; padding: 0 1; background: $boost 50%; }
    """

    BINDINGS = [
        Binding("enter", "open_case", "case", show=False),
        Binding("f", "cycle('flipped')", "flips/kept/all", show=False),
        Binding("b", "cycle('block')", "block", show=False),
        Binding("g", "pick('family')", "family", show=False),
        Binding("i", "cycle('intent')", "intent", show=False),
        Binding("m", "pick('arm')", "arm", show=False),
        Binding("u", "cycle('chain')", "chain", show=False),
        Binding("j", "cycle('judge')", "judge", show=False),
        Binding("o", "cycle('order')", "sort", show=False),
        Binding("a", "toggle_all", "all runs", show=False),
        Binding("d", "cycle('dataset')", "dataset", show=False),
        Binding("slash", "search", "search"),
        Binding("x", "clear", "clear filters"),
        Binding("e", "export", "export CSV", show=False),
        Binding("y", "copy_row", "copy row", show=False),
        Binding("left_square_bracket", "page(-1)", "prev page", key_display="["),
        Binding("right_square_bracket", "page(1)", "next page", key_display="]"),
        Binding("q", "app.quit", "quit"),
    ]

    def __init__(self) -> None:
        from analysis.flips.listing import FlipFilter

        super().__init__()
        self.filter: FlipFilter = FlipFilter()
        """The filter on screen."""
        self.order = ORDER_CYCLE[0]
        self.page_offset = 0
        self.audit_id: int | None = None
        """The run shown (None with `all_audits`)."""
        self.all_audits = False
        self.page: FlipPage | None = None
        """The rows on screen."""
        self.values: dict[str, list[str]] = {}
        """What each filter can take (arms, families, intents, datasets)."""
        self._request = 0
        self._drawn_request = 0
        self.requested_at = 0.0
        """When the latest listing was asked for (perf_counter; the bench reads it)."""
        self.painted_at = 0.0
        """When its page was on screen."""
        self._db_lock = threading.Lock()
        self._reader: Any = None
        self._stamp: tuple | None = None
        """The store's stamp read just before the page on screen was listed."""
        self.refreshed_at: float | None = None
        """When the page on screen was read (time.time())."""

    @property
    def paw(self) -> WorkbenchHost:
        """The app, as the `WorkbenchHost` it provides."""
        return cast(WorkbenchHost, self.app)

    def compose(self) -> ComposeResult:
        yield Static("choose a run on the Runs screen (1)", id="status", markup=False)
        yield Static("", id="filters", markup=False)
        yield Input(id="search", placeholder="text in the item, question, operator or edit; "
                                             "enter applies, escape closes")
        table: DataTable = ListTable(id="flips", cursor_type="row", zebra_stripes=True,
                                     fixed_columns=1)
        table.add_columns(*COLUMNS)
        yield table
        # The highlighted row in full: at 80 columns the arm (last) is cut in the table.
        yield Static("", id="row-detail", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        from workbench.tui.follow import FOLLOW_SECONDS

        self.query_one("#flips", DataTable).focus()
        self.set_interval(FOLLOW_SECONDS, self._follow)

    def _follow(self) -> None:
        if self.is_current and self.paw.db_exists and self._stamp is not None:
            self._check_stamp(self._stamp)

    @work(thread=True, exclusive=True, exit_on_error=False, group="flips-follow",
          name="following the runs")
    def _check_stamp(self, seen: tuple) -> None:
        """Re-list when the run shown (or any run, with all runs) moved on since listed."""
        with self._db_lock:
            if self._reader is None:
                return
            now = self._scope_stamp(self._reader)
        if now != seen and seen is self._stamp:
            self.app.call_from_thread(self.reload, True)

    def _scope_stamp(self, db: Any) -> tuple:
        from workbench.tui.follow import run_stamp, store_stamp
        return store_stamp(db) if self.all_audits else run_stamp(db, self.audit_id)

    def on_screen_resume(self) -> None:
        """Back on the inspector (key 2, enter on Runs): follow the run chosen there. A
        mode switch back to this screen resumes it without a Show event."""
        self.on_show()

    def on_show(self) -> None:
        target = self.paw.focus_audit
        if target != self.audit_id or self.page is None:
            self.audit_id = target
            self.page_offset = 0
            self.reload(values=True)

    # ---- loading (thread worker, own connection, newest result wins) ------------------

    def reload(self, values: bool = False) -> None:
        """List the current page for the current filter."""
        self.requested_at = time.perf_counter()
        self._request += 1
        self.query_one("#filters", Static).update(
            filter_line(self.filter, self.order, self.all_audits))
        self._list(self._request, None if self.all_audits else self.audit_id, self.filter,
                   self.order, self.page_offset, values)

    @work(thread=True, exclusive=True, exit_on_error=False, group="flips",
          name="listing flips")
    def _list(self, request: int, audit_id: int | None, flt: FlipFilter, order: str,
              offset: int, values: bool) -> None:
        from analysis.flips.listing import filter_values, list_flips
        from store.datasets import list_dataset_names
        from store.db import open_db
        from store.errors import NotFound

        with self._db_lock:  # one reader connection, reused (opening one costs ~60 ms)
            if self._reader is None:
                self._reader = open_db(self.paw.db_path)
            db = self._reader
            if request != self._request:
                return  # superseded while waiting for the connection
            self._stamp = self._scope_stamp(db)  # before the page: a later change shows
            self.refreshed_at = time.time()
            try:
                page = list_flips(db, audit_id, flt, limit=PAGE, offset=offset, order=order)
            except NotFound as exc:
                self.post_message(FlipsListed(request, None, {}, str(exc)))
                return
            # The page first (what the auditor waits for), the filters' values after it.
            self.post_message(FlipsListed(request, page, {}, ""))
            if values:
                # With no run chosen the page is the latest run's: offer its values.
                shown = audit_id if audit_id is not None else (
                    page.audit_ids[0] if len(page.audit_ids) == 1 else None)
                found = filter_values(db, shown) if shown is not None else {}
                found["datasets"] = list_dataset_names(db)
                self.post_message(FilterValuesRead(found))

    def on_unmount(self) -> None:
        with self._db_lock:
            if self._reader is not None:
                self._reader.conn.close()
                self._reader = None

    @on(FlipsListed)
    def _draw(self, message: FlipsListed) -> None:
        if message.request != self._request:
            return  # a newer filter is being listed
        from workbench.tui.follow import refreshed_text

        status = self.query_one("#status", Static)
        when = refreshed_text(self.refreshed_at)
        if message.page is None:
            status.update(f"{message.error or 'no runs with edits yet'} · {when}")
            self.query_one("#flips", DataTable).clear()
            self.query_one("#row-detail", Static).update("")
            return
        page: FlipPage = message.page
        self.page = page
        table = self.query_one("#flips", DataTable)
        table.clear()
        for row in page.rows:
            table.add_row(*(Text(c) for c in row_cells(row)), key=str(row.id))
        self.call_after_refresh(self._painted, message.request)
        scope = "all runs" if self.all_audits else (
            page.rows[0].audit if page.rows else f"run {self.audit_id}")
        end = page.offset + len(page.rows)
        what = {True: "flips", False: "kept answers", None: "edits"}[self.filter.flipped]
        if not page.rows:
            # Nothing matches: say which key widens it (a newcomer sees an empty table).
            self.query_one("#row-detail", Static).update("")
            status.update(f"{scope} · 0 {what} match · {when} · f flips/kept/all edits · "
                          f"x clears the filters")
            return
        status.update(f"{scope} · {page.total} {what} match · rows "
                      f"{page.offset + 1}–{end} · {when} · enter case · [ ] pages")

    @on(FilterValuesRead)
    def _values_read(self, message: FilterValuesRead) -> None:
        self.values = dict(message.values)

    def _painted(self, request: int) -> None:
        # After the refresh that drew the page: what the responsiveness bench measures.
        self.painted_at = time.perf_counter()
        self._drawn_request = request

    # ---- filters ----------------------------------------------------------------------

    def action_cycle(self, what: str) -> None:
        """Step one filter (or the sort order) to its next value."""
        flt = self.filter
        if what == "flipped":
            flt = replace(flt, flipped=_cycle(FLIPPED_CYCLE, flt.flipped))
        elif what == "block":
            from analysis.flips.index import ROLE_BLOCK

            blocks = ((),) + tuple((b,) for b in dict.fromkeys(ROLE_BLOCK.values()))
            flt = replace(flt, blocks=_cycle(blocks, flt.blocks))
        elif what in ("family", "intent", "arm", "dataset"):
            key = {"family": "families", "intent": "intents", "arm": "arms",
                   "dataset": "datasets"}[what]
            options = ((),) + tuple((v,) for v in self.values.get(key, []))
            if what == "dataset":
                current = (flt.dataset,) if flt.dataset else ()
                flt = replace(flt, dataset=(_cycle(options, current) or (None,))[0])
            else:
                field = {"family": "families", "intent": "intents", "arm": "arms"}[what]
                flt = replace(flt, **{field: _cycle(options, getattr(flt, field))})
        elif what == "chain":
            flt = replace(flt, chain_updated=_cycle((None, True, False), flt.chain_updated))
        elif what == "judge":
            flt = replace(flt, judge=_cycle((None, "yes", "no", "none"), flt.judge))
        elif what == "order":
            self.order = _cycle(ORDER_CYCLE, self.order)
        self.filter = flt
        self.page_offset = 0
        self.reload()

    def action_pick(self, what: str) -> None:
        """Choose the family or arm from a list (with "any"), instead of cycling."""
        from workbench.tui.components.pick_modal import ANY, PickModal

        field = {"family": "families", "arm": "arms"}[what]
        values = self.values.get(field, [])
        current = getattr(self.filter, field)

        def chosen(value: str | None) -> None:
            if value is None:
                return
            picked: tuple[str, ...] = () if value == ANY else (value,)
            self.filter = replace(self.filter, families=picked) if field == "families" \
                else replace(self.filter, arms=picked)
            self.page_offset = 0
            self.reload()

        self.app.push_screen(PickModal(f"Filter by {what}", values,
                                       current[0] if current else None), chosen)

    def action_toggle_all(self) -> None:
        """All runs in the store (with the dataset filter) ↔ the chosen run."""
        self.all_audits = not self.all_audits
        self.page_offset = 0
        self.reload(values=True)

    def action_clear(self) -> None:
        """Back to the default filter: this run's flips."""
        from analysis.flips.listing import FlipFilter

        self.filter = FlipFilter()
        self.order = ORDER_CYCLE[0]
        self.page_offset = 0
        self.query_one("#search", Input).value = ""
        self.reload()

    def action_search(self) -> None:
        """Open the free-text filter."""
        search = self.query_one("#search", Input)
        search.add_class("shown")
        search.focus()

    @on(Input.Submitted, "#search")
    def _search(self, event: Input.Submitted) -> None:
        self.filter = replace(self.filter, text=event.value.strip() or None)
        self.page_offset = 0
        self.query_one("#search", Input).remove_class("shown")
        self.query_one("#flips", DataTable).focus()
        self.reload()

    def key_escape(self) -> None:
        search = self.query_one("#search", Input)
        if search.has_class("shown"):
            search.remove_class("shown")
            self.query_one("#flips", DataTable).focus()

    def action_page(self, step: int) -> None:
        """The next or previous page."""
        if self.page is None:
            return
        offset = self.page_offset + step * PAGE
        if offset < 0 or offset >= max(self.page.total, 1):
            return
        self.page_offset = offset
        self.reload()

    # ---- the case -----------------------------------------------------------------------

    def row_ids(self) -> list[int]:
        """Case ids on the current page, in order."""
        return [row.id for row in self.page.rows] if self.page is not None else []

    def action_open_case(self) -> None:
        """Show the highlighted case."""
        from workbench.tui.screens.flip_case import FlipCaseScreen

        table = self.query_one("#flips", DataTable)
        ids = self.row_ids()
        if not ids:
            return
        self.app.push_screen(FlipCaseScreen(ids, min(table.cursor_row, len(ids) - 1)))

    @on(DataTable.RowSelected, "#flips")
    def _selected(self) -> None:
        self.action_open_case()

    @on(DataTable.RowHighlighted, "#flips")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        row = next((r for r in (self.page.rows if self.page else ())
                    if str(r.id) == event.row_key.value), None)
        flip = "" if row is None or row.flipped is None else (
            " · flipped" if row.flipped else " · kept")
        self.query_one("#row-detail", Static).update(
            "" if row is None else f"{row.id} · {row.arm} · {row.item} · {row.operator_id} "
                                   f"({row.intent or '–'}) · {row.answer_cell()}{flip}")

    def action_copy_row(self) -> None:
        """Copy the highlighted row (header and cells, tab-separated) to the clipboard."""
        from workbench.present.flips_csv import tsv_line

        rows = self.page.rows if self.page is not None else ()
        if not rows:
            self.notify("no row to copy")
            return
        row = rows[min(max(self.query_one("#flips", DataTable).cursor_row, 0), len(rows) - 1)]
        self.app.copy_to_clipboard(tsv_line(row))
        self.notify(f"copied edit {row.id} (tab-separated, with its header)")

    def action_export(self) -> None:
        """Every row the filter matches (not only this page) as CSV in a new file."""
        if self.page is None:
            self.notify("nothing listed yet")
            return
        self._export(None if self.all_audits else self.audit_id, self.filter, self.order)

    @work(thread=True, exclusive=True, exit_on_error=False, group="flips-export",
          name="exporting flips")
    def _export(self, audit_id: int | None, flt: FlipFilter, order: str) -> None:
        from workbench.tui.export_files import export_flips

        scope = "all-runs" if audit_id is None else (
            self.page.rows[0].audit if self.page and self.page.rows else f"run-{audit_id}")
        with self._db_lock:
            if self._reader is None:
                return
            path, n = export_flips(self._reader, self.paw.db_path, scope, audit_id, flt, order)
        self.app.call_from_thread(self.notify, f"wrote {path} ({n} rows)", timeout=10)

    def palette_commands(self) -> list[SystemCommand]:
        """Inspector commands in the palette (ctrl+p)."""
        return [SystemCommand("Clear flip filters", "Back to this run's flips", self.action_clear),
                SystemCommand("Search flips", "Filter by free text", self.action_search),
                SystemCommand("Flips of all runs", "Toggle all runs / the chosen run",
                              self.action_toggle_all),
                SystemCommand("Export flips as CSV (e)", "Every row the filter matches, in a "
                              "new file next to the database", self.action_export),
                SystemCommand("Copy flip row (y)", "The highlighted row, tab-separated",
                              self.action_copy_row)]
