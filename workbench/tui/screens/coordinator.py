"""The coordinator screen: progress per rater and live agreement, recomputed in a worker.

Each recomputation reads only the label events added since the last one (`ReportCache`
keeps the folded log), so it stays fast on a set with tens of thousands of labels
(bench/annotation_scale.py). `a` opens the adjudication screen.
"""

from __future__ import annotations

from typing import ClassVar, cast

from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
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
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-narrow"), (110, "-wide")]

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "adjudicate", "adjudicate"),
        Binding("r", "recompute", "refresh"),
        Binding("b", "cycle_dimension", "by family/dataset/model"),
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
        with VerticalScroll(id="body"):
            yield RaterProgressTable()
            yield AgreementTable()
            yield ConfusionMatrix()
            yield StratumTable()
            yield Static(fmt.legend(), id="legend")
        yield Footer()

    def on_mount(self) -> None:
        from annotate.identity import require
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
        previous = None if force or self.report is None or \
            self.report.dimension != self.dimension else self.report.fingerprint
        self._worker = self.recompute(self.dimension, previous)

    @work(thread=True, exclusive=True, exit_on_error=False, group="agreement",
          name="agreement recomputation")
    def recompute(self, dimension: str, previous: tuple[int, ...] | None) -> None:
        """Compute the report from the store (own connection) and post it to the screen."""
        report = compute_report(self.paw.db_path, self.paw.set_name, dimension, previous,
                                self._cache, watch=getattr(self.app, "watch_folder", None),
                                coordinator=self.paw.person)
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
        if agreement is not None:
            label = f"{agreement.field} ({fmt.form(agreement)})"
            self.query_one(StratumTable).show(self.dimension, label,
                                              self.report.strata_for(self.selected))

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
