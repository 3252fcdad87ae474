"""`paw audits` (alias `paw runs`): what is stored — every audit, run and study with its status."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import click

from store.db import DEFAULT_DB
from workbench.cli.options import db_option, open_store
from workbench.kinds import KINDS, kind_blocks, kind_spec

STATUS_HELP = (
    "Status: planned (nothing ran yet), running (a process works on it now), finished, or "
    "interrupted — its last session was stopped or failed, or was left 'running' by a process "
    "that is gone (same host: its pid no longer exists; another host sharing the file: no "
    "heartbeat for 2 minutes). An interrupted run resumes where it stopped: run the same "
    "command again."
)
"""The status rule (`store.runs`), said once for `paw audits` and `paw audits show`."""


def duration(seconds: float) -> str:
    """'42s', '11m23s', '2h05m'."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def when(text: str | None) -> str:
    """A stored UTC time as 'YYYY-MM-DD HH:MM' (UTC)."""
    if not text:
        return ""
    try:
        return datetime.fromisoformat(text).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return text


def run_lines(runs: list[Any]) -> list[str]:
    """The `paw audits` table, one line per run."""
    from workbench.cli.data import table

    if not runs:
        return ["nothing stored yet: try `paw demo`, `paw run` or `paw audit`"]
    return table(
        ["id", "name", "kind", "dataset", "models", "status", "jobs", "gen", "wall",
         "created (UTC)"],
        [[r.id, r.name, r.kind, r.dataset, ",".join(r.models), r.status,
          f"{r.jobs_done}/{r.jobs_total}", r.generations, duration(r.wall_s),
          when(r.created_at)] for r in runs])


def block_rows(db: Any, info: Any) -> list[list[Any]]:
    """Per-block job counts of one run: block, done, total, pending, error, not fired."""
    from store.runs import role_counts

    role_block, order = kind_blocks(info.kind)
    counts: dict[str, dict[str, int]] = {}
    for role, statuses in role_counts(db, info.id).items():
        tally = counts.setdefault(role_block.get(role, role), {})
        for status, n in statuses.items():
            tally[status] = tally.get(status, 0) + n
    blocks = [b for b in order if b in counts] + sorted(b for b in counts if b not in order)
    rows = []
    for block in blocks:
        c = counts[block]
        total = sum(n for s, n in c.items() if s != "not_fired")
        rows.append([block, c.get("done", 0), total, c.get("pending", 0), c.get("error", 0),
                     c.get("not_fired", 0)])
    return rows


def show_lines(db: Any, info: Any, db_path: str) -> list[str]:
    """The `paw audits show` text of one run."""
    from store.runs import run_config
    from workbench.cli.data import table

    out = [f"{info.kind} {info.id} {info.name}: {info.status}",
           (f"dataset {info.dataset}; models {', '.join(info.models) or '(none)'}; created "
            f"{when(info.created_at)} UTC; {duration(info.wall_s)} of work; "
            f"{info.generations} generation(s)")]
    session = info.last_session
    if session:
        ended = f", ended {when(session['finished_at'])}" if session["finished_at"] else ""
        out.append(f"last session: `paw {session['command']}` {session['status']} "
                   f"(pid {session['pid']} on {session['host']}, started "
                   f"{when(session['started_at'])}{ended})")
    config = run_config(db, info.id)
    if config:
        import textwrap

        pairs = "; ".join(f"{k} {json.dumps(v, ensure_ascii=False)}"
                          for k, v in sorted(config.items()))
        out += textwrap.wrap("settings: " + pairs, 100, subsequent_indent="  ",
                             break_on_hyphens=False)
    out.append("")
    rows = block_rows(db, info)
    out += table(["block", "done", "total", "pending", "error", "not fired"], rows) if rows \
        else ["no jobs planned"]
    out.append("")
    where = "" if db_path == DEFAULT_DB else f" --db {db_path}"
    spec = kind_spec(info.kind)
    if info.status == "interrupted":
        out.append("interrupted: run the same command again to resume (what finished is "
                   "stored)")
    out.append(f"report: {spec.report_line(info.name, where)}")
    out += spec.hint_lines(info.name, where)
    return out


class KindChoice(click.Choice[str]):
    """`--kind`: one of the kinds registered in `workbench.kinds`, read when the option is
    used (a kind registered after this module was imported is a choice too)."""

    def __init__(self) -> None:
        super().__init__(())
        self._fresh()

    def _fresh(self) -> None:
        # Plain strings: click shows an enum member by its name (AUDIT), not its value.
        self.choices = tuple(str(kind) for kind in KINDS)

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str | None:
        """`[audit|run|…]` of the kinds registered now."""
        self._fresh()
        return super().get_metavar(param, ctx)

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        """The kind named, or a usage error listing the kinds registered now."""
        self._fresh()
        return super().convert(value, param, ctx)


@click.group("audits", invoke_without_command=True, epilog=STATUS_HELP)
@click.option("--kind", type=KindChoice(), help="Only runs of this kind.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (one object per run).")
@db_option
@click.pass_context
def audits_group(ctx: click.Context, kind: str | None, as_json: bool, db_path: str) -> None:
    """List every audit, run and study in the database: id, name, kind, dataset, models,
    status, jobs done/total, generations, wall time, creation time.

    `paw audits show ID` gives one run's per-block counts and its report command.
    """
    if ctx.invoked_subcommand is not None:
        return
    from store.runs import list_runs

    runs = list_runs(open_store(db_path), kind)
    if as_json:
        click.echo(json.dumps([r.as_dict() for r in runs], indent=2, ensure_ascii=False))
        return
    for line in run_lines(runs):
        click.echo(line)


@audits_group.command("show", epilog=STATUS_HELP)
@click.argument("ref", metavar="ID_OR_NAME")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@db_option
def audits_show(ref: str, as_json: bool, db_path: str) -> None:
    """One audit, run or study: status, last session, settings, jobs per block (done,
    total, pending, error, not fired) and the command that writes its report."""
    from store.runs import find_run

    db = open_store(db_path)
    info = find_run(db, ref)
    if as_json:
        names = ["block", "done", "total", "pending", "error", "not_fired"]
        blocks = [dict(zip(names, row, strict=True)) for row in block_rows(db, info)]
        click.echo(json.dumps({**info.as_dict(), "blocks": blocks}, indent=2,
                              ensure_ascii=False))
        return
    for line in show_lines(db, info, db_path):
        click.echo(line)


def _alias(group: click.Group, name: str) -> click.Group:
    """The same group under another name (shares its subcommands)."""
    import copy

    alias = copy.copy(group)
    alias.name = name
    alias.help = f"Same as `paw {group.name}`. " + (group.help or "")
    alias.short_help = f"Same as `paw {group.name}`: list audits, runs and studies."
    return alias


commands = [audits_group, _alias(audits_group, "runs")]
"""Registered on `paw` through COMMAND_MODULES."""
