"""The seed-000 study report: Tables 4/5 (main), 6/7 (recall/precision checks), 8/9 (every
measure per model), 11 (regression), 2 (every test), the paraphrase baseline's token-change
agreement, the k-sample votes, and a warning where a comparison rests on too few items."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from analysis.common.document import Report, Section
from analysis.common.options import Option, parse_option
from analysis.common.report_options import ReportOptions
from analysis.counterfactual import comparison as cfc
from analysis.counterfactual import definitions as cfd
from analysis.counterfactual.dose import dose_table, is_dose_study
from analysis.counterfactual.plots import dose_figures, paraphrase_figure
from analysis.counterfactual.subgroups import is_subgroup_study
from analysis.counterfactual.tables import (
    MARK,
    measure_table,
    paper_table,
    regression_table,
    small_comparisons,
    tests_table,
)

if TYPE_CHECKING:
    import pandas as pd
    import sqlite_utils

    from analysis.counterfactual.data import StudyData

def paraphrase_table(paraphrases: pd.DataFrame) -> pd.DataFrame:
    """Agreement of achieved with target token-change fraction, per model and targeted edit."""
    import pandas as pd

    columns = ["model", "perturbation", "n_units", "n_fired", "target_mean", "achieved_mean",
               "mean_abs_diff", "within_tolerance", "n_llm", "n_fallback", "n_llm_closest",
               "n_none", "attempts_mean", "tolerance"]
    if paraphrases.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    groups = list(paraphrases.groupby(["model", "target"], sort=False))
    groups.append((("all", "all"), paraphrases))
    for (model, target), g in groups:
        fired = g[g["fired"]]
        diff = (fired["achieved_fraction"] - fired["target_fraction"]).abs()
        source = g["source"].value_counts()
        rows.append({"model": model, "perturbation": target, "n_units": len(g),
                     "n_fired": len(fired),
                     "target_mean": g["target_fraction"].mean(),
                     "achieved_mean": fired["achieved_fraction"].mean(),
                     "mean_abs_diff": diff.mean() if len(fired) else math.nan,
                     "within_tolerance": g["within_tolerance"].mean(),
                     "n_llm": int(source.get("llm", 0)),
                     "n_fallback": int(source.get("fallback", 0)),
                     "n_llm_closest": int(source.get("llm_closest", 0)),
                     "n_none": int(source.get("none", 0)),
                     "attempts_mean": g["attempts"].mean(),
                     "tolerance": g["tolerance"].iloc[0]})
    frame = pd.DataFrame(rows, columns=columns)
    frame.attrs["decimals"] = {"target_mean": 3, "achieved_mean": 3, "mean_abs_diff": 3,
                               "tolerance": 3, "attempts_mean": 1}
    return frame


def votes_table(prompts: pd.DataFrame) -> pd.DataFrame:
    """The k-sample majority vote per model and role: prompts, ties, no answer, unanimity."""
    import pandas as pd

    rows = []
    for (model, role), g in prompts.groupby(["model", "role"], sort=False):
        unanimous = (g["parsed"] == g["n_samples"]).mean()
        rows.append({"model": model, "role": role, "n_prompts": len(g),
                     "k": int(g["n_samples"].max()),
                     "n_all_parsed": int((g["parsed"] == g["n_samples"]).sum()),
                     "n_ties": int(g["tie"].sum()),
                     "n_no_answer": int(g["answer"].isna().sum()),
                     "share_all_parsed": unanimous})
    return pd.DataFrame(rows, columns=["model", "role", "n_prompts", "k", "n_all_parsed",
                                       "n_ties", "n_no_answer", "share_all_parsed"])


def design_table(data: StudyData, tests: pd.DataFrame) -> pd.DataFrame:
    """Units per model, targeted edit and task; how many entered each baseline's tests."""
    import pandas as pd

    rows = []
    for (model, target, task), g in data.units.groupby(["model", "target", "task"],
                                                       sort=False):
        row = {"model": model, "perturbation": target, "task": task, "n_units": len(g),
               "n_not_fired": int((~g["fired"]).sum())}
        for baseline, short in (("adjusted paraphrase", "para"), ("fixed sentence", "fixed")):
            t = tests[(tests["model"] == model) & (tests["target"] == target)
                      & (tests["task"] == task) & (tests["baseline"] == baseline)]
            for measure, part in (("jsd", "per_sample"), ("fr", "aggregate")):
                n = t[t["measure"] == measure]["n"]
                row[f"n_{short}_{part}"] = int(n.iloc[0]) if len(n) else 0
        rows.append(row)
    return pd.DataFrame(rows)


CORRECTION_NAMES = {"bonferroni": "Bonferroni", "holm": "Holm", "none": "no"}


class AnalysisOptions(TypedDict):
    """A study's analysis settings as their types (`analysis_options`)."""

    correction: cfd.Correction
    sides: cfd.Sides
    kl_floor: cfd.KlFloor
    alternative: cfd.Alternative


def analysis_options(config: dict[str, Any], **overrides: Any) -> AnalysisOptions:
    """The study's analysis settings (stored by `paw study`; older studies: the paper's),
    with any of `correction`, `sides`, `kl_floor`, `alternative` overridden when not None,
    each read as its type (a value that is none of its type's values is refused)."""
    values = {"correction": config.get("correction", "bonferroni"),
              "sides": config.get("sides", "one"),
              "kl_floor": config.get("kl_floor", "q"),
              "alternative": config.get("alternative", "less")}
    values.update({k: v for k, v in overrides.items() if v is not None and k in values})

    def read(kind: type[Option], name: str) -> Option:
        return parse_option(kind, values[name], field=name, where="the study's report options")

    return AnalysisOptions(correction=read(cfd.Correction, "correction"),
                           sides=read(cfd.Sides, "sides"),
                           kl_floor=read(cfd.KlFloor, "kl_floor"),
                           alternative=read(cfd.Alternative, "alternative"))


def compute(data: StudyData, *, n_boot: int, seed: int, correction: str | None = None,
            sides: str | None = None, kl_floor: str | None = None) -> pd.DataFrame:
    """Every test of a loaded study (`counterfactual.analyse` with the study's settings)."""
    options = analysis_options(data.info["config"], correction=correction, sides=sides,
                               kl_floor=kl_floor)
    return cfc.analyse(data.comparisons, n_boot=n_boot, seed=seed,
                       correction=options["correction"], sides=options["sides"],
                       kl_floor=options["kl_floor"], alternative=options["alternative"])


def study_sections(data: StudyData, tests: pd.DataFrame, *, n_boot: int,
                   options: AnalysisOptions | None = None) -> list[Section]:
    """The report's sections, in the paper's order (a warning first when items are few)."""
    config = data.info["config"]
    options = options or analysis_options(config)
    correction, two = options["correction"], options["sides"] == "two"
    sided = "two-sided" if two else "one-sided"
    corrected = ("uncorrected" if correction == "none" else
                 f"after {CORRECTION_NAMES[correction]} correction within the family (model, "
                 "baseline, metric) over every perturbation × task")
    mark = f"'{MARK}' = significant: {sided} p < {cfd.ALPHA} {corrected}"
    kl = ("Q floored at 1e-12" if options["kl_floor"] == "q" else
          "P and Q floored at 1e-10 (the authors' code)")
    base_note = ("Values are observed differences (perturbation − baseline). MI and φ: from "
                 "the table of paired majority answers (original × modified), MI in bits; "
                 "FR = flip rate; JSD, KL = mean per-item divergence of the option "
                 f"distributions from the original prompt's, in bits (JSD ∈ [0, 1]; KL: {kl}). "
                 f"{mark}. Tests: paired bootstrap (B = {n_boot}) for MI, φ, FR, H1: FR "
                 "greater, MI and φ smaller under the targeted edit, each replicate decided "
                 f"on exact counts; {sided} paired t-test on Δᵢ for JSD, KL. '–' = not "
                 "computable (see the tests table). JSON: each cell is {value, p, "
                 "significant}.")
    check_note = ("Recall (positive control): every gendered term swapped, then 'Is this "
                  "patient male?' (a plain Yes/No); precision (negative control): age + 1 "
                  f"year, same question (§4.2). Differences check − baseline; '{MARK}' = "
                  f"{sided} p < {cfd.ALPHA} (each check its own hypothesis, as the paper "
                  "marks them).")
    sections = []
    few = small_comparisons(tests)
    if len(few):
        sections.append(Section(
            f"Warning: comparisons with fewer than {cfd.MIN_ITEMS} paired items", few,
            f"These tests rest on fewer than {cfd.MIN_ITEMS} paired items. Measured under no "
            "effect in three null designs (bench/counterfactual_fpr.py --designs all; "
            "docs/counterfactual.md), the regressions keep their level from 3 items on, but "
            "with so few items the bootstrap (MI, φ, FR) and the t-tests (JSD, KL) almost "
            "never reject: a non-significant result here says little about the edit (MI "
            "stays conservative at any N in two of the three designs).", "warning"))
    for key, baseline, title in (("table4", "adjusted paraphrase", "Table 4"),
                                 ("table5", "fixed sentence", "Table 5")):
        frame = paper_table(tests, baseline, "main")
        sections.append(Section(f"{title}: main results against the {baseline} baseline",
                                frame, base_note, key))
    for key, baseline, title in (("table6", "adjusted paraphrase", "Table 6"),
                                 ("table7", "fixed sentence", "Table 7")):
        frame = paper_table(tests, baseline, "check")
        none = ("" if not frame.empty else "Empty: no recall or precision check was tested "
                f"against the {baseline} baseline (it needs the targets control_recall or "
                "control_precision and this baseline). ")
        sections.append(Section(f"{title}: recall and precision checks against the "
                                f"{baseline} baseline", frame, none + check_note, key))
    measure_note = ("Appendix G's layout: 'Effect' is the difference (perturbation − "
                    "baseline) for the aggregate and per-sample measures, β̂ for the "
                    f"regressions; p {sided} (bootstrap p = 0: no replicate on H1's wrong "
                    f"side, p < 1/B, the paper's '< 0.001' at B = 1,000). Significant: {mark}"
                    " (regressions uncorrected). The paper's Table 9 is this layout on the "
                    "held-out split: run the same study on that split's dataset.")
    for key, baseline in (("table8", "adjusted paraphrase"), ("table8_fixed", "fixed sentence")):
        sections.append(Section(f"Table 8 layout: every measure per model against the "
                                f"{baseline} baseline", measure_table(tests, baseline),
                                measure_note, key))
    alternative = options["alternative"]
    h1 = ("two-sided" if two else
          f"one-sided H1: β {'<' if alternative == 'less' else '>'} 0")
    sections.append(Section(
        "Table 11: regression on the signed perturbation indicator",
        regression_table(tests),
        "y = log(P(first label) / (1 − P(first label))) of each prompt's option distribution "
        "(for Yes/No items log(p_Yes/p_No)). Difference model (Eq. 5): Δᵢ = y_pert − y_base = "
        "β·dᵢ + εᵢ, OLS without intercept, t with n − 1 df. Level model (Eq. 7, App. A): y = "
        "β0 + β1·z + β·d on stacked baseline (d = 0) and perturbed rows, z = the original "
        "prompt's y, SEs clustered by item, t with G − 1 df (G = items). dᵢ = the edit's "
        "signed direction (gender_swap: +1 to female, −1 to male); an edit with no direction "
        f"has dᵢ = +1 (β = mean shift). p {h1}; significant = p < {cfd.ALPHA} uncorrected, "
        "as Table 11 marks it (each regression its own family).", "table11"))
    sections.append(Section(
        "Table 2 layout: every test with its family, raw and corrected p",
        tests_table(tests),
        f"Effect = targeted − baseline (β̂ for regressions); target/baseline value = the "
        f"metric under each edit (mean divergence for JSD, KL). p {sided} (0 = no bootstrap "
        "replicate on H1's wrong side, i.e. p < 1/B). Bonferroni and Holm within 'family' "
        "(statsmodels.stats.multitest; tests with an undefined p are left out of the family "
        f"size); significant uses {CORRECTION_NAMES[correction]} correction. 'reason' says "
        "why a value is undefined or degenerate (φ of a table with a constant margin is 0, as "
        "in the paper; identical arms give p = 1).", "tests"))
    return sections + common_sections(data, tests)


def common_sections(data: StudyData, tests: pd.DataFrame) -> list[Section]:
    """The sections every study has: paraphrase agreement, k-sample votes, units."""
    config = data.info["config"]
    seeds = ", ".join(map(str, config.get("seeds", [])))
    tolerance = config.get("tolerance")
    denominator = ("longer length" if config.get("token_denominator", "longer") == "longer"
                   else "the original's length")
    target = ("the unit's dose-response level" if config.get("levels") else
              f"the targeted edit's token-change fraction (edit distance / {denominator}) "
              "measured with the audited model's own tokenizer")
    sections = []
    sections.append(Section(
        "Token-adjusted paraphrase: achieved vs target token-change fraction",
        paraphrase_table(data.paraphrases),
        f"Target = {target}; achieved = the paraphrase's, with the audited model's "
        f"tokenizer. Within tolerance = |achieved − target| ≤ {tolerance}. Source: llm = an "
        "LLM attempt within tolerance; fallback = the deterministic table paraphraser "
        + ("(--paraphraser table: no LLM attempts)" if config.get("paraphraser") == "table"
           else f"after {config.get('max_attempts')} LLM attempts "
                f"({config.get('paraphraser')})")
        + "; llm_closest = the table kept no rewording, closest valid LLM attempt kept; "
        "none = no paraphrase (the unit is out of this baseline).", "paraphrase"))
    sections.append(Section(
        "k samples and majority vote",
        votes_table(data.prompts),
        f"Each prompt is answered k = {len(config.get('seeds', []))} times (seeds {seeds}, "
        f"temperature {config.get('temperature')}, mode {config.get('mode')}). Answer = the "
        "label parsed most often; a tie is broken by the highest option probability among "
        "the tied labels (counted in n ties); no parsed sample = no answer (left out of MI, φ, "
        "FR). The per-sample metrics use the mean of the k samples' option distributions "
        "at the answer position (identical samples in direct mode).", "votes"))
    sections.append(Section("Comparison units and exclusions", design_table(data, tests),
                            "Units = items under the targeted edit; not fired = the edit did "
                            "not apply (excluded). n per baseline: pairs in the per-sample "
                            "tests (distributions) and in the aggregate tests (all three "
                            "majority answers parsed).", "design"))
    return sections


@dataclass(frozen=True)
class StudyReportOptions(ReportOptions):
    """Options of the seed-000 report.

    Attributes:
        n_boot: bootstrap replicates B of the aggregate-metric tests (the paper's 1000).
        seed: bootstrap seed.
        correction: 'bonferroni', 'holm' or 'none' (default: the study's `--correction`).
        sides: 'one' or 'two' (default: the study's, `--two-sided`).
        kl_floor: 'q' or 'both' (default: the study's `--kl-floor`).
    """

    report = "the seed-000 study report"

    n_boot: int = cfd.N_BOOT
    seed: int = 0
    correction: str | None = None
    sides: str | None = None
    kl_floor: str | None = None


def build_report(db: sqlite_utils.Database, study: str | int | None = None,
                 options: StudyReportOptions | Mapping[str, Any] | None = None) -> Report:
    """Load a study (default: the latest), run every test and lay out the report.

    Args:
        db: the store.
        study: study name or id.
        options: `StudyReportOptions`, or a mapping of its field names (an unknown name
            is refused).
    """
    from analysis.counterfactual.data import load_study

    chosen = StudyReportOptions.coerce(options)
    n_boot, seed, correction = chosen.n_boot, chosen.seed, chosen.correction
    sides, kl_floor = chosen.sides, chosen.kl_floor
    data = load_study(db, study)
    info, config = data.info, data.info["config"]
    settings = analysis_options(config, correction=correction, sides=sides, kl_floor=kl_floor)
    dose = is_dose_study(config)
    # A dose-response study has no targeted edit to test (the paper's figures carry no p).
    tests = cfc.analyse([] if dose else data.comparisons, n_boot=n_boot, seed=seed,
                        correction=settings["correction"], sides=settings["sides"],
                        kl_floor=settings["kl_floor"], alternative=settings["alternative"])
    correction = settings["correction"]
    meta = {"audit": info["name"], "audit_id": info["id"], "kind": info["kind"],
            "dataset": info["dataset"],
            "models": ", ".join(dict.fromkeys(data.prompts["model"])) or "none",
            "targets": ", ".join(config.get("targets", [])),
            "baselines": ", ".join(config.get("baselines", [])),
            "items": int(data.prompts["item_id"].nunique()) if len(data.prompts) else 0,
            "samples": f"k = {len(config.get('seeds', []))} (seeds "
                       f"{', '.join(map(str, config.get('seeds', [])))}, T = "
                       f"{config.get('temperature')})",
            "mode": config.get("mode"), "template": config.get("template"),
            "n_boot": n_boot, "seed": seed, "correction": correction,
            "sides": settings["sides"], "kl_floor": settings["kl_floor"],
            "token_denominator": config.get("token_denominator", "longer"),
            "created": info["created_at"]}
    figures = [paraphrase_figure(data.paraphrases, str(info["name"]))] \
        if len(data.paraphrases) else []
    if is_subgroup_study(config):
        sections = subgroup_sections(data, tests) + common_sections(data, tests)
    elif dose:
        frame = dose_table(data)
        meta["levels"] = ", ".join(f"{level:g}" for level in config["levels"])
        sections = [Section("Figures 2 and 3: flip rate and MI against tokens changed", frame,
                            DOSE_NOTE, "dose")] + common_sections(data, tests)
        figures = dose_figures(frame) + figures
    else:
        sections = study_sections(data, tests, n_boot=n_boot, options=settings)
    sections, figures = with_power(db, int(info["id"]), sections, figures)
    from analysis.counterfactual.empty import nothing_fired_section

    empty = None if dose else nothing_fired_section(db, info, data.units)
    if empty is not None:
        sections = [empty, *sections]
        meta["models"] = ", ".join(r[0] for r in db.execute(
            "SELECT DISTINCT m.name FROM arms a JOIN models m ON m.id = a.model_id "
            "WHERE a.audit_id = ? ORDER BY a.id", [info["id"]])) or "none"
    return Report(f"PAW study report (seed 000): {info['name']}", meta, sections, figures)


def with_power(db: sqlite_utils.Database, audit_id: int, sections: list[Section],
               figures: list) -> tuple[list[Section], list]:
    """Add the study's latest `paw power --study` simulation (Appendix F), if it has one:
    its false-positive section and its power curves (PNG, and plotext on the Statistics
    screen)."""
    from analysis.counterfactual.power import stored_power_report

    power = stored_power_report(db, audit_id)
    if power is None:
        return sections, figures
    fpr = power.sections[0]
    meta = power.meta
    settings = (f"`paw power --study` of {meta.get('simulated', '?')} UTC: σ "
                f"{', '.join(f'{v:g}' for v in meta.get('sigma', []))}, σ_pert "
                f"{min(meta.get('sigma_pert', [0])):g}–{max(meta.get('sigma_pert', [0])):g}, "
                f"{meta.get('sims')} simulations per cell, B = {meta.get('n_boot')}, "
                f"{meta.get('sides', 'one')}-sided. ")
    sections = [*sections, Section(f"Power simulation (Appendix F): {fpr.title}", fpr.frame,
                                   settings + fpr.note, "power_fpr")]
    return sections, [*figures, *power.figures]


def subgroup_sections(data: StudyData, tests: pd.DataFrame) -> list[Section]:
    """Table 10, every pairwise test, and App. I's regression layout of a subgroup study."""
    from analysis.counterfactual.subgroups import pairwise_tests, regression_layout, table10

    pairwise = pairwise_tests(data)
    reference = data.info["config"].get("subgroup_reference")
    return [
        Section("Table 10: paired t-tests on p(No) across subgroups", table10(pairwise),
                "App. H: per family, the comparisons and how many reach two-tailed p < 0.05 "
                "and p < 0.05 after Bonferroni within the family (model, task): over every "
                "pair for the demographic and the adjusted-paraphrase tests, over the unique "
                "fixed-sentence tests (a fixed-sentence test depends only on the pair's "
                "designated original subgroup).", "table10"),
        Section("Pairwise subgroup tests on p(No)", pairwise,
                "p(No) = the 'No' probability of each prompt's option distribution (mean of "
                "its k samples). Demographic: Δ = mean p(No) of the first subgroup − the "
                "second's, paired by vignette; adjusted paraphrase: the designated original's "
                "vignette against its paraphrase sized to the pair's token change; fixed "
                "sentence: the original's vignette against it with the fixed sentence "
                "prepended. scipy's paired two-tailed t (identical arms: p = 1).",
                "pairwise"),
        Section("Table 11 (App. I) layout: regression on the race swap", regression_layout(
            tests, data),
                "Difference model (Eq. 5) on y = log(p_Yes/p_No), d = +1 when the pair's "
                "target is the non-reference group, −1 the other way; only pairs that differ "
                f"in the reference attribute alone ({'='.join(reference or ['none'])}). p "
                "one-sided, H1: β < 0 (treatment less likely for the non-reference group), "
                "uncorrected as the paper's Table 11.", "appendix_i"),
    ]


DOSE_NOTE = (
    "§4.1 (Figures 2, 3; App. C): each item's question paraphrased at each token-change "
    "level (the LLM paraphraser sized to the level with the audited model's tokenizer, "
    "measure-and-retry, then the table fallback). Per model, task and level: flip rate and "
    "MI (bits) between the original and the paraphrased majority answers, mean JSD of the "
    "option distributions. achieved_mean = the mean fraction actually reached (the x of "
    "the figures): a one-sentence paraphrase cannot reach a level above that sentence's "
    "share of the prompt. No test, as in the paper.")
