"""`paw models` (list, add) and `paw run` (generate a dataset with one model, resumably)."""

from __future__ import annotations

from typing import Any

import click

from analysis.audit.definitions import AuditRole
from workbench.cli.options import (
    NAME,
    allow_mixed_engines,
    db_option,
    engine_options,
    fail_on_errors,
    open_store,
    pool_settings,
    real,
    whole,
)
from workbench.cli.progress import ProgressReporter

MODE_ROLES = {"cot": AuditRole.BASELINE, "direct": AuditRole.DIRECT}
"""The seed-002 role a `paw run` job gets in each answer mode."""


@click.group("models", invoke_without_command=True)
@db_option
@click.pass_context
def models_group(ctx: click.Context, db_path: str) -> None:
    """List registered models (the embedded SmolLM2 is registered as 'default')."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_command, db_path=db_path)


@models_group.command("list")
@db_option
def list_command(db_path: str) -> None:
    """List registered models with their quantization, context, batching verdict and file.

    The batching column is the last self-check on this machine: `batch N: identical`
    (N sequences per llama.cpp batch gave the same bits as one at a time, so batching
    is on), `batch N: differs` (decoded one at a time), or `batch: unchecked`. The format
    column is `chat-template` (the file's own) or `plain-format` (no chat template: PAW's
    plain format, with the BOS the file asks for); a note under a model says so, and when
    its metadata marks a base model.
    A line under the model gives the batch width chosen by measuring this machine and the
    decode rates measured at each width (`workbench.models.width`), once a run has measured
    them.
    """
    from store.models import list_models
    from workbench.models.registry import batch_verdict, default_model, format_notes
    from workbench.models.width import latest_choice

    db = open_store(db_path)
    default_model(db)
    for model in list_models(db):
        size = f"{model.size_bytes / 1e6:.0f} MB" if model.size_bytes else "?"
        cache = "prefix-cache" if model.prefix_cache_safe else "fresh-eval"
        verdict = batch_verdict(db, model)
        batch = "batch: unchecked" if verdict is None else \
            f"batch {verdict['n_seq']}: {'identical' if verdict['identical'] else 'differs'}"
        form = "chat-template" if model.chat_template else "plain-format"
        click.echo(f"{model.name}\t{model.architecture or '?'}\t{model.quantization or '?'}\t"
                   f"ctx {model.context_length or '?'}\t{size}\t{cache}\t{batch}\t"
                   f"{form}\t{model.path}")
        for note in format_notes(db, model):
            click.echo(f"  {model.name}: {note}")
        choice = latest_choice(db, model)
        if choice is not None:
            click.echo(f"  {model.name}: {choice.message}")


@models_group.command("add")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--name", type=NAME,
              help="Name to use with --model (default: the file name without .gguf).")
@click.option("--tier", help="The model's tier (e.g. open-weight, reasoning, closed): the "
                             "groups the Appendix M harm sample balances over.")
@db_option
def add_command(path: str, name: str | None, tier: str | None, db_path: str) -> None:
    """Register a GGUF model file: validates it, hashes it, reads its metadata.

    Says when the file has no chat template (and the plain format PAW uses instead) and
    when its metadata marks a base model."""
    from workbench.models.registry import format_notes, register_model, set_tier

    db = open_store(db_path, create=True)  # creates a database (see options.open_store)
    model = register_model(db, path, name)
    if tier is not None:
        set_tier(db, model, tier)
    note = "" if model.prefix_cache_safe else " (prefix cache off: sliding-window/recurrent)"
    click.echo(f"registered {model.name}: {model.architecture} {model.quantization}, "
               f"ctx {model.context_length}, sha256 {model.sha256[:12]}{note}"
               + (f", tier {tier.strip()}" if tier else ""))
    for line in format_notes(db, model):
        click.echo(f"note: {line}")


@models_group.command("tier")
@click.argument("name")
@click.argument("tier")
@db_option
def tier_command(name: str, tier: str, db_path: str) -> None:
    """Set the tier of a registered model (e.g. open-weight, reasoning, closed): annotation
    sets balance the harm cases over tiers (seed 002 Appendix M)."""
    from workbench.models.registry import resolve_model, set_tier

    db = open_store(db_path)
    model = resolve_model(db, name)
    set_tier(db, model, tier)
    click.echo(f"{model.name}: tier {tier.strip()}")


def _seeds(samples: int, seed: int, seeds: str | None) -> list[int]:
    from store.errors import UserError

    if seeds:
        try:
            values = [int(s) for s in seeds.split(",") if s.strip()]
        except ValueError:
            raise UserError(f"--seeds: expected comma-separated integers, got {seeds!r}") from None
        if not values:
            raise UserError("--seeds: expected at least one seed")
        return values
    if samples < 1:
        raise UserError(f"--samples: expected 1 or more, got {samples}")
    return [seed + k for k in range(samples)]


@click.command("run")
@click.option("--model", "model_name", default="default", show_default=True,
              help="Registered model name (see `paw models`).")
@click.option("--dataset", "dataset_name", required=True, help="Dataset name (see `paw datasets`).")
@click.option("--limit", type=whole(1), help="Only the first N items.")
@click.option("--mode", type=click.Choice(["cot", "direct"]), default="cot", show_default=True,
              help="Chain of thought, or a direct answer with no reasoning.")
@click.option("--template", help="Prompt template (default: neutral_cot@1, or direct@1).")
@click.option("--samples", type=whole(1), default=1, show_default=True,
              help="Samples per item (seeds --seed, --seed+1, …); needs --temperature > 0.")
@click.option("--temperature", type=real(0), default=0.0, show_default=True,
              help="0 is greedy decoding.")
@click.option("--seed", type=whole(0), default=0, show_default=True, help="First sampling seed.")
@click.option("--seeds", help="Explicit comma-separated seeds, e.g. 0,1,42 (overrides --samples).")
@click.option("--max-tokens", type=whole(1), help="Tokens to generate at most "
              "(default 384 for cot, 8 for direct).")
@engine_options
@db_option
def run_command(model_name: str, dataset_name: str, limit: int | None, mode: str,
                template: str | None, samples: int, temperature: float, seed: int,
                seeds: str | None, max_tokens: int | None, threads: int | None,
                gpu_layers: int, ctx: int | None, batch_size: int | None,
                servers: str | None, db_path: str) -> None:
    """Generate answers for a dataset with one model; re-running resumes where it stopped.

    Every generation is stored as it finishes (prompt, output, parsed answer, status,
    option distribution, tokens, latency); generations already stored are skipped.
    """
    from store.datasets import dataset_id, get_items
    from store.errors import UserError
    from workbench.models import DEFAULT_TEMPLATE, Runner, get_template
    from workbench.models.backend import default_threads
    from workbench.models.plan import plan_run
    from workbench.models.registry import resolve_model

    db = open_store(db_path)
    dataset_id(db, dataset_name)  # an unknown dataset fails before anything is registered
    model = resolve_model(db, model_name)
    template_id = get_template(template or DEFAULT_TEMPLATE[mode]).id
    seed_list = _seeds(samples, seed, seeds)
    if len(seed_list) > 1 and temperature <= 0:
        raise UserError("--samples/--seeds: several samples need --temperature > 0 "
                        "(greedy decoding gives the same output for every seed)")
    items = get_items(db, dataset_name, limit)
    if not items:
        raise UserError(f"dataset {dataset_name!r} has no items")
    threads = threads or default_threads()  # decided once, so the session records it
    backend = None
    pool = pool_settings(servers, ctx)
    if pool is not None:
        from workbench.models.server import ServerPoolBackend

        backend = ServerPoolBackend(model, pool)
    runner = Runner(db, model, threads=threads, gpu_layers=gpu_layers, ctx=ctx,
                    batch_size=batch_size, backend=backend)
    plan = plan_run(db, runner, dataset_id(db, dataset_name), items, mode=mode,
                    template=template_id, temperature=temperature, seeds=seed_list,
                    max_tokens=max_tokens, role=MODE_ROLES[mode])
    settings = {"model": model.name, "dataset": dataset_name, "limit": limit, "mode": mode,
                "template": template_id, "temperature": temperature, "seeds": seed_list,
                "threads": threads, "gpu_layers": gpu_layers, "ctx": ctx,
                "batch": batch_size or "measured", "servers": servers}
    with ProgressReporter() as progress:
        summary = plan.execute(settings, progress, allow_mixed_engines=allow_mixed_engines())
    _print_summary(summary)
    fail_on_errors(summary.status_counts.get("error", 0))


def _print_summary(summary: Any) -> None:
    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{100 * value:.1f}%"

    stored = sum(summary.status_counts.values())
    statuses = ", ".join(f"{k} {v}" for k, v in sorted(summary.status_counts.items()))
    state = "stopped early" if summary.stopped else "done"
    click.echo(f"{state}: {summary.total} generations ({summary.skipped} already stored, "
               f"{summary.generated} new, {summary.errors} errors) in {summary.elapsed_s:.1f} s")
    click.echo(f"accuracy {summary.correct}/{summary.with_gold} = {pct(summary.accuracy)}   "
               f"parse rate {summary.parsed_ok}/{stored} = {pct(summary.parse_rate)}   "
               f"{summary.tokens_per_s or 0:.1f} tok/s")
    click.echo(f"status: {statuses or 'none'}")


commands = [models_group, run_command]
