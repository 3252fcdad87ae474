"""The coordinator screen: progress per rater and live agreement, recomputed in a worker.

Each recomputation reads only the label events added since the last one (`ReportCache`
keeps the folded log), so it stays fast on a set with tens of thousands of labels
(bench/annotation_scale.py). `a` opens the adjudication screen; `k` swaps the tables for
the plot of κ over paired labels of the highlighted field (`annotate.agreement.kappa_series`, the
function behind the live κ), drawn with plotext like the Statistics screen's figures.
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar, cast

from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static
from textual.worker import Worker, get_current_worker

from workbench.tui.host import SessionHost
from workbench.tui.messages import AgreementComputed
from workbench.tui.report import (
    STRATUM_DIMENSIONS,
    CoordinatorReport,
    ReportCache,
    compute_report,
)
from workbench.tui.widgets import agreement_format as fmt
from workbench.tui.widgets.agreement_table import AgreementTable
from workbench.tui.widgets.confusion_matrix import ConfusionMatrix
from workbench.tui.widgets.figure_plot import FigurePlot
from workbench.tui.widgets.rater_progress import RaterProgressTable
from workbench.tui.widgets.stratum_table import StratumTable

POLL_SECONDS = 1.0
"""How often the screen checks the store for new labels (a cheap query when nothing changed)."""


def clock_text(iso_utc: str) -> str:
    """'HH:MM:SS' of an ISO-8601 UTC time (the snapshot tests pin it)."""
    return iso_utc[11:19]


class CoordinatorScreen(Screen[None]):
    """Progress, per-field agreement, the confusion matrix and per-stratum agreement."""

    CSS_PATH = "coordinator.tcss"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "adjudicate", "adjudicate"),
        Binding("r", "recompute", "refresh"),
        Binding("b", "cycle_dimension", "strata by"),  # family → dataset → model (`?`)
        Binding("k", "toggle_plot", "κ plot"),
        Binding("up", "step_field(-1)", "field", key_display="↑↓"),
        Binding("down", "step_field(1)", "field", show=False),
        Binding("q", "app.quit", "quit"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.report: CoordinatorReport | None = None
        """The latest recomputation drawn on screen."""
        self.dimension = STRATUM_DIMENSIONS[0]
        """Stratum dimension of the per-stratum table."""
        self.selected = "gold_shift|full"
        """Row key of the agreement row whose matrix and strata are shown."""
        self._worker: Worker | None = None
        self._cache = ReportCache()

    @property
    def paw(self) -> SessionHost:
        """The app, as the `SessionHost` it provides."""
        return cast(SessionHost, self.app)

    def compose(self) -> ComposeResult:
        yield Static("computing agreement…", id="status")
        # At 80 columns the agreement table scrolls sideways and the confusion matrix is
        # below the fold: this line keeps the highlighted row's κ, CI, band, AC1 and flags
        # in view (narrow screens only; `coordinator.tcss`).
        yield Static("", id="row-summary", markup=False)
        with VerticalScroll(id="body"):
            yield RaterProgressTable()
            yield AgreementTable()
            yield ConfusionMatrix()
            yield StratumTable()
            yield Static(fmt.legend(), id="legend")
        with Vertical(id="kappa-view"):
            yield Static("", id="kappa-summary", markup=False)
            yield FigurePlot(id="kappa-plot")
        yield Footer()

    def on_unmount(self) -> None:
        self._cache.release()  # the recomputations' kept connection

    def on_mount(self) -> None:
        from annotate.trust.identity import require
        from store.errors import UserError

        try:
            require(self.paw.person, "coordinator")  # agreement is for the coordinator only
        except UserError as exc:
            self.query_one("#status", Static).update("coordinator role required")
            self.paw.show_error("Not a coordinator", exc)
            return
        self.query_one(ConfusionMatrix).show(None)
        self.query_one(AgreementTable).focus()
        self.set_interval(POLL_SECONDS, self.poll)
        self.poll()

    # ---- recomputation (thread worker) ------------------------------------------------

    def poll(self, force: bool = False) -> None:
        """Start a recomputation unless one is running (a slow one is never cancelled by
        the next tick, so results always arrive)."""
        if self._worker is not None and self._worker.is_running:
            return
        report = self.report
        stale = report is None or report.dimension != self.dimension or (
            self.plotting and report.kappa_over_labels is None)  # the plot needs it
        previous = None if force or report is None or stale else report.fingerprint
        self._worker = self.recompute(self.dimension, previous)

    @work(thread=True, exclusive=True, exit_on_error=False, group="agreement",
          name="agreement recomputation")
    def recompute(self, dimension: str, previous: tuple[int, ...] | None) -> None:
        """Compute the report from the store (own connection) and post it to the screen."""
        report = compute_report(self.paw.db_path, self.paw.set_name, dimension, previous,
                                self._cache, watch=getattr(self.app, "watch_folder", None),
                                coordinator=self.paw.person, series=self.plotting)
        if report is not None and not get_current_worker().is_cancelled:
            self.post_message(AgreementComputed(report))

    @on(AgreementComputed)
    def _draw(self, message: AgreementComputed) -> None:
        report: CoordinatorReport = message.report
        if report.dimension != self.dimension:
            return  # computed for a dimension the coordinator has since left
        self.report = report
        names = [p.name for p in report.progress]
        first = report.overall[0] if report.overall else None
        pair = f"{first.rater_a} (rows) × {first.rater_b} (columns)" if first and first.n else \
            "waiting for two raters"
        self.query_one("#status", Static).update(
            f"set {report.set_name} · raters: {', '.join(names) or 'none yet'} · {pair} · "
            f"updated {clock_text(report.computed_at)} UTC"
            + (f" · {len(report.watched)} rater file(s) refused: {report.watched[0]}"
               if report.watched else ""))
        self.query_one(RaterProgressTable).show(report.progress)
        self.query_one(AgreementTable).show(report.overall)
        self._draw_detail()

    def _draw_detail(self) -> None:
        if self.report is None:
            return
        agreement = self.report.overall_for(self.selected)
        self.query_one(ConfusionMatrix).show(agreement)
        self._draw_plot(agreement)
        if agreement is not None:
            label = f"{agreement.field} ({fmt.form(agreement)})"
            self.query_one(StratumTable).show(self.dimension, label,
                                              self.report.strata_for(self.selected))

    def _draw_plot(self, agreement) -> None:
        from annotate.agreement.kappa_series import series_plot

        if agreement is None or self.report is None:
            return
        line = f"{agreement.label}: {fmt.summary(agreement)}"
        # The same line above the tables (narrow screens) and above the plot.
        self.query_one("#row-summary", Static).update(line)
        self.query_one("#kappa-summary", Static).update(line)
        series = self.report.series_for(self.selected)
        data = series_plot(agreement.label, series or ())
        if series is None:  # left out while the tables showed: `k` asked for it just now
            data = replace(data, notes=("computing κ over paired labels…",))
        self.query_one("#kappa-plot", FigurePlot).show(data)

    @on(DataTable.RowHighlighted, "AgreementTable")
    def _row_chosen(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self.selected = event.row_key.value
            self._draw_detail()

    # ---- actions ----------------------------------------------------------------------

    def action_adjudicate(self) -> None:
        """Open the adjudication screen; back here (and recomputed) when it closes."""
        from workbench.tui.screens.adjudicate import AdjudicateScreen

        if not self.paw.person.is_coordinator:
            return  # the screen already says the role is missing
        self.app.push_screen(AdjudicateScreen(), lambda _: self.poll(force=True))

    @property
    def plotting(self) -> bool:
        """The κ plot is shown in place of the tables."""
        return self.has_class("-kappa")

    def action_toggle_plot(self) -> None:
        """Swap the tables for the κ-over-labels plot of the highlighted field, and back."""
        self.toggle_class("-kappa")
        if self.plotting:
            self.set_focus(None)  # ↑↓ now step the field through the screen's keys
            if self.report is not None and self.report.kappa_over_labels is None:
                self._draw_detail()  # "computing…" until the series arrives
                self.poll()          # stale without the series: recomputed with it
        else:
            self.query_one(AgreementTable).focus()
        self.refresh_bindings()

    def action_step_field(self, step: int) -> None:
        """In the plot: the previous / next field of the agreement table."""
        table = self.query_one(AgreementTable)
        if table.row_count:
            table.move_cursor(row=max(0, min(table.row_count - 1, table.cursor_row + step)))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """↑↓ are the screen's only in the plot (the table has them otherwise)."""
        if action == "step_field":
            return self.plotting
        return True

    def help_notes(self) -> list[str]:
        """Extra lines for the `?` help."""
        return [("k: κ after the first n paired labels of the highlighted field (n = 1..N, "
                 "ordered by when each pair got its current values); its last point is the "
                 "live κ. ↑↓ change the field in the plot, k goes back to the tables."),
                ("At 80 columns the agreement table scrolls sideways (field and form stay "
                 "put); the line under the confusion matrix repeats κ, CI, AC1, band and "
                 "note of the highlighted row in full.")]

    def action_recompute(self) -> None:
        """Recompute now, even if no new label arrived."""
        self.poll(force=True)

    def action_cycle_dimension(self) -> None:
        """Per-stratum table by family → dataset → model → family."""
        at = STRATUM_DIMENSIONS.index(self.dimension)
        self.dimension = STRATUM_DIMENSIONS[(at + 1) % len(STRATUM_DIMENSIONS)]
        self.query_one(StratumTable).border_title = f"By {self.dimension}: recomputing…"
        if self._worker is not None and self._worker.is_running:
            self._worker.cancel()  # its result would be for the old dimension
            self._worker = None
        self.poll(force=True)

    def palette_commands(self) -> list[SystemCommand]:
        """Coordinator commands offered in the command palette (ctrl+p)."""
        return [
            SystemCommand("Adjudicate disagreements", "Decide each disagreement with the case "
                          "in view", self.action_adjudicate),
            SystemCommand("Recompute agreement", "Recompute progress and agreement now",
                          self.action_recompute),
            SystemCommand("Change stratum dimension", "Show strata by family, dataset or model",
                          self.action_cycle_dimension),
        ]
