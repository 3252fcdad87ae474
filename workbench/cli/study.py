"""`paw study` (seed 000: targeted edits against baselines) and `paw power` (its Appendix F)."""

from __future__ import annotations

import click

from analysis.common.options import choices
from analysis.counterfactual.definitions import Alternative, Correction, KlFloor, Sides
from workbench.cli.options import (
    NAME,
    db_option,
    engine_options,
    fail_on_errors,
    make_engine,
    open_store,
    real,
    whole,
)
from workbench.cli.outputs import OutputPath, check_outputs, guard_outputs, report_files
from workbench.cli.progress import ProgressReporter


def _split(text: str | None) -> tuple[str, ...]:
    return tuple(w.strip() for w in (text or "").split(",") if w.strip())


def _numbers(text: str, option: str, *, integer: bool = False) -> tuple[float, ...]:
    """Comma-separated numbers, each also as START:STOP:STEP (inclusive of STOP)."""
    from store.errors import UserError

    values: list[float] = []
    for word in _split(text):
        try:
            if ":" in word:
                start, stop, step = (float(x) for x in word.split(":"))
                if step <= 0 or stop < start:
                    raise ValueError
                count = int(round((stop - start) / step)) + 1
                values += [round(start + i * step, 10) for i in range(count)]
            else:
                values.append(float(word))
        except ValueError:
            raise UserError(f"{option}: expected numbers or START:STOP:STEP, comma-separated, "
                            f"got {word!r}") from None
    if not values:
        raise UserError(f"{option}: expected at least one value, got none")
    if integer:
        if any(v != int(v) for v in values):
            raise UserError(f"{option}: expected whole numbers, got {text!r}")
        return tuple(int(v) for v in values)
    return tuple(values)


@click.command("study")
@click.option("--dataset", "dataset_name", required=True, help="Dataset name (`paw datasets`).")
@click.option("--models", default="default", show_default=True,
              help="Comma-separated registered model names (one arm each; 'default' is the "
                   "embedded SmolLM2-135M).")
@click.option("--targets",
              help="Comma-separated targeted operators that edit the question (`paw "
                   "operators`), e.g. gender_swap,control_recall,control_precision "
                   "[default: gender_swap, or none with --targets-file].")
@click.option("--targets-file", type=click.Path(dir_okay=False),
              help="Ready-made perturbed texts as targets (e.g. MedPerturb's): JSONL or CSV "
                   "with item, perturbation, text [, direction]; each perturbation is the "
                   "target file:<name>.")
@click.option("--baselines",
              help="paraphrase_adjusted (LLM paraphrase matched to each edit's token-change "
                   "fraction) and/or fixed_sentence [default: both; paraphrase_adjusted "
                   "with --dose-levels].")
@click.option("--subgroups", metavar="default|FILE",
              help="Q-Pain subgroup design (App. H/I, Table 10): template items with "
                   "[race], [gender], … placeholders filled per subgroup, every pair "
                   "compared; 'default' = 4 races × 2 genders, or a JSON file of subgroups.")
@click.option("--subgroup-reference", default="race=White", show_default=True,
              help="App. I's reference group for the regressions (attribute=value).")
@click.option("--dose-levels", metavar="LEVELS",
              help="Dose-response design (§4.1, Figures 2-3): paraphrases at these "
                   "token-change levels, e.g. 0.05,0.1,0.2,0.4,0.6 (or 'paper'); no targets.")
@click.option("--paraphrase-span", type=click.Choice(["sentence", "fit"]),
              help="The paraphrase rewrites one sentence (App. B) or as many sentences as "
                   "the target fraction needs (never the final question) [default: fit "
                   "with --dose-levels, else sentence].")
@click.option("--samples", type=whole(1), help="k samples per prompt (default: "
              "as many as --seeds; with no --seeds the first k of 0, 1, 42, 43, …).")
@click.option("--seeds", help="Comma-separated sampler seeds, one per sample [default: 0,1,42].")
@click.option("--temperature", type=real(min=0), default=0.7, show_default=True,
              help="Sampling temperature of every answer (0: greedy, k identical samples).")
@click.option("--mode", type=click.Choice(["direct", "cot"]), default="direct",
              show_default=True, help="direct: the answer distribution is the next token "
              "after 'Answer:' (the paper's); cot: after a sampled chain of thought.")
@click.option("--template", help="Prompt template id (default: direct_yesno@1 or "
                                 "neutral_cot@1).")
@click.option("--max-tokens", type=whole(1),
              help="Tokens per answer (default: 16 direct, 384 cot).")
@click.option("--fixed-sentence",
              help="Fixed-sentence baseline: family_member | profile_viewed | record_reviewed "
                   "| any sentence [default: family_member (§4.1); record_reviewed with "
                   "--subgroups (App. H)].")
@click.option("--paraphraser", default="default", show_default=True,
              help="Model that writes the paraphrases, or 'table' for the deterministic "
                   "paraphraser only.")
@click.option("--tolerance", type=real(min=0, max=1, min_open=True, max_open=True),
              default=0.03, show_default=True,
              help="Accepted |achieved − target| token-change fraction of a paraphrase.")
@click.option("--attempts", type=click.IntRange(min=1, max=20), default=4, show_default=True,
              help="LLM paraphrase attempts before the deterministic fallback.")
@click.option("--alternative", type=click.Choice(choices(Alternative)),
              default=Alternative.LESS.value,
              show_default=True, help="Regression H1: β_pert < 0 (less) or > 0.")
@click.option("--correction", type=click.Choice(choices(Correction)),
              default=Correction.BONFERRONI.value, show_default=True,
              help="Family-wise correction that marks significance in the report (the "
                   "paper's Bonferroni; none = raw p).")
@click.option("--two-sided", is_flag=True,
              help="Two-sided tests everywhere, as the authors' released code (the paper's "
                   "tests are one-sided).")
@click.option("--kl-floor", type=click.Choice(choices(KlFloor)), default=KlFloor.Q.value,
              show_default=True,
              help="KL: floor only Q at 1e-12 (q) or P and Q at 1e-10 (both, the authors' "
                   "code).")
@click.option("--token-denominator", type=click.Choice(["longer", "original"]),
              default="longer", show_default=True,
              help="Token-change fraction = edit distance / the longer token count, or / the "
                   "original prompt's (the authors' code).")
@click.option("--seed", type=whole(0), default=0, show_default=True,
              help="Seed of every operator draw.")
@click.option("--limit", type=whole(1), help="Only the first N items.")
@click.option("--items", "item_ids", help="Comma-separated item ids instead of --limit.")
@click.option("--name", type=NAME,
              help="Study name (default: derived from the settings, so the same "
                             "command resumes the same study).")
@engine_options
@db_option
def study_command(dataset_name: str, models: str, targets: str | None,
                  targets_file: str | None, baselines: str | None, subgroups: str | None,
                  subgroup_reference: str, dose_levels: str | None,
                  paraphrase_span: str | None, samples: int | None, seeds: str | None,
                  temperature: float, mode: str,
                  template: str | None, max_tokens: int | None, fixed_sentence: str | None,
                  paraphraser: str, tolerance: float, attempts: int, alternative: str,
                  correction: str, two_sided: bool, kl_floor: str, token_denominator: str,
                  seed: int, limit: int | None, item_ids: str | None, name: str | None,
                  threads: int | None, gpu_layers: int, ctx: int | None,
                  batch_size: int | None, servers: str | None, db_path: str) -> None:
    """Run a seed-000 counterfactual study: targeted edits against baselines.

    For every item and targeted edit, the original prompt, the edited prompt and each
    baseline (a fixed sentence prepended; an LLM paraphrase changing the same fraction of
    the audited model's tokens, measured and retried) are each answered k times with
    explicit seeds; the answer is the majority vote, the option distribution is read at
    the answer position. Everything is stored as it finishes: run the same command again
    to resume; a finished study generates nothing new. Then `paw report --study NAME`.
    """
    from store.errors import UserError
    from workbench.counterfactual import (
        StudySpec,
        default_seeds,
        resolve_baselines,
        resolve_targets,
        run_study,
    )
    from workbench.counterfactual.dose import resolve_levels
    from workbench.counterfactual.imported import read_targets_file
    from workbench.counterfactual.subgroups import load_subgroups, parse_reference

    levels = resolve_levels(dose_levels)
    imported = read_targets_file(targets_file) if targets_file else None
    groups = load_subgroups(subgroups) if subgroups else ()
    if targets is None:
        targets = "" if imported is not None or levels or groups else "gender_swap"
    if fixed_sentence is None:
        fixed_sentence = "record_reviewed" if groups else "family_member"
    if baselines is None:
        baselines = "paraphrase_adjusted" if levels else "paraphrase_adjusted,fixed_sentence"
    chosen = _numbers(seeds, "--seeds", integer=True) if seeds else default_seeds(samples or 3)
    if samples is not None and samples != len(chosen):
        raise UserError(f"--samples: expected {len(chosen)} (one per --seeds value), got "
                        f"{samples}")
    spec = StudySpec(dataset=dataset_name, models=_split(models),
                     targets=resolve_targets(targets) if targets.strip() else (),
                     baselines=resolve_baselines(baselines),
                     seeds=tuple(int(s) for s in chosen), temperature=temperature, mode=mode,
                     template=template, max_tokens=max_tokens, fixed_sentence=fixed_sentence,
                     paraphraser=paraphraser, tolerance=tolerance, max_attempts=attempts,
                     seed=seed, limit=limit,
                     item_ids=_split(item_ids) if item_ids else None,
                     alternative=Alternative(alternative), name=name,
                     correction=Correction(correction),
                     sides=Sides.TWO if two_sided else Sides.ONE, kl_floor=KlFloor(kl_floor),
                     token_denominator=token_denominator, targets_file=imported,
                     levels=levels, subgroups=groups, paraphrase_span=paraphrase_span,
                     subgroup_reference=parse_reference(subgroup_reference) if groups else None)
    db = open_store(db_path)
    from workbench.datasets.pain import PAIN_DATASET

    if dataset_name == PAIN_DATASET and db.execute(
            "SELECT 1 FROM datasets WHERE name = ?", [PAIN_DATASET]).fetchone() is None:
        from workbench.datasets.pain import import_pain_templates

        click.echo(f"importing PAW's made-up pain templates as dataset {PAIN_DATASET!r}",
                   err=True)
        import_pain_templates(db)
    engine = make_engine(db, threads=threads, gpu_layers=gpu_layers, ctx=ctx,
                         batch_size=batch_size, servers=servers)
    try:
        with ProgressReporter() as progress:
            outcome = run_study(db, spec, engine=engine, on_event=progress)
    finally:
        engine.close()
    state = "stopped" if outcome.stopped else "finished"
    if levels and not outcome.stopped:
        from analysis.counterfactual.data import load_study
        from analysis.counterfactual.dose import dose_table
        from analysis.counterfactual.plots import dose_figures

        for figure in dose_figures(dose_table(load_study(db, outcome.study))):
            click.echo(figure.text() if figure.text else "")
            click.echo("")
    click.echo(f"study {outcome.study} {state}: {outcome.generated} new generation(s); "
               f"report with `paw report --study {outcome.study} --n-boot 1000`")
    fail_on_errors(outcome.job_counts.get("error", 0), "job(s)")


@guard_outputs
@click.command("power")
@click.option("--study", metavar="NAME_OR_ID",
              help="Take the logits z of this study's original prompts (one condition per "
                   "model × task).")
@click.option("--synthetic", type=whole(2), metavar="N",
              help="Instead: N synthetic logits z ~ Normal(--z-mean, --z-sd).")
@click.option("--z-mean", type=real(), default=0.0, show_default=True,
              help="Mean of the synthetic logits.")
@click.option("--z-sd", type=real(min=0), default=2.0, show_default=True,
              help="Standard deviation of the synthetic logits.")
@click.option("--sigma", default="0,0.25,0.5,1.0", show_default=True,
              help="Baseline noise levels σ (comma-separated, or START:STOP:STEP).")
@click.option("--sigma-pert", default="0:3:0.25", show_default=True,
              help="Perturbation effects σ_pert (comma-separated, or START:STOP:STEP).")
@click.option("--sims", type=whole(1), default=1000, show_default=True,
              help="Simulations per (σ, σ_pert) cell.")
@click.option("--n-boot", type=whole(1), default=1000, show_default=True,
              help="Bootstrap replicates of the MI, φ and flip-rate tests.")
@click.option("--alpha", type=real(min=0, max=1, min_open=True, max_open=True),
              default=0.05, show_default=True, help="One-sided significance level.")
@click.option("--seed", type=whole(0), default=0, show_default=True, help="Simulation seed.")
@click.option("--two-sided", is_flag=True,
              help="Two-sided tests, as the authors' simulation code (power curves then sit "
                   "below the one-sided default's).")
@click.option("--fixed-originals", is_flag=True,
              help="Draw the original prompts' answers once per cell and keep them, as the "
                   "authors' code (default: drawn anew in every simulation).")
@click.option("--format", "fmt", type=click.Choice(["md", "html", "json"]), default="md",
              show_default=True, help="Report format (the PNG curves are written beside it).")
@click.option("--out", type=OutputPath(),
              help="Report file (default: power-<study or synthetic>.<format>).")
@db_option
def power_command(study: str | None, synthetic: int | None, z_mean: float, z_sd: float,
                  sigma: str, sigma_pert: str, sims: int, n_boot: int, alpha: float,
                  seed: int, two_sided: bool, fixed_originals: bool, fmt: str,
                  out: str | None, db_path: str) -> None:
    """Simulate the power of the five tests in logit space (seed 000, Appendix F).

    Perturbation and baseline arms are drawn around the original logits as in Eq. 8
    (logit_pert = z + ε_pert + ε, logit_base = z + ε′); JSD and KL are tested with the
    paired t-test, MI, φ and flip rate with the paired bootstrap, at every σ and σ_pert.
    Writes power curves (PNG) and the table; prints the false-positive rate at σ_pert = 0.
    """
    import time
    from pathlib import Path

    import numpy as np

    from analysis.counterfactual.power import (
        Originals,
        false_positive_rate,
        power_grid,
        power_report,
    )
    from store.errors import UserError
    from workbench.engine.events import BlockProgress, StageStarted

    sides = Sides.TWO if two_sided else Sides.ONE
    originals = Originals.FIXED if fixed_originals else Originals.REDRAW

    if (study is None) == (synthetic is None):
        raise UserError("paw power: expected exactly one of --study or --synthetic N")
    sigmas = _numbers(sigma, "--sigma")
    perts = _numbers(sigma_pert, "--sigma-pert")
    if min(sigmas) < 0 or min(perts) < 0:
        raise UserError("--sigma/--sigma-pert: expected values ≥ 0")
    if study is not None:
        from analysis.counterfactual.data import load_study, prompt_logits

        db = open_store(db_path)
        data = load_study(db, study)
        logits = prompt_logits(data.prompts)
        conditions = {f"{m} · {t}": g["z"].to_numpy() for (m, t), g in
                      logits.groupby(["model", "task"], sort=False) if len(g) >= 2}
        if not conditions:
            raise UserError(f"study {data.info['name']!r}: expected at least 2 original "
                            "prompts with an option distribution per model and task, got none")
        source = data.info["name"]
    else:
        rng = np.random.default_rng(seed)
        conditions = {f"synthetic N={synthetic}, z ~ N({z_mean:g}, {z_sd:g}²)":
                      rng.normal(z_mean, z_sd, synthetic)}
        source = "synthetic"
    cells = len(conditions) * len(sigmas) * len(perts)
    started = time.perf_counter()
    with ProgressReporter() as progress:
        progress(StageStarted("power", "simulation", cells))
        grid = power_grid(conditions, sigmas, perts, sims=sims, n_boot=n_boot, alpha=alpha,
                          seed=seed, on_cell=lambda d, t: progress(BlockProgress("cells", d, t)),
                          sides=sides, originals=originals)
    elapsed = time.perf_counter() - started
    meta = {"source": source, "conditions": len(conditions), "sigma": list(sigmas),
            "sigma_pert": list(perts), "sims": sims, "n_boot": n_boot, "alpha": alpha,
            "seed": seed, "sides": sides, "originals": originals,
            "seconds": round(elapsed, 1)}
    report = power_report(grid, meta, conditions)
    if study is not None:  # the study's report and `paw ui` show its curves from now on
        from workbench.counterfactual.power_runs import store_power_run

        store_power_run(db, int(data.info["id"]), meta, conditions, grid)
    path = Path(out or f"power-{source}.{fmt}")
    check_outputs(report_files(report, path) if fmt != "json" else [path])
    if fmt == "json":
        path.write_text(report.to_json(), encoding="utf-8")
        pngs: tuple = ()
    else:
        path, pngs = report.write(path, fmt)
    fpr = false_positive_rate(grid)
    click.echo(f"{cells} cells × {sims} simulations in {elapsed:.1f} s; mean false-positive "
               f"rate at σ_pert = 0 (σ > 0): {fpr['mean']:.3f} (max {fpr['max']:.3f}, "
               f"α = {alpha})")
    click.echo(f"wrote {path}" + (f" and {', '.join(str(p) for p in pngs)}" if pngs else ""))
    if study is not None:
        click.echo(f"kept with study {source!r}: `paw report --study {source}` and the "
                   "Statistics screen of `paw ui` show these curves")


commands = [study_command, power_command]
