"""`paw report`: the audit's tables (seed 002 Tables 3, 4, 6, 7, 8, 11), PNG and JSON."""

from __future__ import annotations

import re
from pathlib import Path

import click

from analysis.definitions import DEFAULT_SEED, N_BOOT
from workbench.cli.options import db_option, open_store


def _default_out(audit_name: str, fmt: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", audit_name).strip("_") or "audit"
    return Path(f"{safe}-report.{fmt}")


def _extra_sections(db, audit_id: int) -> list:
    """Sections other packages add to the report (annotation statistics when available)."""
    import importlib.util

    # Optional until the annotation statistics exist; once present, import errors surface.
    if importlib.util.find_spec("annotate.stats") is None:
        return []
    from annotate.stats import annotation_sections

    return list(annotation_sections(db, audit_id))


@click.command("report")
@click.option("--audit", "audit", metavar="NAME_OR_ID",
              help="Audit to report on (name or id; default: the latest audit).")
@click.option("--format", "fmt", type=click.Choice(["md", "html"]), default=None,
              help="Document format (default: from --out's suffix, else md).")
@click.option("--out", type=click.Path(dir_okay=False),
              help="Report file; the PNG is written beside it as <stem>_fcs_plane.png "
                   "(default: ./<audit>-report.<format>).")
@click.option("--json", "as_json", is_flag=True,
              help="Write the same numbers as JSON (to --out if given, else to stdout).")
@click.option("--n-boot", type=click.IntRange(min=0), default=N_BOOT, show_default=True,
              help="Bootstrap replicates per 95% CI (0 = no CIs).")
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Bootstrap seed.")
@db_option
def report_command(audit: str | None, fmt: str | None, out: str | None, as_json: bool,
                   n_boot: int, seed: int, db_path: str) -> None:
    """Write an audit's report: per-arm summary (Acc, CDR, AFR_D, FCS, ECR, CHS, DFG, MFC),
    F-block accuracy delta, chain-update × answer-flip table, CDR by token rule and LLM
    judge, per-family flip rates, CoT − direct gap, option shuffle, firing counts, each
    rate with a 95% bootstrap CI over items, plus the (AFR_D, AFR_P) plane as a PNG.

    Metric definitions and every interpretation choice: docs/metrics.md.
    """
    from analysis.report import build_report

    db = open_store(db_path)
    report = build_report(db, audit, n_boot=n_boot, seed=seed)
    report.sections.extend(_extra_sections(db, int(report.meta["audit_id"])))
    if as_json:
        text = report.to_json()
        if out is None:
            click.echo(text, nl=False)
            return
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(text, encoding="utf-8")
        click.echo(f"wrote {out}")
        return
    if fmt is None:
        fmt = "html" if out and Path(out).suffix.lower() in (".html", ".htm") else "md"
    path = Path(out) if out else _default_out(str(report.meta["audit"]), fmt)
    written, png = report.write(path, fmt)
    click.echo(f"wrote {written} and {png} ({len(report.sections)} tables, "
               f"n_boot={n_boot}, seed={seed})")


commands = [report_command]
