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


def open_store(db_path: str):
    """Open the store named by `--db` (imported lazily so `--help` stays fast)."""
    from store.db import open_db

    return open_db(db_path)
