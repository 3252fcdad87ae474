"""The Statistics screen: any run's report sections as tables, and the FCS plane as text.

Built around report sections, not one paper: the worker calls the same
`analysis.reports.build_run_report` as `paw report` (plus, for a coordinator signed in at
the gate, the clinician sections of any annotation set drawn from the run), so a seed-000 study, a DBPA analysis or a seed-003
profile shows up here the day its builder is registered.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, OptionList, Static
from textual.widgets.option_list import Option

from workbench.tui.host import WorkbenchHost
from workbench.tui.messages import ReportBuilt

if TYPE_CHECKING:
    from analysis.common.document import Report

N_BOOT_UI = 200
"""Bootstrap replicates for the screen (the CLI default is larger; `r` recomputes)."""

PLOT_KEY = "__fcs_plane__"
"""Option id of the terminal FCS-plane plot in the section list."""


def section_table(frame: Any) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a section as display strings (CIs merged, '–' for undefined)."""
    from analysis.common.render import display_frame

    shown = display_frame(frame)
    named = frame.index.name is not None
    header = ([str(shown.index.name)] if named else []) + [str(c) for c in shown.columns]
    rows = [([str(label)] if named else []) + [str(c) for c in row]
            for label, row in zip(shown.index, shown.itertuples(index=False))]
    return header, rows


def short_title(title: str, width: int = 26) -> str:
    """A section title cut to one line of the section list ('…' marks the cut)."""
    return title if len(title) <= width else title[:width - 1].rstrip() + "…"


def plane_points(report: Report) -> list[tuple[str, float, float]] | None:
    """(arm, AFR_D, AFR_P) from a seed-002 report's summary section, or None."""
    summary = report.section("summary")
    if summary is None or "afr_d" not in summary.frame.columns:
        return None
    frame = summary.frame
    return [(str(label), float(frame.loc[label, "afr_d"]) if frame.loc[label, "afr_d"] is not
             None else math.nan, float(frame.loc[label, "afr_p"]) if frame.loc[label, "afr_p"]
             is not None else math.nan) for label in frame.index]


class StatisticsScreen(Screen[None]):
    """Section list on the left, the chosen table (or plot) and its note on the right."""

    CSS_PATH = "statistics.tcss"

    BINDINGS = [
        Binding("r", "recompute", "recompute"),
        Binding("tab", "app.focus_next", "next pane", show=False),
        Binding("[", "previous_run", "prev run"),
        Binding("]", "next_run", "next run"),
        Binding("q", "app.quit", "quit"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.report: Report | None = None
        """The report on screen."""
        self.audit_id: int | None = None
        """Which run it is for."""
        self.run_ids: list[int] = []

    @property
    def paw(self) -> WorkbenchHost:
        """The app, as the `WorkbenchHost` it provides."""
        return cast(WorkbenchHost, self.app)

    def compose(self) -> ComposeResult:
        yield Static("choose a run on the Runs screen (1)", id="status", markup=False)
        with Horizontal(id="stats-body"):
            yield OptionList(id="sections")
            with Vertical(id="stats-main"):
                yield DataTable(id="section-table", zebra_stripes=True)
                with VerticalScroll(id="note-scroll"):
                    yield Static("", id="section-note", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#sections", OptionList).focus()

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

    def _load(self, audit_id: int | None, force: bool = False) -> None:
        self.query_one("#status", Static).update("computing the report…")
        self.compute(audit_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="stats",
          name="report computation")
    def compute(self, audit_id: int | None) -> None:
        """Build the run's report from the store (own connection) and post it."""
        from analysis.reports import build_run_report
        from annotate.sections import annotation_sections
        from store.db import open_db
        from store.runs import list_runs

        db = open_db(self.paw.db_path)
        coordinator = self.paw.person
        try:
            runs = [r.id for r in list_runs(db)]
            report = build_run_report(db, audit_id, n_boot=N_BOOT_UI)
            # The clinician sections show every rater's labels and agreement: the
            # coordinator's alone, as in `paw report` (signed in at the gate).
            if coordinator is not None and coordinator.is_coordinator:
                report.sections.extend(annotation_sections(db, int(report.meta["audit_id"])))
        finally:
            db.conn.close()
        self.post_message(ReportBuilt(report, runs))

    @on(ReportBuilt)
    def _show_report(self, message: ReportBuilt) -> None:
        report: Report = message.report
        self.report = report
        self.run_ids = list(message.runs)
        self.audit_id = int(report.meta["audit_id"])
        self.paw.focus_audit = self.audit_id
        meta = report.meta
        self.query_one("#status", Static).update(
            f"{meta.get('audit')} · {meta.get('kind')} · dataset {meta.get('dataset', '–')} · "
            f"{len(report.sections)} tables · [ ] other runs")
        options = self.query_one("#sections", OptionList)
        options.clear_options()
        if plane_points(report) is not None:
            options.add_option(Option("FCS plane (plot)", id=PLOT_KEY))
        for index, section in enumerate(report.sections):
            options.add_option(Option(Text(short_title(section.title)), id=str(index)))
        options.highlighted = 0
        self._show_option(options.get_option_at_index(0).id if options.option_count else None)

    @on(OptionList.OptionHighlighted, "#sections")
    def _option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show_option(event.option.id)

    def _show_option(self, option_id: str | None) -> None:
        table = self.query_one("#section-table", DataTable)
        note = self.query_one("#section-note", Static)
        table.clear(columns=True)
        if self.report is None or option_id is None:
            note.update("")
            return
        if option_id == PLOT_KEY:
            from analysis.audit import definitions as d
            from workbench.tui.plots import fcs_plane_text

            table.display = False
            self.query_one("#stats-main").add_class("plot")
            note.update("\n".join(fcs_plane_text(plane_points(self.report) or [],
                                                 d.FCS_CORRIDOR)))
            return
        table.display = True
        self.query_one("#stats-main").remove_class("plot")
        section = self.report.sections[int(option_id)]
        header, rows = section_table(section.frame)
        table.add_columns(*(Text(h) for h in header))
        for row in rows:
            # Text, not str: a CI "[0.45, 0.60]" must not be read as markup.
            table.add_row(*(Text(cell) for cell in row))
        note.update(f"{section.title}\n{section.note}" if section.note else section.title)

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
