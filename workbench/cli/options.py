"""Options shared by every `paw` command (one definition, so help text stays consistent)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from store.db import DEFAULT_DB

INT64_MAX = 2**63 - 1
"""The largest integer SQLite stores: every whole-number option is bounded by it, so a
huge value is refused naming its option instead of overflowing in a query."""


class WholeNumber(click.IntRange):
    """An `IntRange` whose error names SQLite's bound in words, not as 19 digits."""

    def _describe_range(self) -> str:
        low = f"x>={self.min}" if self.min is not None and self.min > -INT64_MAX else ""
        high = ("at most 2^63-1, SQLite's largest integer" if self.max == INT64_MAX
                else f"x<={self.max}")
        return " and ".join(p for p in (low, high) if p)


def whole(min: int | None = None, max: int = INT64_MAX) -> click.IntRange:
    """A whole-number option type from `min` to `max` (SQLite's 64-bit range by default)."""
    return WholeNumber(min=min if min is not None else -INT64_MAX, max=max)


class FiniteFloat(click.FloatRange):
    """A `FloatRange` that also refuses nan and inf (which compare false to any bound)."""

    name = "finite float"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        import math

        result = super().convert(value, param, ctx)
        if not math.isfinite(result):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return result


def real(min: float | None = None, max: float | None = None, *, min_open: bool = False,
         max_open: bool = False) -> FiniteFloat:
    """A finite real-number option type, optionally bounded."""
    return FiniteFloat(min=min, max=max, min_open=min_open, max_open=max_open)


class NameType(click.ParamType):
    """A name the user gives (`--name`): refused when empty or blank, never silently
    replaced by a default."""

    name = "name"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail(f"expected a name, got {value!r} (leave the option out for the "
                      "default name)", param, ctx)
        return value


NAME = NameType()
"""The type of every `--name` option."""


def prepare_output(path: str, option: str = "--out", *, folder: bool = False) -> None:
    """Check an output path before any work is done, creating its folder if needed.

    Args:
        path: the file (or, with `folder`, the folder) a command will write.
        option: the option that named it, for the message.
        folder: `path` is itself a folder to write into.

    Raises:
        UserError: the folder cannot be created or written, or a file path is a folder.
    """
    import os
    from pathlib import Path

    from store.errors import UserError

    target = Path(path).expanduser()
    parent = target if folder else target.parent
    if not folder and target.is_dir():
        raise UserError(f"{option} {path}: expected a file name, got a folder")
    missing = [p for p in (parent, *parent.parents) if not p.exists()]
    try:
        # Created to prove it can be, then removed again: a command refused later (a
        # sign-in, a bad reference) leaves no empty folder behind; it creates it itself.
        parent.mkdir(parents=True, exist_ok=True)
        writable = os.access(parent, os.W_OK)
    except OSError as exc:
        raise UserError(f"{option} {path}: cannot create the folder {parent} "
                        f"({exc.strerror})") from None
    finally:
        for created in missing:
            try:
                created.rmdir()
            except OSError:
                break
    if not writable:
        raise UserError(f"{option} {path}: the folder {parent} is not writable")


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


def open_store(db_path: str, *, create: bool = False, readonly: bool = False):
    """Open the store named by `--db` (imported lazily so `--help` stays fast).

    The one rule for a missing file, for every command: it is an error ("no such
    database"), except for the commands that create a database and say so with
    `create=True`: `paw import`, `paw demo`, `paw models add` and `paw raters add` (the
    first person registered sets up a new annotation database).

    Args:
        db_path: the `--db` value.
        create: True only in the commands listed above.
        readonly: open without ever writing (`paw verify`: archives, read-only mounts;
            `store.db.open_readonly`).
    """
    from store.db import open_db, open_readonly

    if readonly:
        return open_readonly(db_path)
    return open_db(db_path, create=create)


threads_option: Callable[[Any], Any] = click.option(
    "--threads", type=whole(1),
    help="CPU cores to use (default: the cores other work leaves idle); in-process each "
         "core runs its own 1-thread batch decoder (docs/runner.md).")
"""`--threads N` of every command that runs a model in-process."""


SERVER_META_KEY = "paw.server_options"
"""Where the pool options (`--server-concurrency`, `--server-timeout`, `--api-key`,
`--server-header`) leave their values in `ctx.meta`, so commands need no parameter each."""


def _keep_server_option(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    ctx.meta.setdefault(SERVER_META_KEY, {})[param.name] = value
    return value


def server_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The pool options besides `--servers`, read back by `make_engine`."""
    for decorator in (
        click.option("--server-header", "server_headers", multiple=True, expose_value=False,
                     callback=_keep_server_option, metavar="'NAME: VALUE'",
                     help="An HTTP header sent to every server (repeatable)."),
        click.option("--api-key", "api_key", envvar="PAW_SERVER_API_KEY", expose_value=False,
                     callback=_keep_server_option,
                     help="The servers' API key (sent as 'Authorization: Bearer KEY'; "
                          "default: $PAW_SERVER_API_KEY)."),
        click.option("--server-timeout", "server_timeout", type=real(1),
                     default=600.0, show_default=True, expose_value=False,
                     callback=_keep_server_option,
                     help="Seconds one server request may take, and the whole pool may be "
                          "down, before it counts as failed."),
        click.option("--allow-mixed-engines", "allow_mixed_engines", is_flag=True,
                     expose_value=False, callback=_keep_server_option,
                     help="Let a run go on on another engine (in-process, or another pool "
                          "kind, build or slot mode) than the one that made its stored "
                          "generations; its reports then state the mix per arm."),
        click.option("--server-concurrency", "server_concurrency", expose_value=False,
                     type=whole(1), callback=_keep_server_option,
                     help="Requests in flight per server (default: its slot count from "
                          "/props; 1 is serial and reproducible)."),
    ):
        command = decorator(command)
    return command


def engine_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """`--threads`, `--gpu-layers`, `--ctx`, `--batch`, `--servers` and the pool options: how
    every generating command runs its models (one definition, so the help reads the same
    everywhere). The command receives `threads`, `gpu_layers`, `ctx`, `batch_size` and
    `servers`; pass them to `make_engine` (which reads the pool options itself)."""
    command = server_options(command)
    command = click.option(
        "--servers", envvar="PAW_SERVERS",
        help="Decode on a pool of llama.cpp servers (llama-server, llama_cpp.server or any "
             "OpenAI-compatible server with log-probs): comma-separated base URLs (see "
             "`paw serve`; default: $PAW_SERVERS). A model the pool does not serve is an "
             "error, never a silent in-process run.")(command)
    command = click.option(
        "--batch", "batch_size", type=whole(1),
        help="Sequences decoded per llama.cpp batch (default: the width with the best "
             "decode rate, measured on first use on this machine and stored; 1: one at a "
             "time). Used only if the self-check on load finds it bit-identical.")(command)
    command = click.option("--ctx", type=whole(64),
                           help="Context size in tokens (default: the model's, at most "
                                "4096).")(command)
    command = click.option("--gpu-layers", type=whole(-1), default=0, show_default=True,
                           help="Layers to offload to a GPU (-1: all; needs a CUDA or Metal "
                                "build of llama-cpp-python, docs/runner.md).")(command)
    return threads_option(command)


def pool_settings(servers: str | None, ctx: int | None) -> Any:
    """The `PoolSettings` of `--servers` (else PAW_SERVERS) and the pool options; None when
    no pool is named.

    Raises:
        UserError: a `--server-header` is not 'Name: value'.
    """
    from store.errors import UserError
    from workbench.models.pool_settings import PoolSettings, parse_urls, servers_from_env

    urls = parse_urls(servers) if servers else servers_from_env()
    if not urls:
        return None
    context = click.get_current_context(silent=True)
    given = dict(context.meta.get(SERVER_META_KEY, {})) if context is not None else {}
    headers = []
    for header in given.get("server_headers") or ():
        name, sep, value = header.partition(":")
        if not sep or not name.strip():
            raise UserError(f"--server-header: {header!r} is not 'Name: value'")
        headers.append((name.strip(), value.strip()))
    return PoolSettings(tuple(urls), api_key=given.get("api_key"), headers=tuple(headers),
                        concurrency=given.get("server_concurrency"),
                        timeout_s=float(given.get("server_timeout") or 600.0), ctx=ctx)


def make_engine(db: Any, *, threads: int | None, gpu_layers: int, ctx: int | None,
                batch_size: int | None, servers: str | None) -> Any:
    """The runners of a generating command, from its `engine_options`."""
    from workbench.engine import AuditEngine

    return AuditEngine(db, threads=threads, gpu_layers=gpu_layers, ctx=ctx,
                       batch_size=batch_size, servers=pool_settings(servers, ctx),
                       allow_mixed_engines=allow_mixed_engines())


def allow_mixed_engines() -> bool:
    """Whether `--allow-mixed-engines` was given to the running command."""
    context = click.get_current_context(silent=True)
    given = dict(context.meta.get(SERVER_META_KEY, {})) if context is not None else {}
    return bool(given.get("allow_mixed_engines"))


def fail_on_errors(errors: int, what: str = "generation(s)") -> None:
    """End a generating command with exit 1 when it left `errors` failed rows or jobs.

    Raises:
        UserError: says how many, and that the same command retries them.
    """
    from store.errors import UserError

    if errors:
        raise UserError(f"{errors} {what} ended in error (status 'error', see `paw runs`); "
                        "run the same command again to retry them")
