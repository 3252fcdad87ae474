"""The workbench's sign-in gate: once people are registered, `paw ui` opens for a coordinator.

The workbench shows what a rater's labels must be blind to — every run's models, the
flips with their arm, operator and verdicts, the clinician sections of the statistics —
so on a database with raters and coordinators it starts on this screen, its own mode,
and every other screen stays closed (`WorkbenchApp.locked`) until a coordinator signs in.
A rater who signs in is told to use `paw annotate`, which shows only blinded cases. Like
the CLI prompt, three wrong passphrases lock the form for this run of the app, with a
growing delay after each (every check is also one scrypt).
"""

from __future__ import annotations

import time
from typing import Any, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Input, Label, Static

from workbench.tui.components.form_screen import FormScreen
from workbench.tui.host import WorkbenchHost
from workbench.signin_attempts import FailedAttempts
from workbench.tui.messages import SignedIn

GATE_TEXT = (
    "This database has raters and coordinators. The workbench shows model names, "
    "operators, automatic verdicts and the clinicians' statistics, which a rater's labels "
    "must be blind to, so it opens only for a coordinator.\n"
    "Raters: press ctrl+q and label with `paw annotate --rater NAME` (or your own file: "
    "`paw annotate --file FILE`).")
"""What the gate says before anyone signs in."""


def rater_refusal(name: str) -> str:
    """What a rater who signs in at the gate is told."""
    return (f"{name}: raters do not use the workbench (it would unblind you): label with "
            f"`paw annotate --rater {name}`, or your own file with `paw annotate --file FILE`")


class SignInScreen(FormScreen):
    """The gate: name and passphrase of a coordinator; nothing else of the app is reachable."""

    DEFAULT_CSS = """
    SignInScreen { align: center middle; }
    SignInScreen > Vertical { width: 76; max-width: 100%; height: auto;
                              border: round $primary; padding: 0 1; }
    SignInScreen .row { height: auto; }
    SignInScreen .row > Label { width: 14; }
    SignInScreen .row > Input { width: 1fr; }
    SignInScreen Input, SignInScreen Input:focus {
        border: none; height: 1; padding: 0 1; background: $boost; }
    SignInScreen #gate-error { color: $text-error; height: auto; }
    """

    BINDINGS = [Binding("ctrl+q", "app.quit", "quit")]  # tab/enter: `FormScreen`

    AUTO_FOCUS = "#name"

    def __init__(self) -> None:
        super().__init__()
        self.failures = FailedAttempts()
        """Wrong passphrases so far."""

    @property
    def paw(self) -> WorkbenchHost:
        """The app, as the `WorkbenchHost` it provides."""
        return cast(WorkbenchHost, self.app)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Sign in: coordinators only", classes="title", markup=False)
            yield Static(GATE_TEXT, markup=False)
            with Horizontal(classes="row"):
                yield Label("Coordinator")
                yield Input(id="name", placeholder="name")
            with Horizontal(classes="row"):
                yield Label("Passphrase")
                yield Input(id="passphrase", password=True)
            yield Static("", id="gate-error", markup=False)
        yield Footer()

    def submit(self) -> None:
        if self.failures.locked:
            return
        passphrase = self.query_one("#passphrase", Input)
        self.query_one("#gate-error", Static).update("checking…")
        self._check(self.query_one("#name", Input).value.strip(), passphrase.value)
        passphrase.value = ""  # now: what is typed while it is checked is the next try

    @work(thread=True, exclusive=True, exit_on_error=False, group="gate", name="sign-in")
    def _check(self, name: str, passphrase: str) -> None:
        from annotate.trust.people import authenticate
        from store.db import open_db
        from store.errors import NotFound, UserError

        db = open_db(self.paw.db_path)
        person: Any = None
        try:
            person, error = authenticate(db, name, passphrase), ""
        except (NotFound, UserError) as exc:
            error = str(exc)
        finally:
            db.conn.close()
        if person is not None and not person.is_coordinator:
            self.post_message(SignedIn(None, "", rater_refusal(person.name), rater=True))
            return
        if person is None:  # slows guessing, as at the CLI prompt
            time.sleep(self.failures.delay())
        self.post_message(SignedIn(person, "", error))

    @on(SignedIn)
    def _signed_in(self, message: SignedIn) -> None:
        status = self.query_one("#gate-error", Static)
        if message.rater:
            status.update(message.error)
            return
        if message.person is None:
            status.update(self.failures.record(message.error))
            self.set_focus(self.query_one("#passphrase", Input))
            return
        status.update("")
        self.paw.unlock(message.person)
