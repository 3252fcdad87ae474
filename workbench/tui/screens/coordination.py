"""Coordination (key 5 of the workbench): a coordinator signs in, picks a set, and gets the
live agreement view with adjudication — the same screens as `paw coordinate`.

Sign-in checks the passphrase with `annotate.trust.people.authenticate` (scrypt, in a thread
worker) and requires the coordinator role; like the CLI prompt it allows three attempts
with a growing delay, after which the form stays locked for this session of the app. A
coordinator who signed in at the workbench's gate (`screens/signin.py`) is not asked again.
"""

from __future__ import annotations

import time
from typing import Any, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Input, Label, Select, Static

from workbench.tui.components.form_screen import FormScreen
from workbench.tui.host import WorkbenchHost
from workbench.signin_attempts import FailedAttempts
from workbench.tui.messages import SignedIn


class CoordinationScreen(FormScreen):
    """The sign-in form; on success the coordinator screen is pushed on top of it."""

    FIELDS = ("#set", "#name", "#passphrase")

    DEFAULT_CSS = """
    CoordinationScreen { align: center middle; }
    CoordinationScreen > Vertical { width: 70; height: auto; border: round $primary;
                                     padding: 0 1; }
    CoordinationScreen .row { height: auto; }
    CoordinationScreen .row > Label { width: 14; }
    CoordinationScreen .row > Input, CoordinationScreen .row > Select { width: 1fr; }
    CoordinationScreen Input, CoordinationScreen Input:focus {
        border: none; height: 1; padding: 0 1; background: $boost; }
    CoordinationScreen #signin-error { color: $text-error; height: auto; }
    """

    BINDINGS = [Binding("escape", "app.switch_mode('runs')", "back to runs"),
                Binding("ctrl+q", "app.quit", "quit"),
                # Keys typed while focus is off the inputs (after tab) must not reach the
                # app's screen keys (1-5) or quit (q): a passphrase is being typed here.
                Binding("1,2,3,4,5,q", "typed_off_form", show=False)]

    def __init__(self) -> None:
        super().__init__()
        self.failures = FailedAttempts()
        """Wrong passphrases so far."""

    @property
    def paw(self) -> WorkbenchHost:
        """The app, as the `WorkbenchHost` it provides."""
        return cast(WorkbenchHost, self.app)

    def compose(self) -> ComposeResult:
        yield Static("Coordination: sign in as the coordinator to see agreement and adjudicate",
                     id="status", markup=False)
        with Vertical():
            yield Static("Agreement and adjudication are the coordinator's alone. Enter "
                         "signs in.", markup=False)
            with Horizontal(classes="row"):
                yield Label("Set")
                yield Select([], id="set", allow_blank=True, compact=True)
            with Horizontal(classes="row"):
                yield Label("Coordinator")
                yield Input(id="name", placeholder="name")
            with Horizontal(classes="row"):
                yield Label("Passphrase")
                yield Input(id="passphrase", password=True)
            yield Static("", id="signin-error", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        from annotate.sets.annotation_set import set_names

        if self.paw.db_exists:
            names = set_names(self.paw.db)
            select = self.query_one("#set", Select)
            select.set_options([(name, name) for name in names])
            if names:
                select.value = names[-1]
            else:
                self.query_one("#signin-error", Static).update(
                    "no annotation set yet: create one with `paw annotate create`")
        signed_in = self.paw.person
        if signed_in is not None and signed_in.is_coordinator:
            self.query_one("#name", Input).value = signed_in.name
            self.query_one("#signin-error", Static).update(
                f"signed in as {signed_in.name}: choose a set, enter opens it")
        self.query_one("#name", Input).focus()

    def action_typed_off_form(self) -> None:
        """A screen or quit key typed outside the inputs: ignored, with a word why."""
        self.notify("typing here goes to the sign-in form only (escape: back to runs, "
                    "ctrl+q: quit)", severity="warning")
        self.query_one("#name", Input).focus()

    def submit(self) -> None:
        if self.failures.locked:
            return
        set_name = self.query_one("#set", Select).value
        if set_name is Select.BLANK or not set_name:
            self.query_one("#signin-error", Static).update("choose an annotation set")
            return
        signed_in = self.paw.person
        name = self.query_one("#name", Input).value.strip()
        if signed_in is not None and signed_in.is_coordinator and name == signed_in.name:
            self.post_message(SignedIn(signed_in, str(set_name), ""))  # signed in at the gate
            return
        passphrase = self.query_one("#passphrase", Input)
        self.query_one("#signin-error", Static).update("checking…")
        self._check(name, passphrase.value, str(set_name))
        passphrase.value = ""  # now: what is typed while it is checked is the next try

    @work(thread=True, exclusive=True, exit_on_error=False, group="signin", name="sign-in")
    def _check(self, name: str, passphrase: str, set_name: str) -> None:
        from annotate.trust.identity import require
        from annotate.trust.people import authenticate
        from store.db import open_db
        from store.errors import NotFound, UserError

        db = open_db(self.paw.db_path)
        try:
            person: Any = require(authenticate(db, name, passphrase), "coordinator")
            error = ""
        except (NotFound, UserError) as exc:
            person, error = None, str(exc)
        finally:
            db.conn.close()
        if person is None:
            time.sleep(self.failures.delay())  # slows guessing, as at the CLI prompt
        self.post_message(SignedIn(person, set_name, error))

    @on(SignedIn)
    def _signed_in(self, message: SignedIn) -> None:
        from workbench.tui.screens.coordinator import CoordinatorScreen

        if message.person is None:
            self.query_one("#signin-error", Static).update(
                self.failures.record(message.error))
            self.set_focus(self.query_one("#passphrase", Input))
            return
        self.paw.person = message.person
        self.paw.set_name = message.set_name
        self.paw.sub_title = f"coordinator {message.person.name} · set {message.set_name}"
        self.query_one("#signin-error", Static).update("")
        self.app.push_screen(CoordinatorScreen())
