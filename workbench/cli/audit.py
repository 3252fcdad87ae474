"""`paw audit` (the seed-002 battery over a model panel) and `paw demo` (the whole thing, small)."""

from __future__ import annotations

from typing import Any

import click

from workbench.cli.options import (
    NAME,
    db_option,
    engine_options,
    fail_on_errors,
    make_engine,
    open_store,
    threads_option,
    whole,
)
from workbench.cli.outputs import OutputPath, check_outputs, guard_outputs, report_files
from workbench.cli.progress import ProgressReporter

DEMO_ITEMS: tuple[str, ...] = ("demo-003", "demo-019", "demo-001", "triage-002")
"""The demo subset: two vignettes on which every M operator fires (demo-003's gold and a
demo-019 distractor are high-acuity, so CHS has something to weigh), one on which M5 and M6
do not fire, and one yes/no triage question (its option shuffle is recorded as not fired):
the report shows the exclusions too."""

DEMO_OPERATORS = ("F1_truncate_50,F2_delete_a,F3_substitute_a,F4_insert_a,F5_reorder_a,"
                  "F6_paraphrase_a,F7_commute_a,M1,M2,M3_distractor_a,M4,M5,M6_temporal_a,shuffle")
"""The demo battery: every family (one variant of each F family; M2, M4, M5 in full because
the joint table, CDR and DFG read them), the option shuffle and the direct baseline."""

DEMO_MAX_TOKENS = 112
"""Generation budget of the demo: keeps it near five minutes on 2 cores (at 160, 21 of 57
CoT answers used the whole budget and the demo took 454 s); answers cut short are still
read from the option distribution at the appended `Answer:` cue."""


def _split(text: str | None) -> tuple[str, ...]:
    return tuple(w.strip() for w in (text or "").split(",") if w.strip())


@click.command("audit")
@click.option("--models", default="default", show_default=True,
              help="Comma-separated registered model names (`paw models list`); one arm per "
                   "model x template. 'default' is the embedded SmolLM2-135M.")
@click.option("--dataset", "dataset_name", required=True, help="Dataset name (`paw datasets`).")
@click.option("--templates", default="neutral_cot@1", show_default=True,
              help="Comma-separated CoT prompt templates (neutral_cot, strict_medical, "
                   "self_grounding, anti_distractor).")
@click.option("--limit", type=whole(1), help="Only the first N items.")
@click.option("--items", "item_ids", metavar="ID,ID…",
              help="These items of the dataset (their ids in the file, `paw datasets show`), "
                   "in this order, instead of --limit.")
@click.option("--items-file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Item ids from a file: one or more per line (commas allowed), '#' "
                   "starts a comment; instead of --limit.")
@click.option("--operators", default="all", show_default=True,
              help="all | F | M | shuffle | families (F1, M2, ...) | operator ids, also "
                   "user-defined ones and question baselines such as fixed_sentence, "
                   "comma-separated (`paw operators`).")
@click.option("--seed", type=whole(0), default=0, show_default=True,
              help="Seed of every operator draw and of the option shuffle.")
@click.option("--name", type=NAME,
              help="Audit name (default: derived from the settings, so the same "
                             "command resumes the same audit).")
@click.option("--max-tokens", type=whole(1), default=384, show_default=True,
              help="Tokens each CoT answer or chain continuation may generate.")
@click.option("--no-direct", is_flag=True, help="Skip the no-CoT direct baseline.")
@click.option("--no-judge", is_flag=True, help="Skip the LLM chain-registration judge.")
@click.option("--judge-model", default="default", show_default=True,
              help="Model that judges chain registration (greedy, few-shot rubric).")
@engine_options
@db_option
def audit_command(models: str, dataset_name: str, templates: str, limit: int | None,
                  item_ids: str | None, items_file: str | None, operators: str, seed: int,
                  name: str | None, max_tokens: int,
                  no_direct: bool, no_judge: bool, judge_model: str, threads: int | None,
                  gpu_layers: int, ctx: int | None, batch_size: int | None,
                  servers: str | None, db_path: str) -> None:
    """Run the seed-002 chain-of-thought faithfulness audit on a dataset.

    Per item and arm: a CoT baseline, a direct answer, every selected M operator on the
    stem (re-solved), the option shuffle, and every F operator on the arm's own baseline
    chain with its final answer stripped (continued by the model). Edits that do not fire
    are recorded and excluded. Everything is stored as it finishes: run the same command
    again to resume; a finished audit generates nothing new. Then `paw report`.
    """
    from workbench.audit import AuditSpec
    from workbench.engine import resolve_templates
    from workbench.perturb import resolve_operators

    chosen = chosen_items(item_ids, items_file, limit)
    spec = AuditSpec(dataset=dataset_name, models=_split(models),
                     templates=resolve_templates(templates),
                     operators=resolve_operators(operators), seed=seed,
                     limit=None if chosen else limit, item_ids=chosen,
                     max_tokens=max_tokens, direct=not no_direct, name=name)
    outcome = _run(db_path, spec, judge=not no_judge, judge_model=judge_model,
                   threads=threads, gpu_layers=gpu_layers, ctx=ctx, batch_size=batch_size,
                   servers=servers)
    click.echo(f"audit {outcome.audit}: {outcome.generated} new generation(s); "
               f"report with `paw report --audit {outcome.audit}`")
    fail_on_errors(outcome.job_counts.get("error", 0), "job(s)")


def chosen_items(item_ids: str | None, items_file: str | None,
                 limit: int | None) -> tuple[str, ...] | None:
    """The ids `--items` or `--items-file` name (None when neither is given).

    Raises:
        UserError: both given, either with --limit, an unreadable file, no ids, or an id
            named twice (the line of the file is named).
    """
    from pathlib import Path

    from store.errors import UserError

    given = [name for name, value in (("--items", item_ids), ("--items-file", items_file),
                                       ("--limit", limit)) if value is not None]
    if len(given) > 1:
        raise UserError(f"{', '.join(given)}: expected one way to choose the items, got "
                        f"{len(given)}")
    if item_ids is None and items_file is None:
        return None
    where: list[tuple[str, str]] = []  # (id, where it was named)
    if item_ids is not None:
        where = [(w, "--items") for w in _split(item_ids)]
    else:
        path = Path(str(items_file))
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise UserError(f"--items-file {path}: no such file") from None
        except UnicodeDecodeError:
            raise UserError(f"--items-file {path}: expected UTF-8 text with one item id a "
                            f"line, got a binary file") from None
        except OSError as exc:
            raise UserError(f"--items-file {path}: cannot be read ({exc.strerror})") from None
        for n, line in enumerate(text.splitlines(), start=1):
            where += [(w, f"{path} line {n}") for w in _split(line.split("#", 1)[0])]
    if not where:
        source = "--items" if item_ids is not None else f"--items-file {items_file}"
        raise UserError(f"{source}: expected at least one item id, got none")
    seen: dict[str, str] = {}
    for word, at in where:
        if word in seen:
            raise UserError(f"{at}: item {word!r} is named twice (first at {seen[word]})")
        seen[word] = at
    return tuple(seen)


def _run(db_path: str, spec: Any, *, judge: bool, judge_model: str, threads: int | None,
         gpu_layers: int = 0, ctx: int | None = None, batch_size: int | None = None,
         servers: str | None = None) -> Any:
    from workbench.audit import run_audit
    from workbench.models import resolve_model

    db = open_store(db_path)
    judge_record = resolve_model(db, judge_model) if judge else None
    engine = make_engine(db, threads=threads, gpu_layers=gpu_layers, ctx=ctx,
                         batch_size=batch_size, servers=servers)
    try:
        with ProgressReporter() as progress:
            return run_audit(db, spec, engine=engine, judge=judge, judge_model=judge_record,
                             on_event=progress)
    finally:
        engine.close()


@guard_outputs
@click.command("demo")
@click.option("--out", type=OutputPath(), default="paw-demo-report.md",
              show_default=True, help="Report file (.md or .html); the PNG goes beside it.")
@click.option("--items", "n_items", type=click.IntRange(min=1, max=len(DEMO_ITEMS)),
              default=len(DEMO_ITEMS), show_default=True,
              help="How many of the demo subset's items to audit.")
@threads_option
@click.option("--n-boot", type=whole(0), default=200, show_default=True,
              help="Bootstrap replicates per 95% CI.")
@click.option("--import-only", is_flag=True,
              help="Only import the demo set and describe it (no audit, no report).")
@db_option
def demo_command(out: str, n_items: int, threads: int | None, n_boot: int, import_only: bool,
                 db_path: str) -> None:
    """Import the demo set, audit a few vignettes with the embedded model, write the report.

    A smoke test of the whole pipeline on SmolLM2-135M (a 135M-parameter model: its
    numbers say nothing clinical). Takes a few minutes on a laptop; run it again and it
    finishes at once (everything is stored).
    """
    from pathlib import Path

    from workbench.audit import AuditSpec
    from workbench.kinds import build_run_report
    from workbench.perturb import resolve_operators
    from workbench.cli.data import demo_lines

    from workbench.datasets.demo import DEMO_DATASET

    db = open_store(db_path, create=True)  # creates a database (see options.open_store)
    lines = demo_lines(db)  # imports the demo set (idempotent) and describes the store
    for line in lines if import_only else lines[:1]:
        click.echo(line)
    if import_only:
        return
    spec = AuditSpec(dataset=DEMO_DATASET, models=("default",),
                     operators=resolve_operators(DEMO_OPERATORS),
                     item_ids=DEMO_ITEMS[:n_items], max_tokens=DEMO_MAX_TOKENS,
                     )
    outcome = _run(db_path, spec, judge=True, judge_model="default", threads=threads)
    report = build_run_report(db, outcome.audit_id, n_boot=n_boot)
    fmt = "html" if Path(out).suffix.lower() in (".html", ".htm") else "md"
    check_outputs(report_files(report, out))
    written, pngs = report.write(out, fmt)
    plots = ", ".join(str(p) for p in pngs)
    click.echo(f"report: {written} (plot: {plots}); audit {outcome.audit!r} in {db_path}")
    click.echo("this is a smoke test on a 135M-parameter model, not a clinical finding")


commands = [audit_command, demo_command]
