"""`paw ui`: the auditor's workbench — runs, flip inspector, statistics, models and data.

A separate app from the rater's (`AnnotationApp`): nothing here is reachable from a
labelling session, and nothing of a labelling session depends on this module. The
coordinator's live-agreement view opens from here after the coordinator signs in.

Screens are Textual *modes* (each keeps its own screen stack): `1` runs, `2` flips,
`3` statistics, `4` models and data, `5` coordination (agreement and adjudication).
Once people are registered the app starts *locked* on a sixth mode, the sign-in gate
(`screens/signin.py`): the workbench reveals models, operators, verdicts and the
clinicians' statistics, so no other mode opens until a coordinator signs in, and a rater
is sent to `paw annotate`. A run launched here works in a thread worker of the
app, so switching screens never stops it; quitting asks it to stop after the generation in
flight (every finished generation is already stored).
"""

from __future__ import annotations

from typing import Any

from textual.app import SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from workbench.tui.app import PawApp
from workbench.tui.live import LiveRun

SCREENS: tuple[tuple[str, str, str], ...] = (
    ("runs", "1", "Runs"),
    ("flips", "2", "Flips"),
    ("statistics", "3", "Statistics"),
    ("data", "4", "Models & data"),
    ("coordination", "5", "Coordination"),
)
"""(mode, key, title) of each workbench screen, in legend order."""


def _runs() -> Screen:
    from workbench.tui.screens.runs import RunsScreen

    return RunsScreen()


def _flips() -> Screen:
    from workbench.tui.screens.flips import FlipsScreen

    return FlipsScreen()


def _statistics() -> Screen:
    from workbench.tui.screens.statistics import StatisticsScreen

    return StatisticsScreen()


def _coordination() -> Screen:
    from workbench.tui.screens.coordination import CoordinationScreen

    return CoordinationScreen()


def _signin() -> Screen:
    from workbench.tui.screens.signin import SignInScreen

    return SignInScreen()


def _data() -> Screen:
    from workbench.tui.screens.models_data import ModelsDataScreen

    return ModelsDataScreen()


class WorkbenchApp(PawApp):
    """The auditor's app. No person is signed in; the coordinator signs in for agreement.

    Args:
        db_path: the SQLite file (created with the demo set on request when missing).
        threads: CPU threads for runs launched here (default: idle cores).
    """

    TITLE = "PAW workbench"
    MODES = {"runs": _runs, "flips": _flips, "statistics": _statistics, "data": _data,
             "coordination": _coordination, "signin": _signin}
    DEFAULT_MODE = "runs"
    BINDINGS = [
        Binding("1", "switch_mode('runs')", "screens", key_display="1-5"),
        Binding("2", "switch_mode('flips')", "flips", show=False),
        Binding("3", "switch_mode('statistics')", "stats", show=False),
        Binding("4", "switch_mode('data')", "data", show=False),
        Binding("5", "switch_mode('coordination')", "coordination", show=False),
        Binding("q", "quit", "quit"),
        Binding("question_mark", "help", "help", key_display="?"),
    ]

    def __init__(self, db_path: str, threads: int | None = None,
                 backend_factory: Any = None) -> None:
        locked = _needs_sign_in(db_path)
        if locked:  # read by App.__init__: the gate is the first and only screen
            self.DEFAULT_MODE = "signin"  # type: ignore[misc]
        super().__init__(db_path, None, "")  # type: ignore[arg-type]
        self.locked = locked
        """True until a coordinator signs in at the gate (only when people are registered)."""
        self.threads = threads
        """CPU threads of runs launched from the UI."""
        self.backend_factory = backend_factory
        """Builds a model backend for runs launched here (tests pass a fake; default
        llama.cpp)."""
        self.exit_error = ""
        """A user mistake that closed the app (`run_workbench` raises it as a UserError)."""
        self.live: LiveRun | None = None
        """The run launched from this app, if any (kept across screen switches)."""
        self.focus_audit: int | None = None
        """The run the auditor last selected (the flips and statistics screens open on it)."""

    @property
    def db_name(self) -> str:
        """The database file's name (status lines; the full path is in `db_path`)."""
        from pathlib import Path

        return Path(self.db_path).name

    @property
    def db_exists(self) -> bool:
        """Whether the database file exists (until then no screen opens it)."""
        from pathlib import Path

        return Path(self.db_path).expanduser().is_file()

    def on_mount(self) -> None:
        if not self.db_exists:
            from workbench.tui.components.welcome_modal import WelcomeModal

            self.push_screen(WelcomeModal(self.db_path), self._welcome_answered)

    def _welcome_answered(self, create: bool | None) -> None:
        if not create:
            self.exit()
            return
        from store.db import open_db
        from store.errors import UserError
        from workbench.datasets.demo import import_demo

        try:
            db = open_db(self.db_path, create=True)
            try:
                import_demo(db)
            finally:
                db.conn.close()
        except UserError as exc:
            # A folder that does not exist, a read-only one: the one-line reason, then quit
            # (nothing was created).
            # `run_workbench` raises it once the app is closed, so the CLI prints its one
            # line (an exit message would be printed by rich, broken at 80 columns).
            self.exit_error = str(exc)
            self.exit(return_code=1)
            return
        self.notify(f"Created {self.db_path} with the demo set.", timeout=5)
        screen = self.screen
        refresh = getattr(screen, "refresh_runs", None)
        if refresh is not None:
            refresh()

    def unlock(self, person: Any) -> None:
        """A coordinator signed in at the gate: open the workbench on the Runs screen."""
        from annotate.trust.identity import require

        self.person = require(person, "coordinator")
        self.locked = False
        self.sub_title = f"coordinator {person.name}"
        self.switch_mode("runs")

    def switch_mode(self, mode: str):
        """Switch screens; while locked, only the sign-in gate."""
        if self.locked and mode != "signin":
            self.bell()
            mode = "signin"
        return super().switch_mode(mode)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While locked, the screen keys do nothing."""
        if self.locked and action == "switch_mode":
            return False
        return super().check_action(action, parameters)

    def get_system_commands(self, screen: Screen):
        """Palette: go to each screen, plus the screen's own commands (none while locked)."""
        yield from super().get_system_commands(screen)
        if self.locked:
            return
        for mode, key, title in SCREENS:
            yield SystemCommand(f"Go to {title}", f"Open the {title} screen (key {key})",
                                lambda mode=mode: self.switch_mode(mode))

    async def action_quit(self) -> None:
        """Quit; with a run in progress, ask first (it then stops after the generation in
        flight, everything finished is stored)."""
        from workbench.tui.components.confirm_modal import ConfirmModal

        if self.live is not None and self.live.active:
            if isinstance(self.screen, ConfirmModal):
                return
            self.push_screen(ConfirmModal(
                "A run launched here is still working.",
                "Quit and stop it after the generation in flight? Everything finished is "
                "stored; r on the Runs screen resumes it later."), self._quit_answered)
            return
        self.exit()

    def _quit_answered(self, quit_now: bool | None) -> None:
        if quit_now:
            if self.live is not None:
                self.live.request_stop()
            self.exit()

    def on_unmount(self) -> None:
        if self.live is not None:
            self.live.request_stop()
        super().on_unmount()


def _needs_sign_in(db_path: str) -> bool:
    """Whether the store at `db_path` has people registered (then the gate comes first)."""
    from pathlib import Path

    if not Path(db_path).expanduser().is_file():
        return False  # the welcome offer creates a store with nobody in it
    from annotate.trust.people import people_registered
    from store.db import open_db

    db = open_db(db_path)
    try:
        return people_registered(db)
    finally:
        db.conn.close()


def run_workbench(db_path: str, threads: int | None = None) -> None:
    """Run the workbench until the auditor quits."""
    from store.errors import UserError

    app = WorkbenchApp(db_path, threads)
    app.run()
    if app.exit_error:
        raise UserError(app.exit_error)
