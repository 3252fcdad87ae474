"""Options shared by every `paw` command (one definition, so help text stays consistent)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from store.db import DEFAULT_DB

DB_META_KEY = "paw.db_path"
"""Where `paw --db PATH` (the group option) leaves its value in the shared `ctx.meta`."""


def group_db_path() -> str:
    """The database a command uses when its own `--db` is not given: `paw --db PATH` before
    the command, else `PAW_DB`, else ./paw.db (the group option resolves the last two)."""
    import os

    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.meta.get(DB_META_KEY):
        return str(ctx.meta[DB_META_KEY])
    return os.environ.get("PAW_DB") or DEFAULT_DB


group_db_option: Callable[[Any], Any] = click.option(
    "--db",
    "db_path",
    envvar="PAW_DB",
    default=DEFAULT_DB,
    show_default=True,
    type=click.Path(dir_okay=False),
    help="SQLite database file for the command (also read from PAW_DB).",
)
"""`paw --db PATH COMMAND`: the same option before the command (see `db_option`)."""

db_option: Callable[[Any], Any] = click.option(
    "--db",
    "db_path",
    default=group_db_path,
    show_default="paw --db, else PAW_DB, else paw.db",
    type=click.Path(dir_okay=False),
    help="SQLite database file.",
)
"""`--db PATH`: the store every command reads and writes. Given after the command it wins;
otherwise the value given before it (`paw --db PATH COMMAND`), `PAW_DB` or ./paw.db — no
envvar here, so `paw --db` beats `PAW_DB` as it should."""


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


threads_option: Callable[[Any], Any] = click.option(
    "--threads", type=click.IntRange(min=1),
    help="CPU cores to use (default: the cores other work leaves idle); in-process each "
         "core runs its own 1-thread batch decoder (docs/runner.md).")
"""`--threads N` of every command that runs a model in-process."""


def engine_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """`--threads`, `--gpu-layers`, `--ctx`, `--batch` and `--servers`: how every generating
    command runs its models (one definition, so the help reads the same everywhere). The
    command receives `threads`, `gpu_layers`, `ctx`, `batch_size` and `servers`; pass them
    to `make_engine`."""
    command = click.option(
        "--servers", envvar="PAW_SERVERS",
        help="Decode on a pool of llama.cpp servers: comma-separated base URLs (see `paw "
             "serve`; default: $PAW_SERVERS); a model the pool does not serve runs "
             "in-process.")(command)
    command = click.option(
        "--batch", "batch_size", type=click.IntRange(min=1),
        help="Sequences decoded per llama.cpp batch (default 8; 1: one at a time). Used only "
             "if the self-check on load finds it bit-identical.")(command)
    command = click.option("--ctx", type=click.IntRange(min=64),
                           help="Context size in tokens (default: the model's, at most "
                                "4096).")(command)
    command = click.option("--gpu-layers", type=int, default=0, show_default=True,
                           help="Layers to offload to a GPU (-1: all; needs a CUDA or Metal "
                                "build of llama-cpp-python, docs/runner.md).")(command)
    return threads_option(command)


def make_engine(db: Any, *, threads: int | None, gpu_layers: int, ctx: int | None,
                batch_size: int | None, servers: str | None) -> Any:
    """The runners of a generating command, from its `engine_options`."""
    from workbench.audit import AuditEngine
    from workbench.models.server import parse_urls, servers_from_env

    urls = parse_urls(servers) if servers else servers_from_env()
    return AuditEngine(db, threads=threads, gpu_layers=gpu_layers, ctx=ctx,
                       batch_size=batch_size, servers=urls)
