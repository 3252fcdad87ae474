"""`paw verify`: is the annotation record intact? Anyone gets the verdict; the coordinator
gets the details; each person can confirm that the record's key for them is theirs."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from store.errors import UserError
from workbench.cli.options import db_option, open_store
from workbench.cli.signin import coordinator_option, login, login_coordinator, passphrase_env_option

if TYPE_CHECKING:
    from annotate.record_replay import RecordProblem
    from annotate.verify import ChainProblem


def _summary(report: Any) -> str:
    counts = report.counts()
    if report.ok:
        state = "ok"
    elif report.ok_except_legacy():
        # Never "ok": nobody's signature vouches for legacy entries (issue 21).
        state = "NOT PROVEN (unsigned legacy entries)"
    else:
        state = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
    legacy = f", {report.n_legacy} legacy unsigned" if report.n_legacy else ""
    unopened = (f"; {report.n_unopened} sealed label values not opened, their content "
                "unchecked (`--coordinator NAME` opens them)" if report.n_unopened else "")
    return (f"annotation record {state}: {report.n_entries} entries{legacy}, "
            f"{report.labels.n_events} label events; record head {report.head_hash}"
            f"{unopened}")


@click.command("verify")
@click.option("--head", help="A record head kept earlier (`record_head` of an export, 'record "
                             "head' of a report or a previous `paw verify`; any case, or a "
                             "unique prefix of 8+ digits) that must still be in the record. "
                             "An export's `chain_head` is refused: it covers label events "
                             "only.")
@click.option("--details", is_flag=True,
              help="Name every problem (coordinator only: the messages name people and "
                   "events).")
@click.option("--person", metavar="NAME",
              help="Confirm with NAME's passphrase that the record's key for NAME is theirs, "
                   "and check every entry NAME signed.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@coordinator_option
@passphrase_env_option
@db_option
def verify(head: str | None, details: bool, person: str | None, as_json: bool,
           coordinator: str | None, passphrase_env: str | None, db_path: str) -> None:
    """Recompute the label chain and the signed annotation record; exit 1 on any problem.

    Checks every entry's hash, link and signature (signatures need no passphrase: the
    record holds each person's public key, tied to the coordinator who registered them and
    to the set that names them), and every people row, set, case list, text shown to the
    raters, label event and adjudication against the entry that attests it. Without
    --details only the verdict and counts are printed. The file is opened read-only and
    never changed (a read-only file, folder or mount works; a `paw backup` copy keeps its
    sha256).
    """
    from annotate.verification.verify import resolve_head, verify_record

    db = open_store(db_path, readonly=True)  # never changes the file it verifies
    if details and person:
        raise UserError("--details, --person: expected one of them")
    who = None
    if details:
        who = login_coordinator(db, coordinator, passphrase_env, "verify --details",
                                write=False)
    elif person:
        who = login(db, person, passphrase_env, write=False)
    elif coordinator:  # signed in only to open the sealed values (content checks)
        who = login_coordinator(db, coordinator, passphrase_env, "verify", write=False)
    anchored = resolve_head(db, head) if head else None
    report = verify_record(db, head=anchored)
    problems: list[ChainProblem | RecordProblem] = [*report.labels.problems, *report.problems]
    if person and who is not None:
        # A person sees only what concerns their own entries (a rater sees no one else's).
        problems = [p for p in report.problems if p.person_id == who.id or p.kind == "anchor"]
    if as_json:
        data: dict[str, Any] = {"ok": report.ok, "entries": report.n_entries,
                                "legacy_entries": report.n_legacy,
                                "label_events": report.labels.n_events,
                                "head": report.head_hash, "problem_counts": report.counts()}
        if details or person:
            data["problems"] = [{"kind": p.kind, "message": p.message} for p in problems]
        if details:
            data["signed_by"], data["key_fingerprints"] = report.signed_by, report.fingerprints
            data["flags"] = list(report.warnings)
        click.echo(json.dumps(data, indent=2))
    else:
        if details or person:
            for problem in problems:
                click.echo(f"TAMPERED: {problem.message}")
        if details:
            for warning in report.warnings:
                click.echo(f"flag: {warning}")
            for name, fp in sorted(report.fingerprints.items()):
                click.echo(f"key {name}: {fp} ({report.signed_by.get(name, 0)} entries signed)")
        if person and who is not None:
            from annotate.trust.people import key_fingerprint

            mine = "no problem" if not problems else f"{len(problems)} problem(s)"
            click.echo(f"{who.name}: the record's key {key_fingerprint(db, who.name)} opens "
                       f"with your passphrase; {report.signed_by.get(who.name, 0)} entries "
                       f"you signed: {mine}")
        click.echo(_summary(report))
        if report.ok:
            from workbench.cli.record_head import keep_head_line

            click.echo(keep_head_line(report.head_hash, db_path))
        if report.warnings and not details:
            click.echo(f"{len(report.warnings)} flag(s) that do not fail it (clocks, older "
                       "seals): `--details` lists them")
        if not report.ok and not details:
            click.echo("a coordinator sees which: `paw verify --details --coordinator NAME`")
    if not report.ok:
        raise SystemExit(1)


commands = [verify]
