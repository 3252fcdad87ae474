"""`paw dbpa`: distribution-based perturbation analysis (seed 001) of free-text answers."""

from __future__ import annotations

import click

from analysis.common.options import choices
from analysis.dbpa.definitions import Correction, Distance
from workbench.cli.options import (
    NAME,
    db_option,
    open_store,
    real,
    threads_option,
    whole,
)
from workbench.cli.outputs import OutputPath, check_outputs, guard_outputs, report_files
from workbench.cli.progress import ProgressReporter


def _words(text: str | None) -> tuple[str, ...] | None:
    from workbench.dbpa.spec import split_words

    return None if text is None else split_words(text)


@guard_outputs
@click.command("dbpa")
@click.option("--dataset", "dataset_name", required=True, help="Dataset name (`paw datasets`).")
@click.option("--model", default="default", show_default=True,
              help="Registered model whose answers are tested ('default': embedded SmolLM2).")
@click.option("--model-swap", metavar="REFERENCE,CANDIDATE",
              help="Two models: the candidate's answers to the same questions are the "
                   "intervention (alignment, the paper's case study 3); replaces --model.")
@click.option("--operators", default=None,
              help="Question operators, comma-separated (as `paw audit --operators`; chain "
                   "operators are refused). Default: M2_sex,M3_distractor_a,M4_negation_a,"
                   "M5_severity_a; 'none' with --model-swap.")
@click.option("--k", type=whole(2), default=10, show_default=True,
              help="Free-text samples per (item, condition); at least 2, and enough for the "
                   "tests to reject after correction (the smallest k is named otherwise).")
@click.option("--temperature", type=real(0), default=0.7, show_default=True,
              help="Sampling temperature of every sample (no top-k/top-p filter).")
@click.option("--max-tokens", type=whole(1), default=128, show_default=True,
              help="Tokens each sample may generate.")
@click.option("--embedders", default="tfidf", show_default=True,
              help="Comma-separated: tfidf, minilm (pip install -e '.[embed]'), "
                   "llama:MODEL[:mean|last|cls] (e.g. llama:default).")
@click.option("--distance", "distances", default=Distance.JSD.value, show_default=True,
              help=f"Comma-separated discrepancies: {', '.join(choices(Distance))} "
                   "(docs/dbpa.md).")
@click.option("--perms", type=whole(1), default=1000, show_default=True,
              help="Permutations B of each test; p = (1 + count)/(1 + B).")
@click.option("--alpha", type=real(0, 1, min_open=True, max_open=True), default=0.05,
              show_default=True,
              help="Significance level after family-wise correction.")
@click.option("--correction", type=click.Choice(choices(Correction)),
              default=Correction.HOLM.value, show_default=True,
              help="Family-wise correction over each family of tests (docs/dbpa.md).")
@click.option("--should-change", metavar="OPS",
              help="Perturbations that should change the answers (TPR/FPR, ROC); default: "
                   "intent tag D.")
@click.option("--should-not-change", metavar="OPS",
              help="Perturbations that should not; default: intent tag P.")
@click.option("--seeds", type=click.Choice(["independent", "shared"]), default="independent",
              show_default=True,
              help="independent: each condition draws its own sample seeds; shared: sample i "
                   "of every condition uses seed+i, and the tests swap within those pairs "
                   "(paired design, docs/dbpa.md).")
@click.option("--identity-control/--no-identity-control", default=True, show_default=True,
              help="Also sample the unperturbed question again with independent seeds and "
                   "test it against the baseline: its rejection rate is the empirical FPR.")
@click.option("--allow-small-k", is_flag=True,
              help="Run even when k (or --perms) is too small for a family of tests to "
                   "reject at --alpha (refused otherwise); the report then warns.")
@click.option("--seed", type=whole(0), default=0, show_default=True,
              help="Seed of the operator draws and the sample seeds (each test's "
                   "permutation seed is a hash of the test, not this).")
@click.option("--template", default="neutral_cot@1", show_default=True,
              help="Chain-of-thought prompt template of every sample.")
@click.option("--limit", type=whole(1), help="Only the first N items.")
@click.option("--items", "item_ids", help="Comma-separated item ids instead of --limit.")
@click.option("--name", type=NAME,
              help="Analysis name (default: derived from the settings, so the same "
                             "command resumes it).")
@threads_option
@click.option("--out", type=OutputPath(),
              help="Also write the report here (.md, .html or .json).")
@db_option
def dbpa_command(dataset_name: str, model: str, model_swap: str | None, operators: str | None,
                 k: int, temperature: float, max_tokens: int, embedders: str, distances: str,
                 perms: int, alpha: float, correction: str, should_change: str | None,
                 should_not_change: str | None, seeds: str, identity_control: bool,
                 allow_small_k: bool, seed: int, template: str,
                 limit: int | None, item_ids: str | None, name: str | None,
                 threads: int | None, out: str | None, db_path: str) -> None:
    """Test whether each perturbation changes the model's whole answer distribution (DBPA).

    Per item: k seeded free-text chain-of-thought answers to the original question and k to
    each perturbed one (or to the same question from a second model with --model-swap);
    every answer embedded; P0 = cosine similarities within the baseline, P1 = across the
    conditions; ω(P0, P1) against B random re-splits of the pooled 2k answers. Every
    (embedder x distance) asked for is run on the same samples, and the report's first
    table shows which decisions flip between them. Run the same command again to resume;
    then `paw report --dbpa NAME`.
    """
    from workbench.engine.plans import resolve_templates
    from workbench.dbpa import DbpaSpec, resolve_dbpa_operators, run_dbpa
    from workbench.dbpa.spec import split_words
    from workbench.embed import parse_embedders

    models = split_words(model_swap) if model_swap else (model,)
    ops = resolve_dbpa_operators("none" if model_swap and operators is None else operators)
    spec = DbpaSpec(
        dataset=dataset_name, models=models, model_swap=model_swap is not None, operators=ops,
        k=k, temperature=temperature, max_tokens=max_tokens, seed=seed, seeds=seeds,
        template=resolve_templates(template)[0], limit=limit,
        item_ids=_words(item_ids) or None, embedders=parse_embedders(embedders),
        distances=split_words(distances), permutations=perms, alpha=alpha,
        correction=Correction(correction), should_change=_words(should_change),
        should_not_change=_words(should_not_change), identity_control=identity_control,
        allow_small_k=allow_small_k, name=name)
    db = open_store(db_path)
    with ProgressReporter() as progress:
        outcome = run_dbpa(db, spec, on_event=progress, threads=threads)
    state = "stopped" if outcome.stopped else "done"
    click.echo(f"dbpa {outcome.audit}: {state}; {outcome.generated} new sample(s), "
               f"{outcome.tests_computed} test result(s) computed; report with "
               f"`paw report --dbpa {outcome.audit}`")
    if out:
        _write(db, outcome.audit, out)


def _write(db, name: str, out: str) -> None:
    from pathlib import Path

    from workbench.kinds import build_run_report

    report = build_run_report(db, name, kind="dbpa")
    suffix = Path(out).suffix.lower()
    check_outputs(report_files(report, out) if suffix != ".json" else [out])
    if suffix == ".json":
        Path(out).write_text(report.to_json(), encoding="utf-8")
        click.echo(f"report: {out}")
        return
    written, pngs = report.write(out, "html" if suffix in (".html", ".htm") else "md")
    click.echo(f"report: {written}" + (f" (ROC: {', '.join(map(str, pngs))})" if pngs else ""))


commands = [dbpa_command]
