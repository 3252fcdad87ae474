"""Options shared by every `paw` command (one definition, so help text stays consistent)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from store.db import DEFAULT_DB

db_option: Callable[[Any], Any] = click.option(
    "--db",
    "db_path",
    envvar="PAW_DB",
    default=DEFAULT_DB,
    show_default=True,
    type=click.Path(dir_okay=False),
    help="SQLite database file (also read from PAW_DB).",
)
"""`--db PATH`: the store every command reads and writes."""


def open_store(db_path: str, *, create: bool = False):
    """Open the store named by `--db` (imported lazily so `--help` stays fast).

    The one rule for a missing file, for every command: it is an error ("no such
    database"), except for the commands that create a database and say so with
    `create=True`: `paw import`, `paw demo`, `paw models add` and `paw raters add` (the
    first person registered sets up a new annotation database).

    Args:
        db_path: the `--db` value.
        create: True only in the commands listed above.
    """
    from store.db import open_db

    return open_db(db_path, create=create)
