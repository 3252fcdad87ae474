"""`paw annotate pack` and `paw annotate merge`: a rater's own file (labelled with
`paw annotate --file FILE`, cli/annotation.py; its sign-in: cli/signin.py `login_file`);
and `paw raters upgrade`, a PAW 0.1 person's key made with a coordinator.

A coordinator packs a rater's blinded cases into a file of their own (no audit, model,
operator, verdict or other rater in it); the rater labels it offline with the usual screen;
the coordinator merges it back, every signature and case checked, each event once.
See annotate/raterfile/file.py and annotate/raterfile/merge.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from store.errors import UserError
from workbench.cli.annotation import annotate_group, raters_group
from workbench.cli.options import db_option, open_store
from workbench.cli.outputs import OutputPath, guard_outputs
from workbench.cli.signin import (
    coordinator_option,
    coordinator_passphrase_env_option,
    login,
    login_coordinator,
    passphrase_env_option,
    read_passphrase,
)


@guard_outputs
@annotate_group.command("pack")
@click.argument("set_name", metavar="SET")
@click.option("--rater", required=True, help="The rater (one of the set's two).")
@click.option("--out", required=True, type=OutputPath(replaceable=False),
              help="The file to write (must not exist; never replaced), e.g. alice.paw-rater.")
@click.option("--supersede", is_flag=True,
              help="Pack although the rater has a file of the set: the older file is "
                   "superseded (its labels not merged by now are refused at merge).")
@coordinator_option
@passphrase_env_option
@db_option
def annotate_pack(set_name: str, rater: str, out: str, supersede: bool, coordinator: str | None,
                  passphrase_env: str | None, db_path: str) -> None:
    """Write RATER's own file of SET: only their blinded cases, in their order.

    Hand it to the rater, who labels it offline (`paw annotate --file FILE`) and gives it
    back for `paw annotate merge`. The coordinator signs its case list; the pack is
    recorded in the signed record.
    """
    from annotate.raterfile.file import pack

    db = open_store(db_path)
    person = login_coordinator(db, coordinator, passphrase_env, "packing a rater file")
    packed = pack(db, set_name, rater, out, person, supersede=supersede)
    click.echo(f"wrote {packed.path}: {packed.n_cases} cases of set {set_name} for {rater} "
               f"(file {packed.file_id[:8]}…)")


@annotate_group.command("merge")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@coordinator_option
@passphrase_env_option
@db_option
def annotate_merge(paths: tuple[str, ...], coordinator: str | None, passphrase_env: str | None,
                   db_path: str) -> None:
    """Check rater files (or folders of them) and import their new labels, each once.

    A file packed elsewhere, for another set, altered, or signed by anyone but its rater is
    refused whole, naming why; merging a file again adds nothing. Exits 1 if any was
    refused.
    """
    from annotate.raterfile.merge import Merged, merge, merge_folder

    db = open_store(db_path)
    person = login_coordinator(db, coordinator, passphrase_env, "merging rater files")
    results: list[Any] = []
    from annotate.raterfile.merge import RATER_FILE_SUFFIXES

    empty = []
    for path in paths:
        if Path(path).is_dir():
            found = merge_folder(db, path, person)
            if not found:
                empty.append(path)
            results += found
            continue
        try:
            results.append(merge(db, path, person))
        except UserError as exc:
            results.append(str(exc))
    looked = ", ".join(f"*{suffix}" for suffix in RATER_FILE_SUFFIXES)
    if not results:
        raise UserError(f"{', '.join(empty)}: no rater file in it (looked for {looked} files "
                        "packed by `paw annotate pack`); nothing was merged")
    for folder in empty:
        click.echo(f"{folder}: no rater file in it (looked for {looked})", err=True)
    for result in results:
        if isinstance(result, Merged):
            click.echo(f"{result.path}: {result.rater}, set {result.set_name}: "
                       f"{result.imported} new labels merged, {result.already} already in")
        else:
            click.echo(f"refused: {result}", err=True)
    if any(isinstance(r, Merged) for r in results):
        from annotate.trust.record import head
        from workbench.cli.record_head import keep_head_line

        click.echo(keep_head_line(head(db)[1], db_path))
    if any(not isinstance(r, Merged) for r in results):
        raise SystemExit(1)


@raters_group.command("upgrade")
@click.argument("name")
@click.option("--coordinator", required=True, metavar="NAME",
              help="The coordinator who makes the key with NAME (their passphrase is asked "
                   "for).")
@passphrase_env_option
@coordinator_passphrase_env_option
@db_option
def raters_upgrade(name: str, coordinator: str, passphrase_env: str | None,
                   coordinator_passphrase_env: str | None, db_path: str) -> None:
    """Make the signing key of NAME, registered by PAW 0.1, with a coordinator.

    NAME types their old passphrase; the coordinator signs the record entry, so nobody can
    claim a not-yet-upgraded person's key alone. (The first coordinator of a PAW 0.1 store
    gets their key at their first sign-in, while no coordinator has one.)
    """
    from annotate.trust.people import upgrade_legacy

    db = open_store(db_path)
    by = login(db, coordinator, coordinator_passphrase_env, "coordinator")
    person = upgrade_legacy(db, name, read_passphrase(name, passphrase_env), by=by)
    click.echo(f"{person.name}: signing key made, recorded by {by.name}")


commands: list[click.Command] = []
"""Nothing at the top level: `pack` and `merge` are subcommands of `paw annotate`,
`upgrade` of `paw raters`."""
