"""What a screen may use of the app it runs in: small Protocols, so no screen imports an app.

`workbench.tui.app.PawApp` (the rater's and coordinator's apps) provides `SessionHost`;
`workbench.tui.workbench_app.WorkbenchApp` provides `WorkbenchHost`. The apps import the
screens, the screens import only this module: the dependency points one way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import sqlite_utils

    from annotate.trust.people import Person
    from workbench.tui.live import LiveRun


class SessionHost(Protocol):
    """The store, the signed-in person and the set: what the annotation screens use."""

    db_path: str
    """The store file (workers open their own connection on it)."""
    person: Person
    """Who is signed in."""
    set_name: str
    """The annotation set."""
    sub_title: str
    """The header's second line (the workbench sets it when a coordinator signs in)."""

    @property
    def db(self) -> sqlite_utils.Database:
        """The UI thread's store connection."""
        ...

    def show_error(self, title: str, error: BaseException | str) -> None:
        """Show an error modal."""
        ...

    def open_labelling(self, app: str) -> Any:
        """The rater's `annotate.labelling.Labelling` (the store, or their own file)."""
        ...


class WorkbenchHost(SessionHost, Protocol):
    """`SessionHost` plus the auditor's workbench state shared across its screens."""

    threads: int | None
    """CPU threads of runs launched from the UI."""
    backend_factory: Any
    """Builds a model backend for runs launched here (None: llama.cpp)."""
    live: LiveRun | None
    """The run launched from the app, if any (kept across screen switches)."""
    focus_audit: int | None
    """The run the auditor last selected."""
    locked: bool
    """True until a coordinator signs in at the gate (when people are registered)."""

    def unlock(self, person: Any) -> None:
        """Open the workbench for a coordinator who signed in at the gate."""
        ...

    @property
    def db_name(self) -> str:
        """The database file's name."""
        ...

    @property
    def db_exists(self) -> bool:
        """Whether the database file exists."""
        ...
