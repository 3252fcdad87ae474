"""`paw raters`, `paw annotate`, `paw coordinate`, `paw label`, `paw agreement`, `paw adjudicate`:
the clinician re-annotation workflow from the command line (`paw verify`: cli/verify.py).

Access: a rater's commands (`annotate --rater`, `label`) show only her own labels; all that
shows several raters' labels or agreement (`agreement`, `annotate export`, `adjudicate`,
`coordinate`, `paw report`'s annotation sections) needs a coordinator's passphrase."""

from __future__ import annotations

import json

import click

from store.errors import UserError
from workbench.cli.codebook_help import CODEBOOK_EPILOG
from workbench.cli.options import NAME, db_option, open_store, whole
from workbench.cli.outputs import OutputPath, guard_outputs
from workbench.cli.signin import (
    coordinator_option,
    coordinator_passphrase_env_option,
    login,
    login_coordinator,
    passphrase_env_option,
    read_new_passphrase,
    split_pair,
)

_passphrase_env = passphrase_env_option
_coordinator_passphrase_env = coordinator_passphrase_env_option


def _audit_id(db, audit: str) -> int:
    row = db.execute("SELECT id FROM audits WHERE id = ? OR name = ? ORDER BY id LIMIT 1",
                     [int(audit) if audit.isdigit() else -1, audit]).fetchone()
    if row is None:
        raise UserError(f"--audit: no audit with id or name {audit!r}")
    return int(row[0])


# ---- raters -------------------------------------------------------------------------------

@click.group("raters", invoke_without_command=True)
@db_option
@click.pass_context
def raters_group(ctx: click.Context, db_path: str) -> None:
    """Register and list raters and coordinators (`paw raters` alone lists them)."""
    if ctx.invoked_subcommand is None:
        from annotate.trust.people import list_people

        if not list_people(open_store(db_path)):
            click.echo("no raters or coordinators yet: `paw raters add NAME --role "
                       "coordinator` sets up annotation")
            return
        ctx.invoke(raters_list, db_path=db_path)


@raters_group.command("add")
@click.argument("name")
@click.option("--role", type=click.Choice(["rater", "coordinator"]), default="rater",
              show_default=True, help="A rater labels blinded; a coordinator sees agreement "
                                      "and adjudicates.")
@coordinator_option
@_passphrase_env
@_coordinator_passphrase_env
@db_option
def raters_add(name: str, role: str, coordinator: str | None, passphrase_env: str | None,
               coordinator_passphrase_env: str | None, db_path: str) -> None:
    """Register NAME with a passphrase and a signing key (the key is sealed under it).

    Once a coordinator exists, registering anyone needs a coordinator's passphrase
    (--coordinator NAME). On a new database the first coordinator registers alone: that is
    the setup, done by whoever will create the annotation set. Raters registered before
    then are trusted only once a coordinator names them as a set's raters.
    """
    from annotate.trust.keys import cost_warning
    from annotate.trust.people import coordinator_exists, register

    db = open_store(db_path, create=True)  # creates a database (see options.open_store)
    by = None
    if coordinator is not None:
        by = login(db, coordinator, coordinator_passphrase_env, "coordinator")
    elif coordinator_exists(db):
        raise UserError("registering needs a coordinator once one exists: add --coordinator "
                        "NAME (their passphrase is asked for)")
    warning = cost_warning()
    if warning:
        click.echo(warning, err=True)
    person = register(db, name, role, read_new_passphrase(name, passphrase_env), by=by)
    vouched = f" by {by.name}" if by else " (self-registered: no coordinator yet)"
    click.echo(f"registered {person.role} {person.name}{vouched}")


@raters_group.command("list")
@db_option
def raters_list(db_path: str) -> None:
    """List registered raters and coordinators."""
    from annotate.trust.people import list_people

    for name, role in list_people(open_store(db_path)):
        click.echo(f"{name}\t{role}")


# ---- annotate -----------------------------------------------------------------------------

@click.group("annotate", invoke_without_command=True, epilog=CODEBOOK_EPILOG)
@click.option("--rater", help="Start RATER's blinded labelling session (Textual UI).")
@click.option("--file", "rater_file", type=click.Path(dir_okay=False),
              help="Label your own rater file offline (from `paw annotate pack`) instead of "
                   "the shared database.")
@click.option("--set", "set_name", help="Annotation set (default: the newest).")
@_passphrase_env
@db_option
@click.pass_context
def annotate_group(ctx: click.Context, rater: str | None, rater_file: str | None,
                   set_name: str | None, passphrase_env: str | None, db_path: str) -> None:
    """Label an annotation set as RATER (`paw annotate --rater NAME`) or your own file
    (`paw annotate --file FILE`), or create, pack, merge and export sets."""
    if ctx.invoked_subcommand is not None:
        return
    if rater_file is not None:
        from workbench.cli.signin import login_file

        run = _tui("run_rater_file")
        conn, person = login_file(rater_file, passphrase_env)
        run(rater_file, person, conn)
        return
    if rater is None:
        click.echo(ctx.get_help())
        return
    from annotate.sets.annotation_set import get_set, resolve_set
    from annotate.sets.raters import require_named_rater

    db = open_store(db_path)
    person = login(db, rater, passphrase_env, "rater")
    chosen = resolve_set(db, set_name)
    require_named_rater(db, get_set(db, chosen).id, person)
    db.conn.close()
    _tui("run_annotation")(db_path, person, chosen)


def _tui(name: str):
    try:
        import workbench.tui as tui
    except ImportError as exc:  # textual missing from this install
        raise UserError(f"the terminal UI is unavailable ({exc}); use `paw label` instead") \
            from None
    function = getattr(tui, name, None)
    if function is None:
        raise UserError(f"the terminal UI has no {name} yet; use `paw label` instead")
    return function


@annotate_group.command("create")
@click.option("--audit", help="Audit id or name whose perturbed cases to sample; several, "
                              "comma-separated, draw one sample across their datasets (seed "
                              "002 Appendix M spans three benchmarks).")
@click.option("--robustness", metavar="NAME_OR_ID",
              help="Instead of --audit: a seed-003 robustness run (`paw robustness`) whose "
                   "judge verdicts (CFV, direction, stereotype flags) the raters check, "
                   "stratified by test x dataset x model.")
@click.option("--size", type=whole(1), required=True, help="Number of cases to draw.")
@click.option("--raters", "raters", required=True, metavar="A,B",
              help="The set's two raters (registered): only they label it, and agreement "
                   "always compares them.")
@click.option("--coordinator", required=True, metavar="NAME",
              help="Coordinator creating the set (their passphrase is asked for); they sign "
                   "its case list and raters.")
@click.option("--per-family", type=whole(0), default=50, show_default=True,
              help="At most this many cases per operator family (0: no cap).")
@click.option("--seed", type=whole(0), default=0, show_default=True, help="Sampling seed.")
@click.option("--name", type=NAME,
              help="Set name (default: audit<ID>-set<N>); raters see it: no model names.")
@click.option("--chain-size", type=whole(0),
              help="Cases of M2/M4/M5 asked the chain-registration question (default: all).")
@_passphrase_env
@db_option
def annotate_create(audit: str | None, robustness: str | None, size: int, raters: str,
                    coordinator: str, per_family: int, seed: int, name: str | None,
                    chain_size: int | None, passphrase_env: str | None, db_path: str) -> None:
    """Draw a stratified, seeded sample of an audit's perturbed cases for two raters.

    Seed 002 Appendix M's frame: M2/M3/M4/M5 question edits (no PubMedQA), strata operator
    family × dataset drawn in turn (equal allocation); each case shows one model's answer,
    an M3/M4/M5 flip (with the harm question) balanced over model tiers where there is one.
    Both raters get the same cases, each in their own seeded order.
    """
    from annotate.sets.audit import create_set

    if (audit is None) == (robustness is None):
        raise click.UsageError("give one of --audit or --robustness")
    db = open_store(db_path)
    if robustness is not None:
        from store.runs import find_run

        audit_id = find_run(db, robustness, ("robustness",)).id
    else:
        audit_ids = [_audit_id(db, one.strip()) for one in (audit or "").split(",")]
        audit_id, also_audits = audit_ids[0], tuple(audit_ids[1:])
    pair = split_pair(raters)
    person = login_coordinator(db, coordinator, passphrase_env, "creating a set")
    the_set = create_set(db, audit_id, size, per_family=per_family or None,
                         seed=seed, name=name, chain_size=chain_size, raters=pair,
                         coordinator=person,
                         also_audits=also_audits if robustness is None else ())
    click.echo(f"created set {the_set.name}: {the_set.size} cases "
               f"({the_set.n_harm} with the harm question, {the_set.n_chain} with chain "
               f"registration), raters {pair[0]} and {pair[1]}, codebook "
               f"{the_set.codebook_version}")
    for stratum, count in the_set.strata.items():
        click.echo(f"  {stratum.replace('|', ' / ')}: {count}")
    for line in the_set.notes():
        click.echo(line)


@annotate_group.command("assign")
@click.option("--set", "set_name", required=True, help="The set (drawn without raters).")
@click.option("--raters", "raters", required=True, metavar="A,B", help="Its two raters.")
@click.option("--coordinator", required=True, metavar="NAME", help="Coordinator naming them.")
@_passphrase_env
@db_option
def annotate_assign(set_name: str, raters: str, coordinator: str, passphrase_env: str | None,
                    db_path: str) -> None:
    """Name the two raters of a set that has none yet (e.g. one drawn by PAW 0.1)."""
    from annotate.sets.annotation_set import assign_raters

    db = open_store(db_path)
    pair = split_pair(raters)
    person = login_coordinator(db, coordinator, passphrase_env, "naming raters")
    assign_raters(db, person, set_name, pair)
    click.echo(f"set {set_name}: raters {pair[0]} and {pair[1]}, sealed by {person.name}")


@guard_outputs
@annotate_group.command("export")
@click.option("--wide", "shape", flag_value="wide", help="One row per case.")
@click.option("--long", "shape", flag_value="long", default=True,
              help="One row per case × rater × field (default).")
@click.option("--format", "fmt", type=click.Choice(["csv", "jsonl"]), required=True,
              help="csv (header row) or jsonl (one JSON object per line).")
@click.option("--out", type=OutputPath(), help="Write here instead of stdout.")
@click.option("--set", "set_name", help="Annotation set (default: the newest).")
@click.option("--accept-legacy", is_flag=True,
              help="Export although the record holds unsigned legacy entries (a store "
                   "upgraded from PAW 0.1); any other problem still stops the export.")
@coordinator_option
@_passphrase_env
@db_option
def annotate_export(shape: str, fmt: str, out: str | None, set_name: str | None,
                    accept_legacy: bool, coordinator: str | None, passphrase_env: str | None,
                    db_path: str) -> None:
    """Export labels (coordinator only: unblinded, every rater's labels).

    The signed record is verified first (nothing is exported if it shows a problem), and
    every row carries the record head it was computed from (also printed on stderr):
    keep it to check the file later with `paw verify --head HEAD`.
    """
    from annotate.export import export_verified
    from annotate.sets.annotation_set import resolve_set

    db = open_store(db_path)
    person = login_coordinator(db, coordinator, passphrase_env, "exporting labels")
    export = export_verified(db, person, resolve_set(db, set_name), shape, fmt,
                             accept_legacy=accept_legacy)
    if out is None:
        click.echo(export.text, nl=False)
    else:
        with open(out, "w", encoding="utf-8", newline="") as handle:
            handle.write(export.text)
        click.echo(f"wrote {out}", err=True)
    click.echo(f"record head {export.record_head} (verified: {export.n_entries} entries)",
               err=True)


# ---- coordinator, agreement --------------------------------------------------------

@click.command("coordinate")
@click.option("--coordinator", "name", required=True, help="Coordinator name.")
@click.option("--set", "set_name", help="Annotation set (default: the newest).")
@click.option("--watch", type=click.Path(file_okay=False, exists=True),
              help="A folder of rater files (`paw annotate pack`): each is merged, checked, "
                   "before every recomputation, so agreement stays live without a shared "
                   "database.")
@_passphrase_env
@db_option
def coordinate(name: str, set_name: str | None, watch: str | None, passphrase_env: str | None,
               db_path: str) -> None:
    """Open the coordinator's live progress and agreement view (Textual UI)."""
    from annotate.sets.annotation_set import resolve_set

    db = open_store(db_path)
    person = login(db, name, passphrase_env, "coordinator")
    chosen = resolve_set(db, set_name)
    db.conn.close()
    _tui("run_coordinator")(db_path, person, chosen, watch=watch)


def _fmt(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


@click.command("agreement")
@click.option("--set", "set_name", help="Annotation set (default: the newest).")
@click.option("--by", type=click.Choice(["family", "dataset", "model"]),
              help="Also break down by this stratum dimension.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@coordinator_option
@_passphrase_env
@db_option
def agreement(set_name: str | None, by: str | None, as_json: bool, coordinator: str | None,
              passphrase_env: str | None, db_path: str) -> None:
    """Inter-rater agreement per field: kappa [95% CI], raw agreement, N, AC1, confusion
    (coordinator only: it reveals how the raters labelled)."""
    from annotate.agreement.tables import all_agreements, progress
    from annotate.sets.annotation_set import resolve_set

    db = open_store(db_path)
    login_coordinator(db, coordinator, passphrase_env, "agreement")
    chosen = resolve_set(db, set_name)
    results = all_agreements(db, chosen, by=by)
    if as_json:
        click.echo(json.dumps({"set": chosen, "agreement": [a.to_dict() for a in results],
                               "progress": [p.__dict__ for p in progress(db, chosen)]},
                              indent=2, ensure_ascii=False))
        return
    for p in progress(db, chosen):
        click.echo(f"{p.name}: {p.done}/{p.total} done, {p.started} started")
    for a in results:
        where = f" [{a.stratum}]" if a.stratum else ""
        ci = f" [{_fmt(a.kappa_ci[0])}, {_fmt(a.kappa_ci[1])}]" if a.kappa_ci else ""
        flags = f" [{', '.join(a.flags)}]" if a.flags and a.kappa is not None else ""
        click.echo(f"{a.label}{where}: N={a.n} kappa={_fmt(a.kappa)}{ci} "
                   f"({a.interpretation}) raw={_fmt(a.raw_agreement)} AC1={_fmt(a.ac1)}"
                   + flags + (f" — {a.reason}" if a.reason else ""))
        if a.n:
            width = max(len(c) for c in a.categories)
            click.echo(f"    {a.rater_a} \\ {a.rater_b}: " + " ".join(
                c.rjust(width) for c in a.categories))
            for category, row in zip(a.categories, a.confusion, strict=True):
                click.echo(f"    {category.rjust(width)}  " + " ".join(
                    str(x).rjust(width) for x in row))
    from annotate.agreement.kappa import landis_koch_legend

    click.echo(f"Landis–Koch: {landis_koch_legend()}. CI: asymptotic, cut at [−1, 1] "
               "(clipped); small N: N < 2q² (Cicchetti 1981); perfect: kappa 1, no interval.")


# ---- adjudicate -------------------------------------------------------------------

@click.command("adjudicate")
@click.option("--coordinator", "name", required=True, help="Coordinator name.")
@click.option("--set", "set_name", help="Annotation set (default: the newest).")
@click.option("--case", "code", help="Case code (non-interactive, with --field/--value/--reason).")
@click.option("--field", "field_name", help="Field to decide.")
@click.option("--value", help="Final value.")
@click.option("--reason", help="Why this value.")
@click.option("--record-unanimous", is_flag=True,
              help="Freeze every current unanimous label as final, then exit.")
@click.option("--screen", is_flag=True,
              help="Open the adjudication screen (Textual): each disagreement with the case "
                   "as the raters saw it; the text prompts stay for scripts.")
@_passphrase_env
@db_option
def adjudicate(name: str, set_name: str | None, code: str | None, field_name: str | None,
               value: str | None, reason: str | None, record_unanimous: bool, screen: bool,
               passphrase_env: str | None, db_path: str) -> None:
    """Decide the raters' disagreements, lowest-agreement strata first.

    Without --case, walks the queue interactively: each disagreement is shown with both
    labels; type the final value (or its digit key), then a reason; an empty value skips.
    With --screen, the same queue in the Textual adjudication screen (also `a` in
    `paw coordinate`). The raters' own labels are never changed.
    """
    from annotate import adjudicate as adj
    from annotate.sets.annotation_set import resolve_set

    db = open_store(db_path)
    person = login(db, name, passphrase_env, "coordinator")
    chosen = resolve_set(db, set_name)
    if record_unanimous:
        click.echo(f"recorded {adj.record_unanimous(db, person, chosen)} unanimous labels")
        return
    if screen:
        db.conn.close()
        _tui("run_adjudication")(db_path, person, chosen)
        return
    if code is not None:
        if not (field_name and value and reason):
            raise UserError("--case: expected --field, --value and --reason as well")
        final = adj.adjudicate(db, person, code, field_name, value, reason)
        click.echo(f"{final.code} {final.field} = {final.value} (adjudicated by {final.by})")
        return
    queue = adj.disagreements(db, chosen)
    click.echo(f"{len(queue)} disagreements to adjudicate")
    for d in queue:
        kappa = _fmt(d.stratum_kappa)
        click.echo(f"\n{d.code} [{d.stratum.replace('|', ' / ')}, kappa {kappa}] {d.field}: "
                   f"{d.rater_a}={d.value_a}  {d.rater_b}={d.value_b}")
        while True:  # a refused value or reason is asked again, never ends the session
            final_value = click.prompt("  final value (empty: skip)", default="",
                                       show_default=False)
            if not final_value.strip():
                break
            why = click.prompt("  reason")
            try:
                final = adj.adjudicate(db, person, d.code, d.field, final_value.strip(), why)
            except UserError as exc:
                click.echo(f"  not recorded: {exc}")
                continue
            click.echo(f"  recorded {final.field} = {final.value}")
            break


commands = [raters_group, annotate_group, coordinate, agreement, adjudicate]
