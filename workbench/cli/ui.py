"""`paw ui`: the auditor's Textual workbench (runs, flip inspector, statistics, models & data)."""

from __future__ import annotations

import click

from workbench.cli.options import db_option, whole


@click.command("ui")
@click.option("--threads", type=whole(1),
              help="CPU threads for runs launched from the UI (default: idle cores).")
@db_option
def ui_command(threads: int | None, db_path: str) -> None:
    """Open the auditor's workbench: launch and watch audits, inspect flipped cases,
    read the statistics of any run, register models and import datasets.

    Keys 1-5 switch screens (runs, flips, statistics, models & data, coordination); ctrl+p opens the
    command palette; q quits (a run in progress stops after the generation in flight,
    everything finished is stored). With no database at --db, it offers to create one
    with the demo set. Once raters or coordinators are registered it opens only for a
    coordinator (a sign-in gate: these screens show models, operators, verdicts and the
    clinicians' statistics); raters label with `paw annotate --rater NAME` (or
    `--file FILE`), a separate app that cannot reach these screens.
    """
    from pathlib import Path

    from store.errors import UserError
    from workbench.tui.workbench_app import run_workbench

    folder = Path(db_path).expanduser().resolve().parent
    if not folder.is_dir():  # before the app starts: it could not create the file there
        raise UserError(f"{db_path}: folder {folder} does not exist (--db)")
    from workbench.cli import typeahead

    # Keys typed before the app is on screen reach no form the typist could see: a
    # passphrase typed ahead would otherwise land in the sign-in form's name field.
    typeahead.discard()
    run_workbench(db_path, threads)


commands = [ui_command]
