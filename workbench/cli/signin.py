"""Passphrases on the command line: a hidden prompt (getpass) with bounded attempts, or an
environment variable named by `--passphrase-env` for scripts; never a plain argument.

A passphrase given as an argument would land in the shell history and in `ps`; the
variable's *name* is all that appears there. Keys typed before the prompt appears are
neither echoed nor taken as the passphrase (`workbench.cli.typeahead`). Interactive sign-in
allows `MAX_ATTEMPTS` tries, waiting `FAILURE_DELAYS_S` seconds after each wrong one (both in
`workbench.signin_attempts`, as for the workbench's forms; each check also costs a scrypt,
~0.4 s), then stops.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import click

from store.errors import UserError
from workbench.signin_attempts import MAX_ATTEMPTS, failure_delay

_sleep: Callable[[float], None] = time.sleep  # tests replace it

passphrase_env_option = click.option(
    "--passphrase-env", metavar="VAR",
    help="Read the passphrase from environment variable VAR instead of prompting (scripts; "
         "never pass a passphrase itself as an argument).")
"""`--passphrase-env VAR` for the person acting."""

coordinator_passphrase_env_option = click.option(
    "--coordinator-passphrase-env", metavar="VAR",
    help="Read the coordinator's passphrase from environment variable VAR (scripts).")
"""`--coordinator-passphrase-env VAR` where a coordinator authorises someone else's action."""

coordinator_option = click.option(
    "--coordinator", "coordinator", metavar="NAME",
    help="Coordinator authorising this (their passphrase is asked for).")
"""`--coordinator NAME` on commands only a coordinator may run."""


def read_passphrase(name: str, env: str | None, *, confirm: bool = False,
                    what: str = "Passphrase") -> str:
    """The passphrase from environment variable `env` if given, else a hidden prompt.

    Raises:
        UserError: `env` names a variable that is not set.
    """
    if env:
        value = os.environ.get(env)
        if value is None:
            raise UserError(f"--passphrase-env: environment variable {env} is not set")
        return value
    from workbench.cli import typeahead

    # Keys typed before the prompt appeared are dropped, never read as the passphrase
    # (the entry point switched their echo off: `workbench.cli.typeahead`).
    typeahead.discard()
    try:
        return click.prompt(f"{what} for {name}", hide_input=True,
                            confirmation_prompt=confirm, err=True)
    finally:
        typeahead.release()


def read_new_passphrase(name: str, env: str | None) -> str:
    """A new passphrase for `name`: from `env`, or typed at a hidden prompt, its strength
    checked on the first entry (`annotate.trust.passphrase.check`) before it is asked a
    second time to confirm; a weak one or two entries that differ are asked again, up to
    `MAX_ATTEMPTS` times.

    Raises:
        UserError: no acceptable, confirmed passphrase after the last attempt.
    """
    from annotate.trust.passphrase import check

    if env:
        return read_passphrase(name, env)
    for _ in range(MAX_ATTEMPTS):
        first = read_passphrase(name, None, what="New passphrase")
        try:
            check(first, name)
        except UserError as exc:
            click.echo(f"{exc}; try again", err=True)
            continue
        if read_passphrase(name, None, what="Repeat the new passphrase") == first:
            return first
        click.echo("the two entries differ; try again", err=True)
    raise UserError(f"{name}: no acceptable passphrase after {MAX_ATTEMPTS} tries; "
                    "nothing was registered")


def login(db: Any, name: str, env: str | None, role: str | None = None, *,
          write: bool = True):
    """Authenticate `name` (optionally requiring `role`) with bounded attempts.

    `write=False` on a read-only store (`paw verify`): nothing is re-made at sign-in.

    From an environment variable there is one attempt (a script has nothing else to try);
    at the prompt `MAX_ATTEMPTS`, with a growing delay after each failure.

    Raises:
        NotFound: no such person.
        UserError: wrong passphrase (after the last attempt), wrong role, or a person the
            signed record does not vouch for.
    """
    from annotate.trust.identity import require
    from annotate.trust.people import authenticate
    from store.errors import NotFound

    attempts = 1 if env else MAX_ATTEMPTS
    for attempt in range(attempts):
        try:
            return require(authenticate(db, name, read_passphrase(name, env), write=write),
                           role)
        except NotFound:
            raise
        except UserError as exc:
            if "wrong passphrase" not in str(exc):
                raise
            _sleep(failure_delay(attempt))
            if attempt + 1 < attempts:
                click.echo(f"{exc}; try again", err=True)
    if attempts == 1:
        raise UserError(f"{name}: wrong passphrase")
    raise UserError(f"{name}: wrong passphrase {attempts} times; stopped")


def login_file(path: str, env: str | None) -> tuple[Any, Any]:
    """Sign a rater in against her own rater file, with bounded attempts.

    Returns:
        (the file's open connection, the authenticated rater).

    Raises:
        UserError: not a rater file, an altered one, or the wrong passphrase.
    """
    from annotate.raterfile.file import check_statement, open_file, sign_in

    conn = open_file(path)
    try:
        check_statement(conn, path)
        name = conn.execute("SELECT name FROM rater").fetchone()[0]
        attempts = 1 if env else MAX_ATTEMPTS
        for attempt in range(attempts):
            try:
                return conn, sign_in(conn, path, read_passphrase(name, env))
            except UserError as exc:
                if "wrong passphrase" not in str(exc):
                    raise
                _sleep(failure_delay(attempt))
                if attempt + 1 < attempts:
                    click.echo(f"{exc}; try again", err=True)
        raise UserError(f"{name}: wrong passphrase" + (f" {attempts} times; stopped"
                                                       if attempts > 1 else ""))
    except BaseException:
        conn.close()
        raise


def login_coordinator(db: Any, name: str | None, env: str | None, what: str, *,
                      write: bool = True):
    """The authenticated coordinator `name`, required for `what`.

    Raises:
        UserError: no `--coordinator` given, or the sign-in failed.
    """
    if not name:
        raise UserError(f"{what} is the coordinator's: add --coordinator NAME (their "
                        "passphrase is asked for, or read from --passphrase-env VAR)")
    return login(db, name, env, "coordinator", write=write)


BLINDED_HINT = ("people are registered in this store, so the cases' models, arms, operators "
                "and verdicts are the coordinator's (blinding; docs/annotation.md)")
"""Why a read command asks for the coordinator once people are registered."""


def blinding_gate(db: Any, coordinator: str | None, env: str | None, what: str):
    """The coordinator signed in for `what` once people are registered in the store (the
    rule of `paw ui`'s sign-in gate, `annotate.trust.people.people_registered`); None, and
    no sign-in, in a store with nobody registered (nothing is blinded there yet).

    Every read command that shows runs' cases with their model, arm, operator or verdicts
    calls it before reading anything (`paw flips`, `paw flips show`, `paw report`,
    `paw export`); the table of docs/annotation.md lists them.

    Raises:
        UserError: people are registered and no coordinator was named, or the sign-in
            failed (a rater's sign-in included).
    """
    from annotate.trust.people import people_registered

    if not people_registered(db):
        return None
    if not coordinator:
        raise UserError(f"{what}: {BLINDED_HINT}: add --coordinator NAME (their passphrase "
                        "is asked for, or read from --passphrase-env VAR)")
    return login(db, coordinator, env, "coordinator")


def split_pair(text: str) -> tuple[str, str]:
    """'alice,bob' -> ('alice', 'bob').

    Raises:
        UserError: not exactly two different names.
    """
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if len(names) != 2 or names[0] == names[1]:
        raise UserError(f"--raters: expected two different names as A,B, got {text!r}")
    return names
