"""The one rule for every file a command writes where the user says (`--out`, `DEST`).

No command writes over the store: the open database and its `-wal`, `-shm` and `-journal`
files are refused whatever the flags (compared by the file itself, so `./paw.db`, a
symlink or a hard link to it are the same file). No command writes over a file it did not
create: an existing file is refused naming it, unless `--force` is given, which replaces
any file that is not the store. A rater file is never replaced, with or without it (it
may hold labels not yet merged).

How a command uses it: its path options take the type `OutputPath()` and the command is
wrapped with `@guard_outputs` (above `@click.command`), which adds `--force` and checks
every `OutputPath` value before the command's body runs — before a passphrase is asked
or a minute of work is done. Files whose names are known only later (a report's default
name, the figures written beside it, the files of an export folder) are checked with
`check_output(path)` just before they are written. `tests/cli/test_outputs.py` walks the
click tree, so a new path option that writes cannot skip the guard.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

from store.errors import UserError, is_link_loop, no_such

STORE_SUFFIXES = ("", "-wal", "-shm", "-journal")
"""The database file and the files SQLite keeps beside it."""

GUARD_META_KEY = "paw.output_guard"
"""Where a guarded command leaves its database path and `--force` in `ctx.meta`."""

FORCE_HELP = "Replace an existing output file (never the database or its -wal/-shm)."


class OutputPath(click.Path):
    """A path a command writes: a file, or with `folder` a folder it writes files into.

    Args:
        folder: the value names a folder (each file written in it is checked later).
        replaceable: False for a file that `--force` must not replace either (a rater's
            file); the message says so.
    """

    def __init__(self, *, folder: bool = False, replaceable: bool = True) -> None:
        super().__init__(dir_okay=folder, file_okay=not folder)
        self.folder = folder
        self.replaceable = replaceable


def _same_file(a: Path, b: Path) -> bool:
    try:
        if os.path.samefile(a, b):
            return True
    except OSError:
        pass
    return os.path.realpath(a) == os.path.realpath(b)


def store_file(path: str | Path, db_path: str | Path) -> str | None:
    """Which of the store's files `path` is ('the database', 'its -wal file', …), or None."""
    target = Path(path).expanduser()
    given = Path(db_path).expanduser()
    # SQLite keeps -wal and -shm beside the file a symlink leads to: both places count.
    for db in dict.fromkeys((given, Path(os.path.realpath(given)))):
        for suffix in STORE_SUFFIXES:
            if _same_file(target, db.with_name(db.name + suffix)):
                return "the database" if not suffix else f"the database's {suffix} file"
    return None


def refuse_store(path: str | Path, db_path: str | Path, option: str) -> None:
    """Raise if `path` is the store or one of SQLite's files beside it.

    Raises:
        UserError: naming the option, the path and the database.
    """
    which = store_file(path, db_path)
    if which is not None:
        raise UserError(f"{option} {path}: is {which} ({db_path}); PAW never writes a "
                        "file over the store, whatever the flags; choose another file name")


def refuse_existing(path: str | Path, option: str, *, force: bool,
                    replaceable: bool = True) -> None:
    """Raise if `path` exists and may not be replaced.

    Raises:
        UserError: naming the file and how to replace it (or that it never is).
    """
    target = Path(path).expanduser()
    if not (target.exists() or target.is_symlink()):
        return
    if is_link_loop(target):
        raise UserError(f"{option} {no_such(path, 'file name to write')}")
    if target.is_dir():
        raise UserError(f"{option} {path}: expected a file name, got a folder")
    if not replaceable:
        raise UserError(f"{option} {path}: already exists; PAW never replaces it (it may "
                        "hold work not yet merged): choose a new file name")
    if not force:
        raise UserError(f"{option} {path}: already exists; pass --force to replace it, "
                        "or choose a new file name")


def check_output(path: str | Path, option: str = "--out", *,
                 replaceable: bool = True) -> None:
    """Check one file a guarded command is about to write (names known only late).

    Raises:
        UserError: the file is the store, or exists and `--force` was not given.
    """
    ctx = click.get_current_context(silent=True)
    state = ctx.meta.get(GUARD_META_KEY) if ctx is not None else None
    if state is None:
        raise RuntimeError("check_output outside a command wrapped by guard_outputs")
    refuse_store(path, state["db_path"], option)
    refuse_existing(path, option, force=state["force"], replaceable=replaceable)


def check_outputs(paths: Iterable[str | Path], option: str = "--out") -> None:
    """`check_output` for each of `paths` (a report and its figures, an export's files)."""
    for path in paths:
        check_output(path, option)


def report_files(report: Any, out: str | Path) -> list[Path]:
    """The files `Report.write(out)` writes: `out` and `<stem>_<figure>.png` beside it."""
    out = Path(out)
    return [out, *(out.with_name(f"{out.stem}_{fig.name}.png") for fig in report.figures)]


def _option_label(param: click.Parameter) -> str:
    if isinstance(param, click.Option):
        return max(param.opts, key=len)
    return (param.name or "PATH").upper()


def outputs_of(command: click.Command) -> list[click.Parameter]:
    """The command's parameters whose type is `OutputPath`."""
    return [p for p in command.params if isinstance(p.type, OutputPath)]


def guard_outputs(command: click.Command) -> click.Command:
    """Wrap `command` (a click command with `OutputPath` parameters): add `--force` and
    check every output path before its body runs (see the module docstring)."""
    params = outputs_of(command)
    if not params:
        raise TypeError(f"{command.name}: guard_outputs on a command with no OutputPath")
    if any(p.type.replaceable for p in params):  # type: ignore[attr-defined]
        command.params.append(click.Option(["--force"], is_flag=True, help=FORCE_HELP,
                                           expose_value=True))
    body = command.callback
    assert body is not None
    wants_force = "force" in inspect.signature(body).parameters

    @functools.wraps(body)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        from workbench.cli.options import group_db_path, prepare_output

        force = bool(kwargs.get("force") if wants_force else kwargs.pop("force", False))
        db_path = kwargs.get("db_path") or group_db_path()
        ctx = click.get_current_context()
        ctx.meta[GUARD_META_KEY] = {"db_path": db_path, "force": force}
        for param in params:
            value = kwargs.get(param.name or "")
            if value is None:
                continue
            kind: OutputPath = param.type  # type: ignore[assignment]
            label = _option_label(param)
            refuse_store(value, db_path, label)
            prepare_output(value, label, folder=kind.folder)
            if not kind.folder:
                refuse_existing(value, label, force=force, replaceable=kind.replaceable)
        return body(*args, **kwargs)

    guarded.paw_guarded = True  # type: ignore[attr-defined]
    command.callback = guarded
    return command


def is_guarded(command: click.Command) -> bool:
    """True when `command`'s callback was wrapped by `guard_outputs`."""
    return bool(getattr(command.callback, "paw_guarded", False))

