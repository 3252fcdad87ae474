"""`paw backup DEST`: a consistent copy of the store, safe while apps are writing to it."""

from __future__ import annotations

import click

from workbench.cli.options import db_option
from workbench.cli.outputs import OutputPath, guard_outputs


@guard_outputs
@click.command("backup")
@click.argument("dest", type=OutputPath())
@db_option
def backup_command(dest: str, db_path: str, force: bool) -> None:
    """Copy the database to DEST (a new file; --force replaces one that is not the
    database) with SQLite's online backup API.

    Consistent while raters label and runs write: the copy is one moment of the store,
    WAL included. Copying paw.db with `cp` during a session is not: recent commits live
    in paw.db-wal until a checkpoint, so a copy of paw.db alone can miss them, and
    copying the two files one after the other can pair a database and a WAL from
    different moments (docs/annotation.md, "Backups").
    """
    from pathlib import Path

    from store.backup import backup

    pages = backup(db_path, dest, replace=force)
    size = Path(dest).stat().st_size
    click.echo(f"backed up {db_path} to {dest}: {pages} pages, {size / 1e6:.1f} MB, "
               "integrity ok")
    from workbench.cli.record_head import keep_head_line, stored_head

    kept = stored_head(dest)
    if kept is not None:  # the copy's annotation record: its head, to find it again
        click.echo(keep_head_line(kept, dest))


commands = [backup_command]
