"""The Textual apps: one for a rater's labelling session, one for the coordinator."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from textual import on
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from workbench.tui.components.error_modal import ErrorModal

if TYPE_CHECKING:
    import sqlite_utils

    from annotate.trust.identity import Person


class PawApp(App[None]):
    """Shared behaviour: the store connection, worker errors as a modal, palette commands.

    Args:
        db_path: the SQLite file (the app opens its own connection).
        person: an authenticated rater or coordinator.
        set_name: the annotation set to work on.
    """

    CSS_PATH = "app.tcss"
    TITLE = "PAW"
    # Not in the rater's and coordinator's footers, which are full at 80 columns (`?` and F1
    # still open their help); the workbench's footer shows it.
    BINDINGS = [Binding("question_mark", "help", "help", key_display="?", show=False),
                Binding("f1", "help", "help", show=False)]

    def __init__(self, db_path: str, person: Person, set_name: str) -> None:
        from workbench.tui.controls import show_controls_escaped

        show_controls_escaped()  # a note or name never sends a sequence to the terminal
        super().__init__()
        self.db_path = db_path
        """The store file."""
        self.person = person
        """Who is signed in (authenticated by the CLI)."""
        self.set_name = set_name
        """The annotation set."""
        self._db: sqlite_utils.Database | None = None

    @property
    def db(self) -> sqlite_utils.Database:
        """The UI thread's store connection, opened on first use."""
        if self._db is None:
            from store.db import open_db

            self._db = open_db(self.db_path)
        return self._db

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The default commands plus any the screen offers through `palette_commands()`."""
        yield from super().get_system_commands(screen)
        extra = getattr(screen, "palette_commands", None)
        if extra is not None:
            yield from extra()

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        # Workers run with exit_on_error=False; this one handler turns their failures into
        # a modal, so a failed recomputation never takes the labelling session down.
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            error = event.worker.error
            self.push_screen(ErrorModal(f"{event.worker.name or 'background work'} failed",
                                        f"{type(error).__name__}: {error}"))

    def action_help(self) -> None:
        """`?` / F1: the keys of the screen on top (not over another help)."""
        from workbench.tui.components.help_modal import HelpModal, key_rows

        screen = self.screen
        if isinstance(screen, HelpModal):
            return
        notes = getattr(screen, "help_notes", None)
        title = getattr(screen, "HELP_TITLE", None) or type(screen).__name__.removesuffix(
            "Screen").removesuffix("Modal")
        self.push_screen(HelpModal(title, key_rows(screen), notes() if notes else ()))

    def show_error(self, title: str, error: BaseException | str) -> None:
        """Show an error modal (user mistakes print their one-line message)."""
        self.push_screen(ErrorModal(title, str(error)))

    def open_labelling(self, app: str):
        """Labelling on the shared store, as the signed-in rater."""
        from annotate.labelling import StoreLabelling

        return StoreLabelling(self.db, self.person, self.set_name, app)

    def on_unmount(self) -> None:
        if self._db is not None:
            self._db.conn.close()


class AnnotationApp(PawApp):
    """A rater's blinded labelling session: only the labelling screen and its modals."""

    def on_mount(self) -> None:
        from workbench.tui.screens.annotate import AnnotateScreen

        self.sub_title = f"rater {self.person.name}"
        self.push_screen(AnnotateScreen())


class RaterFileApp(PawApp):
    """A rater labelling her own file offline (`paw annotate --file FILE`): the same screen.

    Args:
        file_path: the rater file (`paw annotate pack`).
        person: the rater, signed in against the file.
        conn: the file's connection (opened by the caller, closed when the app ends).
    """

    def __init__(self, file_path: str, person: Person, conn) -> None:
        from annotate.raterfile.file import meta

        super().__init__(file_path, person, meta(conn)["set"])
        self.conn = conn
        """The rater file."""

    def on_mount(self) -> None:
        from workbench.tui.screens.annotate import AnnotateScreen

        self.sub_title = f"rater {self.person.name} · own file"
        self.push_screen(AnnotateScreen())

    def open_labelling(self, app: str):
        """Labelling on the rater's own file."""
        from annotate.raterfile.labelling import FileLabelling

        return FileLabelling(self.conn, self.person, app)

    def on_unmount(self) -> None:
        self.conn.close()
        super().on_unmount()


class CoordinatorApp(PawApp):
    """The coordinator's view: progress per rater and live agreement; `a` adjudicates.

    Args:
        adjudicate: open the adjudication screen at once (`paw adjudicate --screen`).
    """

    def __init__(self, db_path: str, person: Person, set_name: str, *,
                 adjudicate: bool = False, watch: str | None = None) -> None:
        super().__init__(db_path, person, set_name)
        self.adjudicate_first = adjudicate
        """Start on the adjudication screen (esc leads to the agreement view)."""
        self.watch_folder = watch
        """A folder of rater files merged before each recomputation (`--watch`)."""

    def on_mount(self) -> None:
        from workbench.tui.screens.coordinator import CoordinatorScreen

        self.sub_title = f"coordinator {self.person.name} · set {self.set_name}"
        screen = CoordinatorScreen()
        self.push_screen(screen)
        if self.adjudicate_first:
            self.call_after_refresh(screen.action_adjudicate)
