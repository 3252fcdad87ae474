"""The Statistics screen: any run's report sections as tables and its figures as plots.

Built around `Report.sections` and `Report.figures`, not one paper: the worker calls the
same `workbench.kinds.build_run_report` as `paw report` (plus, for a coordinator signed in
at the gate, the clinician sections of any annotation set drawn from the run), so a section
or a figure a builder adds shows up here with no change to this screen. A figure is listed
when it carries `plot` data (`analysis.common.plotdata`) and is drawn with plotext
(`widgets/figure_plot.py`).

Wide tables at 80 columns: the identifying first column stays put (`fixed_columns`) and the
rest scroll with ←/→ once the table has focus (`t`); `v` turns the highlighted row into a
record (one line per column), which shows every column of a row at any width.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from workbench.tui.widgets.figure_plot import FigurePlot

from workbench.tui.host import WorkbenchHost
from workbench.tui.messages import ReportBuilt

if TYPE_CHECKING:
    from analysis.common.document import Report

N_BOOT_UI = 200
"""Bootstrap replicates for the screen (the CLI default is larger; `r` recomputes)."""

FIGURE_PREFIX = "figure:"
"""Option ids of figures in the section list are `figure:<index in Report.figures>`."""


def section_table(frame: Any) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a section as display strings (CIs merged, '–' for undefined)."""
    from analysis.common.render import display_frame

    shown = display_frame(frame)
    named = frame.index.name is not None
    header = ([str(shown.index.name)] if named else []) + [str(c) for c in shown.columns]
    rows = [([str(label)] if named else []) + [str(c) for c in row]
            for label, row in zip(shown.index, shown.itertuples(index=False), strict=True)]
    return header, rows


def short_title(title: str, width: int = 26) -> str:
    """A section title cut to one line of the section list ('…' marks the cut)."""
    return title if len(title) <= width else title[:width - 1].rstrip() + "…"


class StatisticsScreen(Screen[None]):
    """Section list on the left, the chosen table (or plot) and its note on the right."""

    CSS_PATH = "statistics.tcss"

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]

    BINDINGS = [
        Binding("r", "recompute", "recompute"),
        Binding("t", "focus_table", "table"),
        Binding("v", "record", "record"),
        Binding("ctrl+d", "record_page(1)", "more"),
        Binding("ctrl+u", "record_page(-1)", "back", show=False),
        Binding("l", "focus_list", "list", show=False),
        Binding("tab", "app.focus_next", "next pane", show=False),
        Binding("[", "previous_run", "prev run", show=False),
        Binding("]", "next_run", "other run", key_display="[ ]"),
        Binding("q", "app.quit", "quit"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.report: Report | None = None
        """The report on screen."""
        self.audit_id: int | None = None
        """Which run it is for."""
        self.run_ids: list[int] = []
        self.requested: int | None = None
        """The run last asked for (None: the latest); a report built for any other is
        superseded and dropped, as the coordinator screen drops one for a dimension it has
        left."""
        self.plots: dict[int, Any] = {}
        """Figure index -> its `PlotData`."""
        self.shown: str | None = None
        """Option id on screen (a section index or `figure:<i>`)."""
        self.record = False
        """Show the highlighted row as a record (one line per column)."""
        self._stamp: tuple | None = None
        """The run's (id, status) read just before the report on screen was built."""
        self.refreshed_at: float | None = None
        """When that report was built from the store (time.time())."""

    @property
    def paw(self) -> WorkbenchHost:
        """The app, as the `WorkbenchHost` it provides."""
        return cast(WorkbenchHost, self.app)

    def compose(self) -> ComposeResult:
        yield Static("choose a run on the Runs screen (1)", id="status", markup=False)
        with Horizontal(id="stats-body"):
            yield OptionList(id="sections")
            with Vertical(id="stats-main"):
                yield DataTable(id="section-table", zebra_stripes=True, cursor_type="row")
                yield FigurePlot(id="figure")
                with VerticalScroll(id="record-scroll"):
                    yield Static("", id="record", markup=False)
                with VerticalScroll(id="note-scroll"):
                    yield Static("", id="section-note", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        from workbench.tui.follow import FOLLOW_SECONDS

        self.query_one("#sections", OptionList).focus()
        self.set_interval(FOLLOW_SECONDS, self._follow)

    def _follow(self) -> None:
        if self.is_current and self.report is not None and self._stamp is not None:
            self._check_stamp(self._stamp, self.audit_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="stats-follow",
          name="following the run")
    def _check_stamp(self, seen: tuple, audit_id: int | None) -> None:
        """Rebuild the report when the run shown changed status (a run that finishes, a
        resumed one) since it was built."""
        from store.db import open_db
        from workbench.tui.follow import run_stamp

        db = open_db(self.paw.db_path)
        try:
            now = run_stamp(db, audit_id, done=False)
        finally:
            db.conn.close()
        if now != seen and seen is self._stamp and audit_id == self.audit_id:
            self.app.call_from_thread(self._load, audit_id)

    def on_screen_resume(self) -> None:
        """Coming back to the screen: follow the run chosen elsewhere."""
        self._follow_focus()

    def on_show(self) -> None:
        self._follow_focus()

    def _follow_focus(self) -> None:
        target = self.paw.focus_audit
        if target is None:
            self._load(None)
        elif target != self.audit_id or self.report is None:
            self._load(target)

    def _load(self, audit_id: int | None) -> None:
        self.requested = audit_id
        self.query_one("#status", Static).update("computing the report…")
        self.compute(audit_id)  # exclusive: cancels a build still running for another run

    @work(thread=True, exclusive=True, exit_on_error=False, group="stats",
          name="report computation")
    def compute(self, audit_id: int | None) -> None:
        """Build the run's report from the store (own connection) and post it."""
        from annotate.report.sections import add_clinician_parts
        from workbench.kinds import build_run_report
        from store.db import open_db
        from store.runs import list_runs

        import time

        from workbench.tui.follow import run_stamp

        db = open_db(self.paw.db_path)
        coordinator = self.paw.person
        try:
            stamp = run_stamp(db, audit_id, done=False)
            started = time.time()
            runs = [r.id for r in list_runs(db)]
            report = build_run_report(db, audit_id, n_boot=N_BOOT_UI)
            # The clinician sections show every rater's labels and agreement: the
            # coordinator's alone, as in `paw report` (signed in at the gate).
            if coordinator is not None and coordinator.is_coordinator:
                add_clinician_parts(report, db, int(report.meta["audit_id"]))
        finally:
            db.conn.close()
        plots = {i: figure.plot() for i, figure in enumerate(report.figures)
                 if figure.plot is not None}
        # A cancelled thread still runs to its end: its report is for a run the screen has
        # since left (the handler drops one that slips through between check and post).
        if not get_current_worker().is_cancelled:
            self._stamp, self.refreshed_at = stamp, started
            self.post_message(ReportBuilt(report, runs, plots, requested=audit_id))

    @on(ReportBuilt)
    def _show_report(self, message: ReportBuilt) -> None:
        if message.requested != self.requested:
            return  # superseded: another run was asked for while this one was built
        report: Report = message.report
        self.report = report
        self.run_ids = list(message.runs)
        self.plots = dict(message.plots or {})
        self.audit_id = int(report.meta["audit_id"])
        self.paw.focus_audit = self.audit_id
        from workbench.tui.follow import refreshed_text

        meta = report.meta
        self.query_one("#status", Static).update(
            f"{meta.get('audit')} · {meta.get('kind')} · {meta.get('dataset', '–')} · "
            f"{len(report.sections)} tables, {len(self.plots)} plots · "
            f"{refreshed_text(self.refreshed_at)}")  # [ ] other runs: in the footer
        options = self.query_one("#sections", OptionList)
        options.clear_options()
        cut = 17 if self.size.width < 100 else 26  # the list is 22 cells wide at 80
        for index, figure in enumerate(report.figures):
            if index in self.plots:
                # A figure's `short` as it is: eight κ figures' captions all begin "κ over
                # paired labels: …", and a cut left eight equal entries.
                title = figure.short or f"Plot: {figure.caption}"
                options.add_option(Option(Text(short_title(title, cut)),
                                          id=f"{FIGURE_PREFIX}{index}"))
        for index, section in enumerate(report.sections):
            options.add_option(Option(Text(short_title(section.title, cut)), id=str(index)))
        options.highlighted = 0
        self._show_option(options.get_option_at_index(0).id if options.option_count else None)

    @on(OptionList.OptionHighlighted, "#sections")
    def _option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show_option(event.option.id)

    def _show_option(self, option_id: str | None) -> None:
        table = self.query_one("#section-table", DataTable)
        note = self.query_one("#section-note", Static)
        plot = self.query_one("#figure", FigurePlot)
        main = self.query_one("#stats-main")
        self.shown = option_id
        table.clear(columns=True)
        if self.report is None or option_id is None:
            note.update("")
            return
        if option_id.startswith(FIGURE_PREFIX):
            index = int(option_id.removeprefix(FIGURE_PREFIX))
            data = self.plots.get(index)
            main.add_class("plot")
            main.remove_class("record")
            plot.show(data)
            figure = self.report.figures[index]
            note.update("\n".join([figure.caption, *(data.notes if data else ())]))
            return
        main.remove_class("plot")
        section = self.report.sections[int(option_id)]
        header, rows = section_table(section.frame)
        table.add_columns(*(Text(h) for h in header))
        for row in rows:
            # Text, not str: a CI "[0.45, 0.60]" must not be read as markup.
            table.add_row(*(Text(cell) for cell in row))
        table.fixed_columns = 1 if header else 0  # the identifying column stays put
        note.update(f"{section.title}\n{section.note}" if section.note else section.title)
        self._draw_record()

    @on(DataTable.RowHighlighted, "#section-table")
    def _row_highlighted(self) -> None:
        self._draw_record()

    def _draw_record(self) -> None:
        self.refresh_bindings()
        main = self.query_one("#stats-main")
        main.set_class(self.record and not main.has_class("plot"), "record")
        if not self.record or self.report is None or self.shown is None or \
                self.shown.startswith(FIGURE_PREFIX):
            return
        section = self.report.sections[int(self.shown)]
        header, rows = section_table(section.frame)
        if not rows:
            self.query_one("#record", Static).update("(no rows)")
            return
        at = min(self.query_one("#section-table", DataTable).cursor_row, len(rows) - 1)
        width = max(len(h) for h in header)
        lines = [f"row {at + 1} of {len(rows)} · ↑↓ other rows · v table"]
        lines += [f"{h:<{width}}  {cell}" for h, cell in zip(header, rows[at], strict=True)]
        self.query_one("#record", Static).update("\n".join(lines))

    def action_record(self) -> None:
        """Toggle the record view of the highlighted row (every column at any width)."""
        self.record = not self.record
        self._draw_record()
        self.refresh_bindings()
        if self.record:
            self.query_one("#section-table", DataTable).focus()

    def action_record_page(self, direction: int) -> None:
        """Page the record when it has more columns than the screen has lines."""
        scroll = self.query_one("#record-scroll", VerticalScroll)
        if direction > 0:
            scroll.scroll_page_down(animate=False)
        else:
            scroll.scroll_page_up(animate=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The record's page keys only while a record is shown (in the footer then, where `t`
        was: the table already has the focus)."""
        # False hides a binding (None would show it dimmed)
        if action == "record_page":
            return self.record
        if action == "focus_table":  # the table has the focus in a record: room for ^d
            return not self.record
        return True

    def action_focus_table(self) -> None:
        """Focus the table: ↑↓ rows, ←→ scroll the columns right of the first."""
        self.query_one("#section-table", DataTable).focus()

    def action_focus_list(self) -> None:
        """Back to the section list."""
        self.query_one("#sections", OptionList).focus()

    def help_notes(self) -> list[str]:
        """Extra lines for the `?` help."""
        return [("Wide tables: the first column stays put, ←→ scroll the rest (t focuses "
                 "the table); v shows the highlighted row as a record."),
                ("Plots are the report's figures drawn with plotext; the note under a plot "
                 "gives each point's exact value.")]

    def action_recompute(self) -> None:
        """Recompute the report from the store now."""
        self._load(self.audit_id)

    def _step_run(self, step: int) -> None:
        if not self.run_ids:
            return
        at = self.run_ids.index(self.audit_id) if self.audit_id in self.run_ids else 0
        self.paw.focus_audit = self.run_ids[(at + step) % len(self.run_ids)]
        self._load(self.paw.focus_audit)

    def action_previous_run(self) -> None:
        """The previous run in the store."""
        self._step_run(-1)

    def action_next_run(self) -> None:
        """The next run in the store."""
        self._step_run(1)


    def palette_commands(self) -> list[SystemCommand]:
        """Statistics commands in the palette (ctrl+p)."""
        return [SystemCommand("Recompute statistics", "Rebuild the report from the store",
                              self.action_recompute)]
