"""The Runs screen: every audit/study in the store with its status; launch, watch, cancel, resume.

The list is re-read every two seconds in a thread worker (its own connection), so a run
started from another terminal shows up and its status changes (running → interrupted when
its process dies, see `store.runs`). A run launched here is worked by an app-level thread
worker; its live state (`LiveRun`) gives per-block bars with rate and ETA, generations/s
and the current model.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from workbench.present.progress import clock, text_bar
from workbench.present.run_panel import block_rows, stored_text
from workbench.tui.host import WorkbenchHost
from workbench.tui.live import LiveRun, LiveSnapshot
from workbench.tui.messages import RunsListed
from workbench.tui.widgets.list_table import ListTable

if TYPE_CHECKING:
    from store.runs import RunInfo

REFRESH_SECONDS = 2.0
"""How often the screen checks whether the store changed (and re-reads the runs if so)."""

LIVENESS_SECONDS = 10.0
"""Re-list at least this often while the screen is shown, to see a killed run turn
interrupted (its process is gone; nothing in the store changed)."""

DRAW_SECONDS = 0.5
"""How often the live run's bars are redrawn."""

COLUMNS: tuple[str, ...] = ("id", "name", "kind", "dataset", "models", "status", "jobs",
                            "gen.", "time")


def _role_block(kind: str) -> dict[str, str]:
    from workbench.kinds import kind_blocks

    return kind_blocks(kind)[0]


class RunsScreen(Screen[None]):
    """Runs in the store, the live run's progress, and the keys to launch/cancel/resume."""

    CSS_PATH = "runs.tcss"

    BINDINGS = [
        Binding("n", "new_audit", "new audit"),
        Binding("r", "resume", "resume"),
        Binding("c", "cancel", "cancel"),
        Binding("enter", "open_flips", "flips", key_display="⏎"),
        Binding("s", "open_statistics", "stats"),
        Binding("e", "export", "export", show=False),
        Binding("y", "copy_row", "copy row", show=False),
        Binding("q", "app.quit", "quit"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[RunInfo] = []
        """The runs as last listed."""
        self.selected: int | None = None
        """Id of the highlighted run."""
        self.details: dict[int, list[tuple[str, int, int]]] = {}
        """Per-block (done, total) of each listed run, read with the list."""
        self.unparsed: dict[int, list[Any]] = {}
        """Each listed run's arms' answers and unparsed counts, read with the list."""
        self._followed_live = ""
        self._db_lock = threading.Lock()
        self._reader: Any = None
        self._seen_version: int | None = None
        self._listed_at = 0.0
        self.refreshed_at: float | None = None
        """When the list on screen was read (time.time())."""

    @property
    def paw(self) -> WorkbenchHost:
        """The app, as the `WorkbenchHost` it provides."""
        return cast(WorkbenchHost, self.app)

    def compose(self) -> ComposeResult:
        yield Static("reading the store…", id="status", markup=False)
        table: DataTable = ListTable(id="runs", cursor_type="row", zebra_stripes=True)
        table.add_columns(*COLUMNS)
        yield table
        with VerticalScroll(id="detail-scroll"):
            yield Static("", id="detail", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#runs", DataTable).focus()
        self.set_interval(REFRESH_SECONDS, lambda: self.refresh_runs(force=False))
        self.set_interval(DRAW_SECONDS, self._redraw_if_shown)
        self.refresh_runs()

    def _redraw_if_shown(self) -> None:
        if self.is_current:
            self.draw_detail()

    # ---- the list (thread worker, own connection) ----------------------------------------

    def refresh_runs(self, force: bool = True) -> None:
        """Re-read the runs in a worker (nothing while the database does not exist yet).

        Args:
            force: re-read even if no other connection wrote since the last read (the
                2-second timer passes False: then only a change, or `LIVENESS_SECONDS`
                since the last read, re-reads — a killed process changes no data but
                turns its run interrupted).
        """
        if self.paw.db_exists and (force or self.is_current):
            self._list_runs(force)

    @work(thread=True, exclusive=True, exit_on_error=False, group="runs", name="listing runs")
    def _list_runs(self, force: bool) -> None:
        from store.db import open_db
        from store.runs import list_runs, role_counts, unparsed_by_arm

        with self._db_lock:
            if self._reader is None:
                self._reader = open_db(self.paw.db_path)
            db = self._reader
            # PRAGMA data_version changes when another connection commits: a cheap way to
            # skip a listing when nothing was written.
            version = db.execute("PRAGMA data_version").fetchone()[0]
            now = time.monotonic()
            if not force and version == self._seen_version and \
                    now - self._listed_at < LIVENESS_SECONDS:
                return
            self._seen_version, self._listed_at = version, now
            runs = list_runs(db)
            details = {run.id: block_rows(role_counts(db, run.id), _role_block(run.kind))
                       for run in runs}
            unparsed = {run.id: unparsed_by_arm(db, run.id) for run in runs}
            self.refreshed_at = time.time()
        self.post_message(RunsListed(runs, details, unparsed))

    def on_unmount(self) -> None:
        with self._db_lock:
            if self._reader is not None:
                self._reader.conn.close()
                self._reader = None

    @on(RunsListed)
    def _draw_runs(self, message: RunsListed) -> None:
        self.runs, self.details = list(message.runs), dict(message.details)
        self.unparsed = dict(message.unparsed or {})
        table = self.query_one("#runs", DataTable)
        keep = self.selected
        rows = {str(run.id): (str(run.id), run.name, run.kind, run.dataset,
                              ",".join(run.models), run.status,
                              f"{run.jobs_done}/{run.jobs_total}", str(run.generations),
                              clock(run.wall_s)) for run in self.runs}
        if [key.value for key in table.rows] == list(rows):
            # The same runs: update the cells in place (no flicker, the cursor stays).
            for key, cells in rows.items():
                for column, cell in zip(table.columns, cells, strict=True):
                    # update_width: '11/25' must not stay cut to the width of '1/25'.
                    table.update_cell(key, column, Text(cell), update_width=True)
        else:
            table.clear()
            for key, cells in rows.items():
                table.add_row(*(Text(cell) for cell in cells), key=key)
        live = self.paw.live
        if live is not None and live.name and live.name != self._followed_live:
            # A run launched here: select it once, when it first shows up in the list.
            found = next((r.id for r in self.runs if r.name == live.name), None)
            if found is not None:
                keep, self._followed_live = found, live.name
        if self.runs:
            ids = [r.id for r in self.runs]
            target = keep if keep in ids else ids[-1]
            table.move_cursor(row=ids.index(target))
            self.selected = target
        from workbench.tui.follow import refreshed_text

        running = sum(r.status == "running" for r in self.runs)
        self.query_one("#status", Static).update(
            f"{len(self.runs)} run(s) in {self.paw.db_name} · {running} running"
            + (f" · launched here: {live.name or 'starting'}" if live and live.active else "")
            + f" · {refreshed_text(self.refreshed_at)}")
        if not self.runs:
            self.query_one("#detail", Static).update(
                "No runs stored yet. Press n to launch an audit (the demo set is in dataset "
                "'demo').")
        self.draw_detail()

    @on(DataTable.RowSelected, "#runs")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        # The table takes enter itself (row selection): selecting a run opens its flips.
        if event.row_key.value is not None:
            self.selected = int(event.row_key.value)
        self.action_open_flips()

    @on(DataTable.RowHighlighted, "#runs")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self.selected = int(event.row_key.value)
            self.paw.focus_audit = self.selected
            self.draw_detail()

    # ---- the detail panel -------------------------------------------------------------

    def _selected_run(self) -> RunInfo | None:
        return next((r for r in self.runs if r.id == self.selected), None)

    def draw_detail(self) -> None:
        """Per-block bars of the selected run (live rate and ETA when launched here)."""
        run = self._selected_run()
        live = self.paw.live
        snapshot = live.snapshot() if live is not None else None
        if snapshot is not None and (run is None or run.name == snapshot.name or
                                     not snapshot.name):
            self.query_one("#detail", Static).update(live_text(snapshot))
            self._refresh_keys()
            return
        if run is None:
            return
        self.query_one("#detail", Static).update(stored_text(run, self.details.get(run.id, []),
                                                             self.unparsed.get(run.id, [])))
        self._refresh_keys()

    def _refresh_keys(self) -> None:
        # Redraw the footer only when c/r turn on or off (a redraw blanks it for a frame).
        state = (self.check_action("cancel", ()), self.check_action("resume", ()))
        if state != getattr(self, "_keys_state", None):
            self._keys_state = state
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide `c` and `r` from the footer while they would do nothing (80 columns are
        short; `?` still lists them)."""
        if action == "cancel":
            return self.paw.live is not None and self.paw.live.active
        if action == "resume":
            run = self._selected_run()
            return run is not None and run.status in ("interrupted", "planned")
        return True

    # ---- actions ------------------------------------------------------------------------


    def action_new_audit(self) -> None:
        """Open the launch form."""
        from workbench.tui.components.launch_modal import LaunchModal

        if self.paw.live is not None and self.paw.live.active:
            self.notify("A run launched here is still working; cancel it first (c).",
                        severity="warning")
            return
        self.app.push_screen(LaunchModal(self.paw.db_path), self._launch)

    def _launch(self, spec: Any) -> None:
        if spec is None:
            return
        self.paw.live = LiveRun()
        self.paw.live.name = spec.audit_name
        self.work_run(spec, None)
        self.notify(f"Launched {spec.audit_name}", timeout=3)

    def action_resume(self) -> None:
        """Resume the selected run (interrupted or planned) where it stopped."""
        from workbench.kinds import can_resume

        run = self._selected_run()
        if run is None:
            return
        if self.paw.live is not None and self.paw.live.active:
            self.notify("A run launched here is still working.", severity="warning")
            return
        if run.status in ("running", "finished"):
            self.notify(f"{run.name} is {run.status}: nothing to resume.")
            return
        if not can_resume(run.kind):
            self.notify(f"Runs of kind {run.kind} resume from the command that made them.",
                        severity="warning")
            return
        self.paw.live = LiveRun(name=run.name)
        self.work_run(None, (run.id, run.kind))
        self.notify(f"Resuming {run.name}", timeout=3)

    def action_cancel(self) -> None:
        """Stop the run launched here at the next generation or decode step: what finished
        stays stored, sequences in flight are dropped and run again on resume (`r`)."""
        live = self.paw.live
        if live is None or not live.active:
            self.notify("No run launched here is working.")
            return
        live.request_stop()
        self.notify("Stopping at the next decode step (finished generations are kept; "
                    "r resumes)…")

    def action_open_flips(self) -> None:
        """The flip inspector on the selected run."""
        self.paw.focus_audit = self.selected
        self.app.switch_mode("flips")

    def action_open_statistics(self) -> None:
        """The statistics screen on the selected run."""
        self.paw.focus_audit = self.selected
        self.app.switch_mode("statistics")

    def action_copy_row(self) -> None:
        """Copy the highlighted run's row (header and cells, tab-separated) and its report
        command to the clipboard."""
        from workbench.kinds import kind_spec

        run = self._selected_run()
        if run is None:
            self.notify("no run to copy")
            return
        cells = (str(run.id), run.name, run.kind, run.dataset, ",".join(run.models),
                 run.status, f"{run.jobs_done}/{run.jobs_total}", str(run.generations),
                 clock(run.wall_s))
        self.app.copy_to_clipboard("\t".join(COLUMNS) + "\n" + "\t".join(cells) + "\n"
                                   + kind_spec(run.kind).report_line(run.name))
        self.notify(f"copied run {run.name} (tab-separated, with its report command)")

    def action_export(self) -> None:
        """Write the selected run's analysis frames as CSV (what `paw export --format csv`
        writes) into a new folder next to the database."""
        run = self._selected_run()
        if run is None:
            self.notify("no run to export")
            return
        self._export(run.id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="runs-export",
          name="exporting a run")
    def _export(self, audit_id: int) -> None:
        from analysis.audit.frames import resolve_audit
        from store.db import open_db
        from workbench.present.run_files import DEFAULT_TABLES, write_run_frames
        from workbench.tui.export_files import new_folder

        db = open_db(self.paw.db_path)
        try:
            info = resolve_audit(db, audit_id)
            wanted = DEFAULT_TABLES.get(info["kind"], "edits,generations").split(",")
            folder = new_folder(self.paw.db_path, f"{info['name']}-export")
            written = write_run_frames(db, info, wanted, "csv", folder)
        finally:
            db.conn.close()
        rows = ", ".join(f"{path.name} {n} rows" for path, n in written)
        self.app.call_from_thread(self.notify, f"wrote {folder}: {rows}", timeout=10)

    def palette_commands(self) -> list[SystemCommand]:
        """Runs commands in the palette (ctrl+p)."""
        return [
            SystemCommand("New audit", "Launch a seed-002 audit from a form",
                          self.action_new_audit),
            SystemCommand("Resume run", "Resume the selected interrupted run",
                          self.action_resume),
            SystemCommand("Cancel run", "Stop the run launched here", self.action_cancel),
            SystemCommand("Export run (e)", "The selected run's edits and generations as CSV "
                          "in a new folder next to the database", self.action_export),
            SystemCommand("Copy run row (y)", "The selected run's row and report command",
                          self.action_copy_row),
        ]

    # ---- the worker ---------------------------------------------------------------------

    @work(thread=True, exclusive=True, exit_on_error=False, group="launch", name="audit run")
    def work_run(self, spec: Any, resume: tuple[int, str] | None) -> None:
        """Run (or resume) in this thread with its own connection; events go to `LiveRun`."""
        from store.db import open_db
        from store.errors import UserError
        from workbench.audit import run_audit
        from workbench.engine import AuditEngine
        from workbench.kinds import resume_run

        live = self.paw.live
        assert live is not None
        db = open_db(self.paw.db_path)
        engine = AuditEngine(db, threads=self.paw.threads,
                             backend_factory=self.paw.backend_factory)
        try:
            if resume is not None:
                resume_run(db, resume[0], resume[1], engine=engine, on_event=live.apply,
                           should_stop=live.stop.is_set)
            else:
                run_audit(db, spec, engine=engine, on_event=live.apply,
                          should_stop=live.stop.is_set)
        except UserError as exc:
            live.fail(str(exc))
        except Exception as exc:  # shown on screen; the worker-error modal also fires
            live.fail(f"{type(exc).__name__}: {exc}")
            raise
        finally:
            engine.close()
            db.conn.close()
        self.app.call_from_thread(self.refresh_runs)


def live_text(snapshot: LiveSnapshot) -> str:
    """The live run's panel: state, model, generations/s, and one bar per block."""
    head = (f"{snapshot.name or 'planning…'} · {snapshot.state} · {snapshot.stage or '–'} "
            f"[{snapshot.model or '–'}] · {snapshot.generated} generated"
            + (f" · {snapshot.gen_rate:.2f} gen/s" if snapshot.gen_rate else "")
            + f" · {clock(snapshot.elapsed_s)}")
    lines = [head]
    for block in snapshot.blocks:  # rate and ETA as the CLI's bars write them
        lines.append(f"{block.block:<10} {text_bar(block.done, block.total)} "
                     f"{block.done:>5}/{block.total:<5} {block.rate_text():<14}  "
                     f"{block.eta_text()}")
    if snapshot.message:
        lines.append(snapshot.message)
    return "\n".join(lines)
