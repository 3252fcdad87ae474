"""`paw flips` (the flipped edits of an audit, filtered, one line each) and `paw flips show ID`
(one case in the terminal). The queries are `analysis.flips.listing` and the case's panes
`workbench.present.case`, both shared with the UI's inspector."""

from __future__ import annotations

import json
from typing import Any

import click

from workbench.cli.options import db_option, open_store, whole
from workbench.cli.signin import blinding_gate, coordinator_option, passphrase_env_option

def _split(values: tuple[str, ...]) -> tuple[str, ...]:
    """Repeated and comma-separated values, flattened."""
    return tuple(v.strip() for value in values for v in value.split(",") if v.strip())


def _fmt_jsd(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _yes_no(value: bool | None) -> str:
    return "–" if value is None else ("yes" if value else "no")


def flip_lines(page: Any, flt: Any, audits: str) -> list[str]:
    """The `paw flips` listing: a header with the count, then one line per edit."""
    from workbench.cli.data import table

    what = {True: "flipped edit(s)", False: "edit(s) whose answer was kept",
            None: "answered edit(s)"}[flt.flipped]
    header = f"{page.total} {what} in {audits}"
    if not page.rows:
        return [f"{header}; none from offset {page.offset}" if page.total
                else f"{header}: none match this filter"]
    end = page.offset + len(page.rows)
    more = f"; next page: --offset {page.next_offset}" if page.next_offset is not None else ""
    lines = [f"{header}; rows {page.offset + 1}-{end}{more}", ""]
    # Listing more than flips, say which rows flipped (a shuffle flips by option text, so
    # 'A->A' can be a flip).
    flip_column = flt.flipped is not True
    lines += table(
        ["id", "arm", "item", "operator", "D/P", "answer"] + (["flip"] if flip_column else [])
        + ["JSD", "chain upd", "judge"],
        [[r.id, r.arm, r.item, r.operator_id, r.intent or "–",
          f"{r.base_answer or '?'}->{r.answer or '?'}" if r.excluded is None
          else r.excluded] + ([_yes_no(r.flipped)] if flip_column else [])
         + [_fmt_jsd(r.jsd), _yes_no(r.chain_updated), ",".join(r.judge) or "–"]
         for r in page.rows])
    lines += ["", "one case: paw flips show ID"]
    return lines


@click.group("flips", invoke_without_command=True)
@click.option("--audit", "audit", metavar="NAME_OR_ID",
              help="The audit (default: the latest; with --dataset and no --audit: every "
                   "audit of that dataset).")
@click.option("--arm", "--model", "arms", multiple=True, metavar="ARM",
              help="Arm label, arm id or model name (repeatable, or comma-separated).")
@click.option("--block", "blocks", multiple=True,
              type=click.Choice(["M", "F", "shuffle", "demographic", "CFV"]),
              help="Question edits (M), chain edits (F), the option shuffle, or a robustness "
                   "run's demographic prefixes / substitutions and CFV changes (repeatable).")
@click.option("--family", "families", multiple=True, metavar="FAMILY",
              help="Operator family, e.g. M4 or F1 (repeatable, or comma-separated).")
@click.option("--operator", "operators", multiple=True, metavar="OPERATOR",
              help="Operator id, e.g. M4_negation_a (repeatable, or comma-separated).")
@click.option("--intent", type=click.Choice(["D", "P"]),
              help="Destructive (D) or preserving (P) edits.")
@click.option("--chain", type=click.Choice(["updated", "not-updated"]),
              help="Token rule on the chain after an M2/M4/M5 edit: it mentions the edit "
                   "(updated) or not.")
@click.option("--judge", type=click.Choice(["yes", "no", "none"]),
              help="LLM chain-registration judge said yes / said no / has no verdict.")
@click.option("--dataset", metavar="NAME", help="Only audits of this dataset.")
@click.option("--search", metavar="TEXT",
              help="Free text in the item id or question, the operator id or the edit's words.")
@click.option("--kept", is_flag=True,
              help="Edits whose answer did not change, instead of flips.")
@click.option("--all", "every", is_flag=True,
              help="Every answered edit (flipped, kept, and unparsed ones).")
@click.option("--sort", type=click.Choice(["id", "-id", "jsd", "family", "operator", "item",
                                           "arm"]), default="id", show_default=True,
              help="Order: plan order (id), newest first (-id), largest JSD first, or by "
                   "family, operator, item or arm.")
@click.option("--limit", type=whole(1), default=None,
              help="Rows per page (default: 50; with --format csv every matching row).")
@click.option("--offset", type=whole(0), default=0, show_default=True,
              help="Rows to skip (the header says where the next page starts).")
@click.option("--format", "fmt", type=click.Choice(["text", "csv", "json"]), default="text",
              show_default=True,
              help="text: the table; csv: one row per edit with a header (every matching "
                   "row unless --limit), for a spreadsheet or pandas; json: total, offset, "
                   "rows.")
@click.option("--csv", "as_csv", is_flag=True, help="Same as --format csv.")
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@coordinator_option
@passphrase_env_option
@db_option
@click.pass_context
def flips_group(ctx: click.Context, audit: str | None, arms: tuple[str, ...],
                blocks: tuple[str, ...], families: tuple[str, ...],
                operators: tuple[str, ...], intent: str | None, chain: str | None,
                judge: str | None, dataset: str | None, search: str | None,
                kept: bool, every: bool, sort: str, limit: int | None, offset: int, fmt: str,
                as_csv: bool, as_json: bool, coordinator: str | None,
                passphrase_env: str | None, db_path: str) -> None:
    """List the flipped edits of an audit, one line each: edit id, arm, item, operator,
    intent, baseline -> edited answer, JSD of the option distributions, chain update
    (token rule) and LLM-judge verdict. Filters combine (AND).

    A flip is an answer that differs from the arm's baseline answer to the original
    question (for the option shuffle: a different option text). In a robustness run
    (`paw robustness`) the edits are the answers under each demographic prefix and the
    re-answers of the model's own CFV changes. `paw flips show ID` prints one case with the
    edit highlighted.

    Once people are registered in the store, the coordinator's (`--coordinator NAME`):
    the list names each case's model, operator and verdicts, which blinding hides from
    raters.
    """
    if ctx.invoked_subcommand is not None:
        return
    from analysis.flips.listing import FlipFilter, list_flips

    if kept and every:
        raise click.UsageError("--kept, --all: expected one of them (kept answers, or every "
                               "edit), got both", ctx)
    chosen = {f for f, on in (("csv", as_csv), ("json", as_json)) if on}
    if fmt != "text":
        chosen.add(fmt)
    if len(chosen) > 1:
        raise click.UsageError(f"--format, --csv, --json: expected one output format, got "
                               f"{', '.join(sorted(chosen))}", ctx)
    fmt = chosen.pop() if chosen else "text"
    which = "kept" if kept else "all" if every else None
    flt = FlipFilter(
        flipped={"kept": False, "all": None}.get(which or "", True),
        arms=_split(arms), blocks=blocks, families=_split(families),
        operators=_split(operators), intents=(intent,) if intent else (),
        chain_updated=None if chain is None else chain == "updated", judge=judge,
        dataset=dataset, text=search)
    db = open_store(db_path)
    blinding_gate(db, coordinator, passphrase_env, "paw flips")
    scope: str | int | None = audit
    if audit is None and dataset is None:  # the latest audit (before any plain `paw run`)
        from analysis.audit.frames import resolve_audit

        scope = resolve_audit(db, None)["name"]
    if fmt == "csv":
        import sys

        from workbench.present.flips_csv import write_flips_csv

        write_flips_csv(db, scope, flt, sort, sys.stdout, offset=offset, limit=limit)
        return
    page = list_flips(db, scope, flt, limit=limit or 50, offset=offset, order=sort)
    if fmt == "json":
        click.echo(json.dumps({"total": page.total, "offset": page.offset,
                               "limit": page.limit, "next_offset": page.next_offset,
                               "rows": [r.as_dict() for r in page.rows]},
                              indent=2, ensure_ascii=False))
        return
    names = [r[0] for r in db.execute(
        f"SELECT name FROM audits WHERE id IN ({', '.join('?' for _ in page.audit_ids)}) "
        "ORDER BY id", list(page.audit_ids))] if page.audit_ids else []
    where = (f"audit {names[0]}" if len(names) == 1
             else f"{len(names)} audits of dataset {dataset}" if dataset else "no audit")
    for line in flip_lines(page, flt, where):
        click.echo(line)


@flips_group.command("show")
@click.argument("case_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print the whole case as JSON.")
@click.option("--color/--no-color", default=None,
              help="Force highlighting on or off (default: on for a terminal, off on a pipe).")
@coordinator_option
@passphrase_env_option
@db_option
def flips_show(case_id: str, as_json: bool, color: bool | None, coordinator: str | None,
               passphrase_env: str | None, db_path: str) -> None:
    """Print one edit: original and edited question with the edit highlighted, the options
    with gold, the answers before and after, both option distributions as bars with their
    JSD, and for a chain edit (F-block) the edited chain and the model's continuation.

    On a pipe the highlight is plain text: [-removed-] and {+inserted+}. Once people are
    registered, the coordinator's (`--coordinator NAME`), as `paw flips`.
    """
    from analysis.flips.case import flip_case

    db = open_store(db_path)
    blinding_gate(db, coordinator, passphrase_env, "paw flips show")
    case = flip_case(db, case_id)
    if as_json:
        click.echo(json.dumps(case.as_dict(), indent=2, ensure_ascii=False))
        return
    from workbench.present.case import print_case

    print_case(case, color=color)


commands = [flips_group]
"""Registered on `paw` through COMMAND_MODULES."""
