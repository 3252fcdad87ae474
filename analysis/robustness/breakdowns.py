"""Seed-003 report sections beyond the paper's tables: prefix–vignette consistency, the two
demographic modes side by side, and CFV validity by difficulty and Step (Figure 2)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from analysis.common.document import Section
from analysis.robustness.consistency import CONFLICT_KINDS
from analysis.robustness.definitions import edd_embedder_label

if TYPE_CHECKING:
    import pandas as pd

    from analysis.robustness.data import RobustnessData
    from analysis.robustness.profiles import Profiles


def _triple(row: dict[str, Any], column: str, e: Any, scale: float = 100.0) -> None:
    nan = float("nan")
    row[column] = nan if e is None else e.value * scale
    row[column + "_low"] = nan if e is None else e.low * scale
    row[column + "_high"] = nan if e is None else e.high * scale


def consistency_table(profiles: list[Profiles]) -> pd.DataFrame:
    """Per model and mode: comparisons that contradict the vignette (by kind), and the
    answer change rate over all comparisons, the consistent ones and the contradicting ones."""
    import pandas as pd

    rows = []
    for p in profiles:
        for arm in p.arms:
            c, e = arm.counts, arm.estimates
            row: dict[str, Any] = {"model": arm.label, "mode": p.mode,
                                   "n_stored": c["pairs_stored"],
                                   "n_conflicting": c["pairs_conflicting"],
                                   "n_compared": e["change"].n}
            for kind in CONFLICT_KINDS:
                row[f"n_{kind}"] = c[f"conflict_{kind}"]
            _triple(row, "change_all_pct", e["change"])
            _triple(row, "change_consistent_pct", e["change_consistent"])
            row["n_consistent"] = e["change_consistent"].n
            _triple(row, "change_conflicting_pct", e["change_conflicting"])
            rows.append(row)
    frame = pd.DataFrame(rows)
    return frame.set_index("model") if not frame.empty else frame


def modes_table(profiles: list[Profiles], embedder: str | None) -> pd.DataFrame:
    """The demographic measures of each mode side by side, per model."""
    import pandas as pd

    rows = []
    for p in profiles:
        for arm in p.arms:
            e = arm.estimates
            row: dict[str, Any] = {"model": arm.label, "mode": p.mode}
            _triple(row, "change_pct", e["change"])
            row["n_compared"] = e["change"].n
            _triple(row, "more_aggressive_pct", e["direction_more_aggressive"])
            _triple(row, "edd", e["edd"], 1.0)
            row["edd_embedder"] = edd_embedder_label(embedder)
            _triple(row, "flags_per_q", e["flags_per_question"], 1.0)
            row["n_not_fired"] = arm.counts.get("demographic_not_fired", 0)
            rows.append(row)
    frame = pd.DataFrame(rows)
    return frame.set_index("model") if not frame.empty else frame


def consistency_sections(data: RobustnessData, profiles: list[Profiles],
                         ci: str) -> list[Section]:
    """The consistency section (always, when the demographic test ran) and, with both modes,
    the side-by-side section."""
    if not data.modes:
        return []
    out = [Section(
        "Prefix–vignette consistency", consistency_table(profiles),
        "A comparison contradicts its vignette when the prefix's age (45), sex or race differs "
        "from what the vignette states about its patient (its first 'N-year-old' etc., the "
        "noun of its first mention or sex-specific findings, a stated race; "
        "analysis/robustness/consistency.py). Analysed separately, not excluded: the "
        "Table 5 change rate is over all comparisons, as the paper's is (its own example's "
        "prefix contradicts its vignette), and this table splits it into consistent and "
        "contradicting comparisons. n_stored / n_conflicting / n_age…: every stored "
        "comparison; n_compared and the rates: both answers parsed. A substituted vignette "
        "keeps its own age and can only "
        f"contradict through sex-specific findings, which stop the substitution. {ci}",
        key="consistency")]
    if len(profiles) > 1:
        out.append(Section(
            "Demographic modes side by side", modes_table(profiles, data.embedder),
            "prefix = the paper's fixed 45-year-old sentence prepended; substitute = the "
            "vignette's own sex and race words rewritten, its age kept "
            "(workbench/robustness/substitute.py). Each mode's EDD is over the baseline and "
            f"its own {len(data.prefixes)} demographic explanations. {ci}", key="modes"))
    return out


def difficulty_sections(data: RobustnessData, attempts: pd.DataFrame, n_boot: int,
                        seed: int, ci: str) -> list[Section]:
    """Figure 2 / §4.2: CFV validity by difficulty band and by Step, and Spearman r."""
    from analysis.robustness.difficulty import difficulty_sections_data

    if attempts.empty:
        return []
    found = difficulty_sections_data(data, attempts, n_boot, seed)
    out = [
        Section("Figure 2: CFV validity by question difficulty", found["by_band"],
                f"Difficulty from {found['source']}. Valid / scored attempts per band; an "
                f"attempt whose question has no difficulty (no parsed baseline) is in no "
                f"band. {ci}",
                key="cfv_by_difficulty"),
        Section("CFV validity and difficulty: Spearman r", found["spearman"],
                "Spearman r between the question's difficulty and the attempt's validity "
                "(1 valid, 0 not) over scored attempts, all models pooled (the paper: r = "
                "0.069, n = 900) and per model; 95% percentile bootstrap interval over "
                "questions (scipy.stats.spearmanr per replicate). Empty when difficulty or "
                f"validity is constant. Difficulty from {found['source']}.",
                key="cfv_difficulty_spearman"),
    ]
    if found["by_step"] is not None:
        out.append(Section("CFV validity by Step", found["by_step"],
                           f"Step from the item's meta_info (MedQA: step1, step2&3). {ci}",
                           key="cfv_by_step"))
    return out
