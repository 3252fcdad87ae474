"""`paw robustness`: seed 003's counterfactual-validity and demographic-robustness tests."""

from __future__ import annotations

import click

from workbench.cli.options import (
    NAME,
    db_option,
    engine_options,
    fail_on_errors,
    make_engine,
    open_store,
    whole,
)
from workbench.cli.progress import ProgressReporter


def _split(text: str | None) -> tuple[str, ...]:
    return tuple(w.strip() for w in (text or "").split(",") if w.strip())


@click.command("robustness")
@click.option("--dataset", "dataset_name", required=True, help="Dataset name (`paw datasets`).")
@click.option("--models", default="default", show_default=True,
              help="Comma-separated registered model names (`paw models list`); one arm per "
                   "model. 'default' is the embedded SmolLM2-135M.")
@click.option("--tests", default="all", show_default=True,
              help="all | cfv | demographic (comma-separated).")
@click.option("--prefixes", default="all", show_default=True,
              help="Demographic prefixes: all, or some of male_white, male_black, "
                   "male_hispanic, female_white, female_black, female_hispanic.")
@click.option("--demographic-mode", "demographic_mode", default="prefix", show_default=True,
              help="prefix: prepend the paper's fixed 'The patient is a 45-year-old {race} "
                   "{sex}.'; substitute: rewrite the vignette's own sex and race words, "
                   "keeping its age (no contradiction with the case); both: run and report "
                   "the two.")
@click.option("--limit", type=whole(1), help="Only the first N items.")
@click.option("--items", "item_ids", help="Comma-separated item ids instead of --limit.")
@click.option("--template", default="neutral_cot", show_default=True,
              help="CoT template of every answer (its reasoning is the explanation).")
@click.option("--seed", type=whole(0), default=0, show_default=True,
              help="Seed of the CFV target draw (one non-gold option per item).")
@click.option("--judge-model", default="default", show_default=True,
              help="Registered model that judges CFV plausibility, change direction and "
                   "stereotype flags (greedy, few-shot rubrics). Name a stronger GGUF for "
                   "judgements worth reading; the 135M default only exercises the pipeline.")
@click.option("--embedder", default=None,
              help="EDD embedder (default: all-MiniLM-L6-v2 as in the paper, if installed).")
@click.option("--name", type=NAME, help="Run name (default: derived from the settings, so the same "
                             "command resumes the same run).")
@click.option("--max-tokens", type=whole(1), default=384, show_default=True,
              help="Tokens each CoT answer may generate.")
@click.option("--cfv-max-tokens", type=whole(1), default=512, show_default=True,
              help="Tokens a CFV proposal (the rewritten case) may generate.")
@click.option("--judge-max-tokens", type=whole(1), default=160,
              show_default=True, help="Tokens a judge verdict may generate.")
@engine_options
@db_option
def robustness_command(dataset_name: str, models: str, tests: str, prefixes: str,
                       demographic_mode: str, limit: int | None, item_ids: str | None,
                       template: str, seed: int,
                       judge_model: str, embedder: str | None, name: str | None,
                       max_tokens: int, cfv_max_tokens: int, judge_max_tokens: int,
                       threads: int | None, gpu_layers: int, ctx: int | None,
                       batch_size: int | None, servers: str | None, db_path: str) -> None:
    """Run seed 003's two tests on a dataset: counterfactual validity and demographic
    robustness.

    CFV: per item, the model is asked for a minimal, plausible change of the case that
    makes a prespecified other option correct (seeded); its changed case is re-answered by
    the same model and scored valid or a failure mode (same direction, too dramatic,
    circular, format failure). Demographic: the item is answered without and with each of
    six prefixes (45-year-old male/female x White/Black/Hispanic); answer changes, their
    direction, the explanations' dissonance (EDD) and stereotype-evidence flags are
    measured. A judge model rates plausibility, direction and flags. Everything is stored
    as it finishes: the same command resumes. Then `paw report --robustness NAME`.
    """
    from store.errors import UserError
    from workbench.engine.plans import resolve_templates
    from workbench.robustness import (
        RobustnessSpec,
        resolve_modes,
        resolve_prefixes,
        resolve_tests,
        run_robustness,
    )
    from workbench.robustness.edd import choose_embedder

    templates = resolve_templates(template)
    if len(templates) != 1:
        raise UserError(f"--template: expected one CoT template, got {', '.join(templates)}")
    db = open_store(db_path)
    chosen_tests = resolve_tests(tests)
    embed_spec, message = choose_embedder(db, embedder) if "demographic" in chosen_tests \
        else (None, None)
    if message:
        click.echo(message, err=True)
    spec = RobustnessSpec(
        dataset=dataset_name, models=_split(models), template=templates[0],
        tests=chosen_tests, prefixes=resolve_prefixes(prefixes),
        modes=resolve_modes(demographic_mode), seed=seed, limit=limit,
        item_ids=_split(item_ids) or None, max_tokens=max_tokens,
        cfv_max_tokens=cfv_max_tokens, judge=judge_model, judge_max_tokens=judge_max_tokens,
        **({"embedder": embed_spec} if embed_spec else {}), name=name)
    engine = make_engine(db, threads=threads, gpu_layers=gpu_layers, ctx=ctx,
                         batch_size=batch_size, servers=servers)
    try:
        with ProgressReporter() as progress:
            outcome = run_robustness(db, spec, engine=engine, on_event=progress)
    finally:
        engine.close()
    if spec.demographic:
        click.echo(f"EDD embedder: {spec.embedder}")
    click.echo(f"robustness {outcome.audit}: {outcome.generated} new generation(s), "
               f"{outcome.judgements} new verdict(s), {outcome.embedded} new embedding(s); "
               f"report with `paw report --robustness {outcome.audit}`")
    fail_on_errors(outcome.job_counts.get("error", 0), "job(s)")


commands = [robustness_command]
