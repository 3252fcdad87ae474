"""The DBPA report (seed 001): sensitivity table first, then the paper's three case studies.

Reads the permutation tests `paw dbpa` stored (`dbpa_tests`) and lays them out
(`analysis.dbpa.tables` computes each table):

1. **Sensitivity** (beyond the paper): every test's decision and effect size under every
   (embedder × distance) the run asked for; rows whose decision differs between
   configurations are flips, counted and marked. The paper's own tables show such flips
   (its Table 4, JSD vs energy; Table 7, ada-002 vs other embedders), so this comes first,
   in every format (the ROC figure sits under case study 2). Tests whose k and B could not
   reach α after correction are marked † and named in a warning.
2. **Case study 1, perturbations**: per perturbation, effect size T_obs (and ω*, comparable
   across k) and the items significant per configuration.
3. **Case study 2, TPR/FPR**: over a partition of perturbations into "should change" and
   "should not change" (default: the catalogue's intent tag, D vs P), the rejection rates,
   the identity control's (the empirical FPR) and the ROC curve (score 1 − p) with its AUC.
4. **Identity control**: the baseline against itself with independent seeds, per
   configuration: the false-positive rate the test actually has here.
5. **Case study 3, model swap** (alignment): the second model's outputs as the intervention.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from analysis.common.options import parse_option
from analysis.common.document import Figure, Report, Section
from analysis.common.report_options import ReportOptions
from analysis.dbpa.definitions import Correction
from analysis.dbpa.plots import roc_data, roc_png
from analysis.dbpa.tables import (
    CANNOT,
    P_DECIMALS,
    adjust,
    identity_table,
    load_tests,
    long_table,
    partition,
    per_perturbation,
    reach,
    sensitivity,
    tpr_fpr,
)

if TYPE_CHECKING:
    import pandas as pd
    import sqlite_utils

__all__ = ["build_report", "load_tests"]


def warning(frame: pd.DataFrame, alpha: float, correction: str) -> str:
    """One line naming the tests that could not reject at α (empty when every test could)."""
    cannot = frame[frame["can_reject"].map(lambda v: v is False)]
    if cannot.empty:
        return ""
    worst = cannot.loc[cannot["p_floor_adjusted"].idxmax()]
    return (f"WARNING: {len(cannot)} of {int(frame['can_reject'].notna().sum())} test results "
            f"({CANNOT}) could not reject at α = {alpha} after {correction} whatever the "
            f"outputs: their smallest achievable adjusted p is above α (worst: "
            f"{worst['perturbation']} · {worst['item']}, {worst['config']}, n = "
            f"{int(worst['n_baseline'])}/{int(worst['n_perturbed'])}, B = "
            f"{int(worst['permutations'])}: {worst['p_floor_adjusted']:.3f}). Their 'ns' "
            f"says nothing about the edit; raise k (or B).")


def identical_warning(frame: pd.DataFrame) -> str:
    """One line when at least `IDENTICAL_PAIRS_WARN` of the run's shared-seed pairs are
    identical texts (empty otherwise, and for a run without paired tests)."""
    from analysis.dbpa.definitions import IDENTICAL_PAIRS_POWER, IDENTICAL_PAIRS_WARN

    paired = frame[(frame["design"] == "paired") & frame["identical_pairs"].notna()]
    tests = paired.drop_duplicates(["case_study", "item", "baseline_arm", "perturbed_arm",
                                    "perturbation"])
    total, same = int(tests["n_baseline"].sum()), int(tests["identical_pairs"].sum())
    if not total or same < IDENTICAL_PAIRS_WARN * total:
        return ""
    return (f"WARNING: {same} of {total} shared-seed pairs ({100 * same / total:.0f}%, at least "
            f"{100 * IDENTICAL_PAIRS_WARN:.0f}%) are identical texts: a swap within such a pair "
            "changes nothing, so a paired test with m identical pairs of k has 2^(k − m) "
            "re-splits (its p floor and † count only the others). Valid, but with little "
            f"power (bench/dbpa_identical_pairs.py, {IDENTICAL_PAIRS_POWER}): an 'ns' here "
            "says little about the edit; use --seeds independent or a larger --k.")


def _not_tested(db: sqlite_utils.Database, audit_id: int, frame: pd.DataFrame) -> pd.DataFrame:
    import pandas as pd

    rows = [{"perturbation": op, "item": item, "reason": f"edit did not fire ({reason})"}
            for op, item, reason in db.execute(
                "SELECT DISTINCT v.operator_id, i.source_id, v.reason FROM jobs j "
                "JOIN variants v ON v.id = j.variant_id JOIN items i ON i.id = j.item_id "
                "WHERE j.audit_id = ? AND j.status = 'not_fired'", [audit_id])]
    few = frame[frame["status"] == "too_few"].drop_duplicates(["perturbation", "item"])
    rows += [{"perturbation": r["perturbation"], "item": r["item"], "reason": r["note"]}
             for _, r in few.iterrows()]
    return pd.DataFrame(rows, columns=["perturbation", "item", "reason"])


@dataclass(frozen=True)
class DbpaReportOptions(ReportOptions):
    """Options of the DBPA report: `n_boot` and `seed` are accepted as every report's are,
    and unused (the permutation tests were run, seeded, by `paw dbpa`)."""

    report = "the DBPA report"


def build_report(db: sqlite_utils.Database, ref: str | int | None = None,
                 options: DbpaReportOptions | Mapping[str, Any] | None = None) -> Report:
    """The DBPA report of a stored run (`paw report --dbpa REF`).

    Args:
        db: the store.
        ref: the run's name or id (None: the latest DBPA run).
        options: `DbpaReportOptions` or a mapping of its field names (checked, unused).
    """
    DbpaReportOptions.coerce(options)
    from store.runs import find_run, run_config

    run = find_run(db, ref, "dbpa")
    config = run_config(db, run.id)
    alpha = float(config["alpha"])
    correction = parse_option(Correction, config["correction"], field="correction",
                              where=f"DBPA run {run.name}'s stored settings")
    frame = reach(adjust(load_tests(db, run.id), alpha, correction), alpha, correction)
    configs = [f"{e} / {dist}" for e in config["embedders"] for dist in config["distances"]]
    meta = {"audit": run.name, "audit_id": run.id, "kind": run.kind, "dataset": run.dataset,
            "models": ", ".join(config["models"]), "k": config["k"],
            "temperature": config["temperature"], "max_tokens": config["max_tokens"],
            "seeds": config["seeds"],
            "designs": ", ".join(sorted(set(frame["design"]))) if not frame.empty else "–",
            "identity_control": bool(config.get("identity_control", False)),
            "embedders": ", ".join(config["embedders"]),
            "distances": ", ".join(config["distances"]), "permutations": config["permutations"],
            "alpha": alpha, "correction": correction, "status": run.status}
    sections: list[Section] = []
    figures: list[Figure] = []
    if frame.empty:
        sections.append(Section("No tests stored", _not_tested(db, run.id, frame),
                                "`paw dbpa` stores the tests after every sample is generated; "
                                "this run has none yet (interrupted, or every edit did not "
                                "fire).", key="no_tests"))
        return Report(f"PAW DBPA report: {run.name}", meta, sections, figures)
    alert = " ".join(filter(None, [warning(frame, alpha, correction),
                                   identical_warning(frame)]))
    if alert:
        meta["warning"] = alert
    table, flips, n = sensitivity(frame, configs)
    sections.append(Section(
        "Sensitivity: decisions across embedders and distances", table,
        f"{alert + ' ' if alert else ''}{flips} of {n} tests flip (FLIP: significant under one "
        f"configuration, not under another). Cell: sig/ns at α = {alpha} after {correction} "
        f"correction within the family, then ω = T_obs (* p ≤ 0.05, ** ≤ 0.01, *** ≤ 0.001, "
        f"adjusted) and ω* = (ω − ω₀)/(ω_max − ω₀), the effect comparable across k (ω₀: ω's "
        f"mean over the re-splits; 0 = no more than chance, 1 = the largest ω possible); "
        f"{CANNOT}: could not reject at this k and B. Same B = {config['permutations']} "
        f"re-splits for every configuration of a test.", key="sensitivity"))
    perts = frame[frame["case_study"] == "perturbation"]
    if not perts.empty:
        sections.append(Section(
            "Case study 1: effect size per perturbation", per_perturbation(perts, configs),
            "ω̃: median effect size over items; ω̃*: median standardised effect (comparable "
            "across k); sig: items significant after correction. Intent D (should change) / "
            "P (should not), from the operator catalogue.", key="perturbations"))
        intents = dict(zip(perts["perturbation"], perts["intent"], strict=True))
        labels = partition(config, sorted(intents), intents)
        rates, curves = tpr_fpr(frame, labels, configs, alpha)
        how = ("intent tag (D: should change, P: should not)"
               if config.get("should_change") is None and config.get("should_not_change") is None
               else "the run's --should-change / --should-not-change lists")
        change = ", ".join(sorted(p for p, v in labels.items() if v)) or "none"
        keep = ", ".join(sorted(p for p, v in labels.items() if not v)) or "none"
        sections.append(Section(
            "Case study 2: TPR / FPR over should-change vs should-not-change", rates,
            f"Partition by {how}: should change = {change}; should not = {keep}. TPR/FPR: "
            f"share of tests rejected at α = {alpha} after {correction}. FPR (identity): share "
            f"of identity controls (the baseline against itself, independent seeds) with raw "
            f"p ≤ α, the empirical false-positive rate. ROC over the raw p-value (score 1 − p) "
            f"and over ω; ROC-AUC vs identity: should-change tests against the identity "
            f"controls. AUC undefined (–) when a class is empty.", key="tpr_fpr"))
        if curves:
            figures.append(Figure("roc", "ROC of DBPA decisions, should-change vs "
                                         "should-not-change perturbations",
                                  lambda: roc_png(curves, f"{run.name}: ROC (score 1 − p)"),
                                  after="tpr_fpr",
                                  plot=lambda: roc_data(curves,
                                                        f"{run.name}: ROC (score 1 − p)")))
    controls = identity_table(frame, configs, alpha)
    if not controls.empty:
        sections.append(Section(
            "Identity control: the baseline against itself", controls,
            f"Per item and model, the unperturbed question sampled again with independent "
            f"seeds and tested against the baseline: H0 holds by construction, so 'rejected "
            f"(p ≤ α)' is the test's empirical false-positive rate here (nominal {alpha}), "
            f"'after correction' within the identity family. ω₀ is ω's mean over the "
            f"re-splits; a mean ω* near 0 says ω is at its chance level.", key="identity"))
    swaps = frame[frame["case_study"] == "model_swap"]
    if not swaps.empty:
        swap = swaps[["item", "baseline_arm", "perturbed_arm", "config", "design",
                      "effect_size", "effect_std", "p_value", "p_holm", "p_bonferroni",
                      "significant"]]
        swap = swap.set_index("item")
        swap.attrs["decimals"] = P_DECIMALS
        sections.append(Section(
            "Case study 3: model swap (alignment)", swap,
            "The candidate model's outputs on the unperturbed question as the intervention "
            "against the reference model's. Small ω, large p: no detectable difference in "
            "the output distribution under that configuration (not identity).",
            key="model_swap"))
    sections.append(Section(
        "Every test", long_table(frame),
        "One row per test and configuration: the numbers behind every table above. p "
        "[low, high]: the exact 95% interval of the permutation p from the B re-splits "
        "(Monte Carlo uncertainty; SE beside it); p floor: the smallest p this test could "
        "expect, (1 + B·t/N)/(1 + B) with N distinct re-splits; adjusted: × the family's "
        "size. The JSON rows also carry each test's generation ids.", key="tests"))
    missing = _not_tested(db, run.id, frame)
    if not missing.empty:
        sections.append(Section("Not tested", missing,
                                "Edits that did not fire, and tests with fewer than 2 "
                                "non-empty outputs in a condition.", key="not_tested"))
    return Report(f"PAW DBPA report: {run.name}", meta, sections, figures)
