"""`paw report`: the report of any stored run — audit, study, DBPA, robustness — by its kind."""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar

import click

from analysis.common.bootstrap import DEFAULT_SEED, N_BOOT
from workbench.cli.options import db_option, open_store, whole
from workbench.cli.outputs import (
    OutputPath,
    check_output,
    check_outputs,
    guard_outputs,
    report_files,
)


class KindFlagsCommand(click.Command):
    """A command with one `--<flag> NAME_OR_ID` option per `paw report` flag of the kinds
    registered in `workbench.kinds` (read when the command is used, so a kind registered
    after this module was imported gets its flag too), before its own options."""

    _made: ClassVar[dict[tuple[tuple[str, str], ...], list[click.Parameter]]] = {}

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        """The kind flags, then the command's own options (and --help)."""
        from workbench.kinds import report_flags

        flags = tuple(report_flags().items())
        # The same Option objects on every call while the registry is unchanged: click
        # matches parsed options to parameters by identity.
        made = self._made.setdefault(flags, [
            click.Option([f"--{flag}", flag], metavar="NAME_OR_ID", help=text)
            for flag, text in flags])
        return [*made, *super().get_params(ctx)]


def _default_out(name: str, fmt: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "report"
    return Path(f"{safe}-report.{fmt}")




def _annotation_access(db, audit_ids: list[int], signed_in):
    """The signed-in coordinator when the run has annotation sets (None: left out)."""
    marks = ",".join("?" * len(audit_ids)) or "NULL"
    has_sets = db.execute(f"SELECT 1 FROM annotation_sets WHERE audit_id IN ({marks}) LIMIT 1",
                          audit_ids).fetchone() is not None
    return signed_in if has_sets else None


def _stamp_record(db, report) -> None:
    """Put the annotation record head the sections were computed from on the report."""
    from annotate.verification.verify import verify_record

    checked = verify_record(db)
    report.meta["annotation_record_head"] = checked.head_hash
    report.meta["annotation_record_ok"] = checked.ok
    state = "verified" if checked.ok else (
        "DOES NOT VERIFY (see `paw verify --details --coordinator NAME`)")
    click.echo(f"annotation record head {checked.head_hash} ({state})", err=True)
    if checked.ok:
        from workbench.cli.record_head import keep_head_line

        click.echo(keep_head_line(checked.head_hash, _db_path()), err=True)


def _db_path() -> str:
    ctx = click.get_current_context()
    return str(ctx.params.get("db_path"))


def _reference(refs: dict[str, str | None]) -> tuple[str | None, tuple[str, ...] | None]:
    """The run given by one `--<flag> REF` (or none) and the kinds its flag looks among."""
    from workbench.kinds import kinds_of_flag

    given = {flag: ref for flag, ref in refs.items() if ref is not None}
    if len(given) > 1:
        raise click.UsageError(f"give one of {', '.join('--' + f for f in given)}, not several")
    if not given:
        return None, None
    flag, ref = next(iter(given.items()))
    return ref, kinds_of_flag(flag)


@guard_outputs
@click.command("report", cls=KindFlagsCommand)
@click.option("--panel", metavar="AUDITS",
              help="Combine audits (comma-separated names or ids, or 'all') into one "
                   "cross-dataset panel: models × datasets (seed 002 Tables 3, 4, 5, 6, 8, "
                   "11 and the §6 summary) with the Appendix G robustness analyses.")
@click.option("--ood", metavar="DATASETS",
              help="With --panel: the out-of-domain datasets (comma-separated names, e.g. "
                   "gsm8k,strategyqa) for seed 002 Appendix H's ΔFCS; every other dataset "
                   "of the panel counts as medical.")
@click.option("--format", "fmt", type=click.Choice(["md", "html", "json"]), default=None,
              help="Document format (default: from --out's suffix, else md).")
@click.option("--out", type=OutputPath(),
              help="Report file; figures are written beside it as <stem>_<figure>.png "
                   "(default: ./<name>-report.<format>; JSON goes to stdout).")
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("--n-boot", type=whole(0), default=None,
              help=f"Bootstrap replicates (0 = no CIs; default: the paper's for the run's "
                   f"kind — {N_BOOT} for seed-002 CIs, 1000 for the seed-000 bootstrap test).")
@click.option("--seed", type=whole(0), default=DEFAULT_SEED, show_default=True,
              help="Bootstrap / permutation seed.")
@click.option("--answer-reading", type=click.Choice(["paper", "lenient"]), default="paper",
              show_default=True,
              help="Audit reports: how answers are read. paper = the stored parse (the last "
                   "'Answer: X', seed 002 §5); lenient = PAW's extension, also reading an "
                   "unparsed answer's leading label or option text (docs/metrics.md).")
@click.option("--strip-stated-answer", is_flag=True,
              help="Audit reports: exclude F-block continuations whose kept chain still "
                   "states the baseline answer (the paper strips it; counted either way).")
@click.option("--coordinator", metavar="NAME",
              help="The coordinator (their passphrase is asked for): required once people "
                   "are registered in the store (blinding), and it adds the annotation "
                   "sections (every rater's labels, agreement).")
@click.option("--passphrase-env", metavar="VAR",
              help="Read the coordinator's passphrase from environment variable VAR.")
@db_option
def report_command(panel: str | None, ood: str | None, fmt: str | None,
                   out: str | None, as_json: bool, n_boot: int | None, seed: int,
                   answer_reading: str, strip_stated_answer: bool, coordinator: str | None,
                   passphrase_env: str | None,
                   db_path: str, **refs: str | None) -> None:
    """Write the report of a stored run: the tables of its paper in the paper's layout,
    with 95% CIs, as Markdown, HTML or JSON, and its figures as PNG.

    With no reference: the latest run. An audit's report has seed 002's Tables 3, 4, 6, 7,
    8, 11, the CoT − direct gap and the FCS plane (definitions: docs/metrics.md); when an
    annotation set was drawn from the run, the clinician tables follow.
    """
    from workbench.kinds import build_run_report, report_flags

    # In the registry's order (click hands them over in the order they were typed).
    ref, kinds = _reference({**{flag: refs.get(flag) for flag in report_flags()},
                             "panel": panel})
    if ood is not None and panel is None:
        from store.errors import UserError

        raise UserError("--ood: names the out-of-domain datasets of a panel; use it with "
                        "--panel AUDITS")
    db = open_store(db_path)
    from workbench.cli.signin import blinding_gate

    # Once people are registered the whole report is the coordinator's (its tables and
    # figures name the models and operators of the set's cases); signed in once, for both.
    who = blinding_gate(db, coordinator, passphrase_env, "paw report")
    if panel is not None:
        from analysis.audit.panel_report import build_panel_report

        report = build_panel_report(db, panel, n_boot=N_BOOT if n_boot is None else n_boot,
                                    seed=seed, ood=ood)
        audit_ids = [int(a) for a in report.meta["audit_ids"]]
    else:
        reading: dict[str, object] = {}  # only when asked: other kinds have no such option
        if answer_reading != "paper":
            reading["answer_reading"] = answer_reading
        if strip_stated_answer:
            reading["strip_stated_answer"] = True
        report = build_run_report(db, ref, kind=kinds, n_boot=n_boot, seed=seed,
                                  options=reading)
        audit_ids = [int(report.meta["audit_id"])]
    who = _annotation_access(db, audit_ids, who)
    if who is not None:  # the clinician tables and κ plots: the coordinator's alone
        from annotate.report.sections import add_clinician_parts

        for audit_id in audit_ids:
            add_clinician_parts(report, db, audit_id)
        _stamp_record(db, report)
    if as_json or fmt == "json" or (fmt is None and out and Path(out).suffix == ".json"):
        text = report.to_json()
        if out is None:
            click.echo(text, nl=False)
            return
        check_output(out)
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(text, encoding="utf-8")
        click.echo(f"wrote {out}")
        return
    if fmt is None:
        fmt = "html" if out and Path(out).suffix.lower() in (".html", ".htm") else "md"
    path = Path(out) if out else _default_out(str(report.meta["audit"]), fmt)
    check_outputs(report_files(report, path))
    written, pngs = report.write(path, fmt)
    figures = f" and {', '.join(str(p) for p in pngs)}" if pngs else ""
    shown = report.meta.get("n_boot", n_boot)
    boot = "" if shown is None else f"n_boot={shown}, "
    click.echo(f"wrote {written}{figures} ({len(report.sections)} tables, {boot}seed={seed})")


commands = [report_command]
