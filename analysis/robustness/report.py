"""The seed-003 report: model profiles (Table 5), CFV outcomes (Table 6), answer change
(Figure 4), change directions (Figure 5), stereotype flags (Figure 6, Table 7), EDD."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from analysis.common.bootstrap import Estimate
from analysis.common.document import Figure, Report, Section
from analysis.common.report_options import ReportOptions
from analysis.robustness.definitions import (
    CFV_FAILURE_MODES,
    CFV_OUTCOMES,
    DIRECTIONS,
    SEVERITIES,
    STEREOTYPE_CATEGORIES,
    demographic_key,
    edd_comparable,
    edd_embedder_label,
)

if TYPE_CHECKING:
    import pandas as pd
    import sqlite_utils

    from analysis.robustness.profiles import Profiles

PROFILE_COLUMNS: tuple[tuple[str, str, float], ...] = (
    ("acc_pct", "accuracy", 100.0), ("cfv_pct", "cfv_valid", 100.0),
    ("change_pct", "change", 100.0), ("edd", "edd", 1.0),
    ("flags_per_q", "flags_per_question", 1.0),
    # beside Flags/q: those of its flags whose quote is not in the explanation they flag
    ("unquoted_flags_per_q", "flags_unquoted", 1.0),
)
"""(column, estimate name, scale) of the profile table, in the paper's order."""


def _triple(row: dict[str, Any], column: str, e: Estimate | None, scale: float = 1.0) -> None:
    nan = float("nan")
    row[column] = nan if e is None else e.value * scale
    row[column + "_low"] = nan if e is None else e.low * scale
    row[column + "_high"] = nan if e is None else e.high * scale


def _frame(rows: list[dict[str, Any]], index: str) -> pd.DataFrame:
    import pandas as pd

    frame = pd.DataFrame(rows)
    if index not in frame.columns:
        frame[index] = []
    return frame.set_index(index)


def profile_table(p: Profiles, embedder: str | None = None) -> pd.DataFrame:
    """Table 5: one row per model, each profile number with its 95% CI and its n; the EDD
    cells carry their embedder (a TF-IDF EDD is not on the paper's MiniLM scale)."""
    rows = []
    for arm in p.arms:
        row: dict[str, Any] = {"model": arm.label, "n_items": arm.n_items}
        for column, name, scale in PROFILE_COLUMNS:
            _triple(row, column, arm.estimates.get(name), scale)
            if column == "edd":
                row["edd_embedder"] = edd_embedder_label(embedder)
        for column, name in (("n_acc", "accuracy"), ("n_cfv", "cfv_valid"),
                             ("n_pairs", "change"), ("n_edd", "edd"),
                             ("n_flag_verdicts", "flags_per_question")):
            row[column] = arm.estimates[name].n
        rows.append(row)
    return _frame(rows, "model")


def cfv_table(p: Profiles) -> pd.DataFrame:
    """CFV outcomes per model: share of scored attempts per outcome (valid = the CFV rate)."""
    rows = []
    for arm in p.arms:
        row: dict[str, Any] = {"model": arm.label}
        for outcome in CFV_OUTCOMES:
            _triple(row, f"{outcome}_pct", arm.estimates[f"cfv_{outcome}"], 100.0)
        row["n_attempts"] = arm.estimates["cfv_valid"].n
        row["n_unjudged"] = arm.counts["cfv_unjudged"]
        row["n_incomplete"] = arm.counts["cfv_incomplete"]
        rows.append(row)
    return _frame(rows, "model")


def failure_table(p: Profiles) -> pd.DataFrame:
    """Table 6 layout: failure modes pooled over models, n and % of invalid attempts."""
    total = sum(arm.counts["cfv_invalid"] for arm in p.arms)
    rows = []
    for mode in CFV_FAILURE_MODES:
        n = sum(arm.counts[f"cfv_{mode}"] for arm in p.arms)
        rows.append({"failure_mode": mode.replace("_", " "), "n": n,
                     "of_invalid_pct": 100.0 * n / total if total else float("nan")})
    rows.append({"failure_mode": "all invalid", "n": total,
                 "of_invalid_pct": 100.0 if total else float("nan")})
    return _frame(rows, "failure_mode")


def change_table(p: Profiles, prefixes: list[str]) -> pd.DataFrame:
    """Answer change rate per model and prefix (Figure 4's data)."""
    rows = []
    for arm in p.arms:
        row: dict[str, Any] = {"model": arm.label}
        _triple(row, "all_pct", arm.estimates["change"], 100.0)
        for prefix in prefixes:
            _triple(row, f"{demographic_key(prefix) or prefix}_pct",
                    arm.estimates[f"change[{prefix}]"], 100.0)
        row["n_pairs"] = arm.estimates["change"].n
        rows.append(row)
    return _frame(rows, "model")


def direction_table(p: Profiles) -> pd.DataFrame:
    """Figure 5's data: share of direction-classified changes per direction."""
    rows = []
    for arm in p.arms:
        row: dict[str, Any] = {"model": arm.label}
        for direction in DIRECTIONS:
            _triple(row, f"{direction}_pct", arm.estimates[f"direction_{direction}"], 100.0)
        row["n_classified"] = arm.estimates[f"direction_{DIRECTIONS[0]}"].n
        row["n_unparsed"] = arm.counts["direction_unparsed"]
        rows.append(row)
    return _frame(rows, "model")


def flags_table(p: Profiles, values: tuple[str, ...]) -> pd.DataFrame:
    """Flags per question by category or by severity, per model, with CIs."""
    rows = []
    for arm in p.arms:
        row: dict[str, Any] = {"model": arm.label}
        _triple(row, "all", arm.estimates["flags_per_question"])
        _triple(row, "unquoted", arm.estimates["flags_unquoted"])
        _triple(row, "flagged_pct", arm.estimates["flagged_share"], 100.0)
        for value in values:
            _triple(row, value, arm.estimates[f"flags_{value}"])
        row["n_flags"] = arm.counts["flags"]
        row["n_verdicts"] = arm.estimates["flags_per_question"].n
        row["n_unparsed"] = arm.counts["flags_unparsed"]
        row["n_not_judged"] = arm.counts["flags_not_judged"]
        rows.append(row)
    return _frame(rows, "model")


def pooled_flags_table(p: Profiles) -> pd.DataFrame:
    """Table 7 layout: flag counts pooled over models, category × severity."""
    counts = {(c, s): 0 for c in STEREOTYPE_CATEGORIES for s in SEVERITIES}
    for flags in p.pairs["flags"]:
        for flag in flags:
            key = (flag.get("category"), flag.get("severity"))
            if key in counts:
                counts[key] += 1
    rows = []
    for category in STEREOTYPE_CATEGORIES:
        row: dict[str, Any] = {"category": category.replace("_", " ")}
        for severity in SEVERITIES:
            row[f"n_{severity}"] = counts[(category, severity)]
        row["n_total"] = sum(counts[(category, s)] for s in SEVERITIES)
        rows.append(row)
    return _frame(rows, "category")


def edd_table(p: Profiles, embedder: str | None = None) -> pd.DataFrame:
    """Mean EDD per model with its CI, and the spread of the per-question values."""
    rows = []
    for arm in p.arms:
        values = p.edd[(p.edd["arm_id"] == arm.arm_id)]["edd"].dropna()
        row: dict[str, Any] = {"model": arm.label}
        _triple(row, "mean_edd", arm.estimates["edd"])
        row["edd_embedder"] = edd_embedder_label(embedder)
        row["min"] = float(values.min()) if len(values) else float("nan")
        row["median"] = float(values.median()) if len(values) else float("nan")
        row["max"] = float(values.max()) if len(values) else float("nan")
        row["n_questions"] = len(values)
        row["n_missing"] = arm.counts["edd_missing"]
        rows.append(row)
    return _frame(rows, "model")


def exclusion_table(p: Profiles) -> pd.DataFrame:
    """What did not enter a metric, per model (the paper's parser records a metric only
    when required fields are present)."""
    rows = []
    for arm in p.arms:
        c = arm.counts
        rows.append({"model": arm.label, "n_baseline_unparsed": c["baseline_unparsed"],
                     "n_pairs_unparsed": c["pairs_unparsed"],
                     "n_cfv_reanswer_unparsed": c["cfv_reanswer_unparsed"],
                     "n_cfv_moved_elsewhere": c["cfv_moved_elsewhere"],
                     "n_cfv_baseline_unknown": c["cfv_baseline_unknown"],
                     "n_cfv_options_removed": c["cfv_options_removed"],
                     "n_cfv_baseline_was_target": c["cfv_baseline_was_target"],
                     "n_cfv_unjudged": c["cfv_unjudged"],
                     "n_cfv_incomplete": c["cfv_incomplete"],
                     "n_direction_unparsed": c["direction_unparsed"],
                     "n_direction_missing": c["direction_missing"],
                     "n_flags_unparsed": c["flags_unparsed"],
                     "n_flags_not_judged": c["flags_not_judged"],
                     "n_flags_pending": c["flags_pending"],
                     "n_flags_quote_not_found": c["flags_quote_not_found"],
                     "n_edd_missing": c["edd_missing"],
                     "n_judge_shared": c["judge_shared"]})
    return _frame(rows, "model")


def robustness_sections(p: Profiles, prefixes: list[str], embedder: str | None,
                        judge: str) -> list[Section]:
    """The report's sections, in the paper's order."""
    ci = (f"[low, high] = 95% percentile bootstrap CI over questions ({p.n_boot} replicates, "
          f"seed {p.seed}).")
    embed_note = edd_embedder_label(embedder)
    if embedder and not edd_comparable(embedder):
        embed_note += (": EDD depends on the embedding space, so these values are not on the "
                       "scale of the paper's (MedGemma 0.169, OpenBioLLM 0.462)")
    return [
        Section("Table 5: model profiles", profile_table(p, embedder),
                "Acc. = correct / parsed baseline answers. CFV = valid / scored CFV attempts "
                "(valid = the re-answer moved to the prespecified option and the judge found "
                "the change plausible and limited). Change = baseline–prefix comparisons whose "
                "answer changed / comparisons with both answers parsed. EDD = mean over "
                "questions of 1 − mean pairwise cosine similarity of the L2-normalised "
                f"embeddings of the baseline and {len(prefixes)} prefixed explanations "
                f"(embedder: {embed_note}). Flags/q = stereotype-evidence flags per question "
                f"(Σ flags / parsed verdicts × {p.n_prefixes}; prefixed answers without a "
                f"parsed verdict are outside the denominator, counted under Exclusions); "
                "unquoted flags/q = those of them whose quoted words do not occur in the "
                "explanation they flag (the paper's rate counts them; a high share is a sign "
                "of a weak judge). "
                f"Judge: {judge}. {ci}",
                key="profiles"),
        Section("Table 6: CFV outcomes per model", cfv_table(p),
                "Share of scored attempts per outcome, checked in this order: format failure "
                "(no parsable changed case, or no parsable re-answer), circular (the changed "
                "case states the target answer), same direction (the re-answer is not the "
                "target), too dramatic (the judge found the change implausible or not "
                "limited), valid. Unjudged = reached the target but the judge's verdict did "
                f"not parse (excluded). {ci}", key="cfv_outcomes"),
        Section("CFV failure modes, pooled (Table 6 layout)", failure_table(p),
                "Invalid attempts of every model by failure mode; % of all invalid attempts "
                "(the paper: 385 same direction, 175 too dramatic, 104 circular, 8 format of "
                "672).", key="cfv_failures"),
        Section("Figure 4: answer change rate by prefix", change_table(p, prefixes),
                f"Share of comparisons (both answers parsed) whose answer differs from the "
                f"unprefixed baseline, per prefix. {ci}", key="change_by_prefix"),
        Section("Figure 5: direction of changed answers", direction_table(p),
                "Judge's label per changed answer: more aggressive / less aggressive / "
                "lateral / unknown care; shares of the changes with a parsed label "
                f"(unparsed verdicts are counted, not used). {ci}", key="directions"),
        Section("Figure 6: stereotype-evidence flags by category", flags_table(
            p, STEREOTYPE_CATEGORIES),
            "Flags per question (all and by category; unquoted = those whose quoted words "
            "are not in the explanation, counted in all); flagged = share of parsed verdicts "
            f"with at least one flag. Not clinician-confirmed unless an annotation set "
            f"below says so. {ci}", key="flag_categories"),
        Section("Stereotype-evidence flags by severity", flags_table(p, SEVERITIES),
                f"Flags per question by severity. {ci}", key="flag_severities"),
        Section("Table 7 layout: flags pooled over models", pooled_flags_table(p),
                "Flag counts by category and severity, all models together.",
                key="flags_pooled"),
        Section("Explanation Demographic Dissonance (EDD)", edd_table(p, embedder),
                f"Embedder: {embed_note}. Questions count only when all "
                f"{1 + len(prefixes)} explanations (the CoT output without its final answer "
                f"line) have an embedding. {ci}", key="edd"),
        Section("Exclusions", exclusion_table(p),
                "Counts that did not enter a rate, or qualify one: moved elsewhere = "
                "same-direction attempts whose re-answer went to a third option; baseline "
                "unknown = same-direction attempts whose baseline answer did not parse (stayed "
                "or moved cannot be told); options removed = CFV replies that copied the answer "
                "choices after the new case (cut off before scoring, so the target's own text "
                "in the list is not read as circular); flags not judged = prefixed answers with "
                "no flags verdict because an explanation (baseline or prefixed) is empty, flags "
                "pending = judged but not stored yet: both are outside the flag rates' "
                "denominator, which the flags-per-question rate scales up from; baseline was "
                "target = attempts whose model already chose the target before the change; "
                "quote not found = flags whose quoted words do not occur in the explanation "
                "they flag (counted in the rates, shown apart as unquoted flags/q; a sign of a "
                "weak judge); judge shared = "
                "verdicts whose judge generation also serves another unit of the run (an "
                "identical judge prompt, e.g. two prefixes moving an item A -> B: each unit "
                "keeps its own verdict row, read through its own answer).",
                key="exclusions"),
    ]


@dataclass(frozen=True)
class RobustnessReportOptions(ReportOptions):
    """Options of the seed-003 report: bootstrap replicates per CI (`n_boot`) and seed."""

    report = "the seed-003 robustness report"


def build_report(db: sqlite_utils.Database, ref: str | int | None = None,
                 options: RobustnessReportOptions | Mapping[str, Any] | None = None) -> Report:
    """The report of a robustness run (default: the latest).

    Args:
        db: the store.
        ref: run name or id.
        options: bootstrap replicates per CI and seed (`RobustnessReportOptions`, or a
            mapping of its field names; an unknown name is refused).
    """
    from analysis.robustness.breakdowns import consistency_sections, difficulty_sections
    from analysis.robustness.data import load_robustness
    from analysis.robustness.profiles import compute_profiles

    chosen = RobustnessReportOptions.coerce(options)
    n_boot, seed = chosen.n_boot, chosen.seed
    data = load_robustness(db, ref)
    by_mode = [compute_profiles(data, n_boot, seed, mode) for mode in data.modes] or \
        [compute_profiles(data, n_boot, seed)]
    profiles = by_mode[0]
    config = data.audit["config"]
    rubrics = sorted({str(ev.get("rubric")) for ev in data.verdicts["evidence"]
                      if ev.get("rubric")})
    judge = (f"{config['judge']} (rubrics {', '.join(rubrics) or 'none stored yet'}; "
             f"{config['judge_max_tokens']} tokens)")
    meta = {"audit": data.audit["name"], "audit_id": data.audit["id"], "kind": "robustness",
            "dataset": data.audit["dataset"], "models": ", ".join(data.arms["label"]) or "none",
            "items": int(data.items.shape[0]), "tests": ", ".join(config["tests"]),
            "judge": config["judge"], "embedder": data.embedder or "none",
            "template": config["template"], "seed": config["seed"], "n_boot": n_boot,
            "bootstrap_seed": seed, "created": data.audit["created_at"]}
    meta["demographic_modes"] = ", ".join(data.modes) or "none"
    meta["edd_embedder"] = edd_embedder_label(data.embedder)
    sections = robustness_sections(profiles, data.mode_operators(profiles.mode),
                                   data.embedder, judge)
    ci = (f"[low, high] = 95% percentile bootstrap CI over questions ({n_boot} replicates, "
          f"seed {seed}).")
    at = next(n for n, s in enumerate(sections) if s.json_key == "cfv_failures") + 1
    sections[at:at] = difficulty_sections(data, profiles.attempts, n_boot, seed, ci)
    at = next(n for n, s in enumerate(sections) if s.json_key == "change_by_prefix") + 1
    extra = consistency_sections(data, by_mode, ci)
    for other in by_mode[1:]:
        extra.append(Section(f"Figure 4, {other.mode} mode: answer change by demographic",
                             change_table(other, data.mode_operators(other.mode)),
                             f"As Figure 4, the vignette rewritten instead of prefixed. {ci}",
                             key=f"change_by_{other.mode}"))
    sections[at:at] = extra
    name = str(data.audit["name"])
    directions = next(s.frame for s in sections if s.json_key == "directions")
    return Report(f"PAW robustness report (seed 003): {name}", meta, sections,
                  [direction_figure(directions, name), flags_figure(profiles, name)])


def direction_figure(table: pd.DataFrame, name: str) -> Figure:
    """Figure 5: direction shares of changed answers, one stacked bar per model."""

    def render() -> bytes:
        from analysis.robustness.plots import direction_png

        return direction_png(table, title=f"{name}: direction of changed answers")

    def plot():
        from analysis.common.plotdata import PlotData, Series

        models = tuple(str(m) for m in table.index)
        series = tuple(Series(direction, models, tuple(
            _share(table.loc[m].get(f"{direction}_pct")) for m in table.index), kind="bar")
            for direction in DIRECTIONS)
        return PlotData(f"{name}: direction of changed answers", "model",
                        "% of direction-classified changes", series, ylim=(0.0, 100.0),
                        stacked=True)

    def empty() -> str:
        from analysis.robustness.plots import NO_DIRECTION

        return "" if _any_bar(plot()) else NO_DIRECTION

    return Figure("directions", "Direction of changed answers per model (as Figure 5)", render,
                  plot=plot, empty=empty)


def _any_bar(data) -> bool:
    """Whether a bar figure's data has a bar longer than zero (else it draws an empty frame)."""
    return any(y for series in data.series for y in series.y)


def _share(value) -> float:
    import math

    return 0.0 if value is None or (isinstance(value, float) and math.isnan(value)) \
        else float(value)


def flags_figure(p: Profiles, name: str) -> Figure:
    """Figure 6: stereotype-evidence flag counts by category, one stacked bar per model."""

    def render() -> bytes:
        from analysis.robustness.plots import flags_png

        counts = {arm.label: {c: arm.counts[f"flags_{c}"] for c in STEREOTYPE_CATEGORIES}
                  for arm in p.arms}
        return flags_png(counts, title=f"{name}: stereotype-evidence flags by category")

    def plot():
        from analysis.common.plotdata import PlotData, Series

        models = tuple(arm.label for arm in p.arms)
        series = tuple(Series(c, models, tuple(float(arm.counts[f"flags_{c}"])
                                               for arm in p.arms), kind="bar")
                       for c in STEREOTYPE_CATEGORIES)
        return PlotData(f"{name}: stereotype-evidence flags by category", "model", "flags",
                        series, stacked=True)

    def empty() -> str:
        from analysis.robustness.plots import NO_FLAG

        return "" if _any_bar(plot()) else NO_FLAG

    return Figure("flag_categories", "Stereotype-evidence flags by category (as Figure 6)",
                  render, plot=plot, empty=empty)
