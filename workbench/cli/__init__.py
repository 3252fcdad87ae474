"""The `paw` command: a click group whose subcommands live one area per module."""

from __future__ import annotations

import importlib
import sqlite3
import sys

import click

from store.errors import UserError
from workbench import __version__
from workbench.cli.options import DB_META_KEY, group_db_option
from workbench.present.controls import EscapingStream

COMMAND_MODULES: list[str] = [
    "workbench.cli.data",
    "workbench.cli.report",
    "workbench.cli.operators",
    "workbench.cli.annotation",
    "workbench.cli.label",
    "workbench.cli.rater_files",
    "workbench.cli.verify",
    "workbench.cli.backup",
    "workbench.cli.models",
    "workbench.cli.serve",
    "workbench.cli.audit",
    "workbench.cli.study",
    "workbench.cli.robustness",
    "workbench.cli.dbpa",
    "workbench.cli.runs",
    "workbench.cli.flips",
    "workbench.cli.export",
    "workbench.cli.ui",
]
"""Modules that each define a `commands` list of click commands added to `paw`."""


class _Paw(click.Group):
    """The `paw` group, whose command modules are imported on first use rather than when
    `workbench.cli` is imported, so that `main` can switch a terminal's echo off before
    they load (`workbench.cli.typeahead`)."""

    loaded = False
    """True once the command modules are imported and added."""

    def _load(self) -> None:
        if not self.loaded:
            self.loaded = True
            for name in COMMAND_MODULES:
                for command in importlib.import_module(name).commands:
                    self.add_command(command)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._load()
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        self._load()
        return super().get_command(ctx, cmd_name)


@click.group(cls=_Paw,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="paw")
@group_db_option
@click.pass_context
def cli(ctx: click.Context, db_path: str) -> None:
    """PAW, the Perturbation Audit Workbench: audit how clinical language models react
    to edits of their input and of their own chain of thought, offline.

    Every command works on one database file: --db PATH before the command (paw --db x.db
    audits) or after it (paw audits --db x.db; this one wins), else the PAW_DB environment
    variable, else ./paw.db. Start with `paw demo`, then `paw audits` and `paw flips`.
    """
    ctx.meta[DB_META_KEY] = db_path


def main(argv: list[str] | None = None) -> None:
    """Entry point: run `paw`, turning user mistakes into one clear line and exit code 1."""
    from workbench.cli import typeahead

    typeahead.hold(sys.argv[1:] if argv is None else argv)  # before the commands load
    streams = sys.stdout, sys.stderr
    # Every line paw prints, its errors included, with control characters escaped: a
    # name or note holding a terminal sequence is shown, never obeyed (present/controls).
    sys.stdout, sys.stderr = EscapingStream(sys.stdout), EscapingStream(sys.stderr)
    try:
        _run(argv)
    finally:
        sys.stdout, sys.stderr = streams


def _run(argv: list[str] | None) -> None:
    try:
        cli.main(args=argv, prog_name="paw", standalone_mode=False)
    except UserError as exc:
        click.echo(f"paw: error: {exc}", err=True)
        sys.exit(1)
    except click.exceptions.Abort:
        click.echo("paw: aborted", err=True)
        sys.exit(130)
    except click.UsageError as exc:
        # One line, like every other user mistake, with where to look for help.
        where = exc.ctx.command_path if exc.ctx is not None else "paw"
        click.echo(f"paw: error: {exc.format_message()} (see `{where} --help`)", err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        click.echo(f"paw: error: {exc.format_message()}", err=True)
        sys.exit(exc.exit_code)
    except sqlite3.Error as exc:
        # Locked past the busy timeout, read-only, disk full, a table missing: one line
        # naming the cause (each write is one transaction, so nothing is half-done).
        from store.db import describe_sqlite_error

        click.echo(f"paw: error: {describe_sqlite_error(exc)}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        click.echo("paw: interrupted (everything finished so far is stored)", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    except OSError as exc:
        # A path the user named (--out, DEST, a file to read) that cannot be written or
        # read: the file and the system's reason, on one line.
        click.echo(f"paw: error: {describe_os_error(exc)}", err=True)
        sys.exit(1)
    except UnicodeError as exc:
        # Bytes in an argument that are not UTF-8 (the shell passes them through as
        # surrogates) cannot be stored or compared as text.
        click.echo(f"paw: error: expected UTF-8 text in the arguments and files, got "
                   f"{_unicode_detail(exc)}", err=True)
        sys.exit(1)
    except Exception as exc:  # noqa: BLE001 - the last line of defence, see below
        # Not a user mistake PAW knows about: still one line and a non-zero exit, with the
        # way to get the traceback for a bug report (PAW_DEBUG=1 re-raises).
        import os

        if os.environ.get("PAW_DEBUG"):
            raise
        click.echo(f"paw: internal error: {type(exc).__name__}: {exc} (a bug in PAW; run "
                   "again with PAW_DEBUG=1 for the traceback and report it)", err=True)
        sys.exit(70)


def describe_os_error(exc: OSError) -> str:
    """`path: reason` for a failed file operation (the reason as the system words it)."""
    reason = exc.strerror or str(exc)
    if exc.filename is None:
        return reason
    target = f"{exc.filename} -> {exc.filename2}" if exc.filename2 else str(exc.filename)
    return f"{target}: {reason}"


def _unicode_detail(exc: UnicodeError) -> str:
    if isinstance(exc, UnicodeEncodeError | UnicodeDecodeError):
        bad = exc.object[exc.start:exc.end]
        return f"{bad!r} at position {exc.start} ({exc.reason})"
    return str(exc)


if __name__ == "__main__":  # pragma: no cover
    main()
