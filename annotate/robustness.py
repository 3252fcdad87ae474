"""Seed-003 annotation: clinicians check the robustness run's automated judgements.

The paper's authors name the absence of clinician validation as their main limitation
(§6); here a coordinator draws a set from a robustness run (`annotate.robustness_sets`:
one case per parsed judge verdict, stratified by test × dataset × model) and two raters
confirm or reject the judge.

`judge_validation` then compares the judge with the clinicians' final labels (unanimous
or adjudicated): Cohen's kappa (statsmodels, via `annotate.kappa`), precision and recall of
the judge's positive class, per test overall and per model.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import sqlite_utils

from annotate.adjudicate import final_labels
from annotate.codebook import FIELDS, robustness_test
from annotate.kappa import Agreement, from_pairs
from annotate.robustness_sets import verdict_units
from annotate.sets import get_set

CLINICIAN_FIELD: dict[str, str] = {"cfv": "cfv_validity", "direction": "direction",
                                   "flags": "stereotype"}
"""The clinician field that checks each test's judge verdict."""

POSITIVE: dict[str, str] = {"cfv": "valid_change", "direction": "more_aggressive",
                            "flags": "flagged"}
"""The positive class of each test's precision/recall: a valid change; a more aggressive
change (the paper's headline direction); a flagged explanation (any severity)."""


@dataclass(frozen=True)
class JudgeValidation:
    """The judge against the clinicians' final labels on one test (one model or all)."""

    test: str
    model: str | None
    positive: str
    n: int
    tp: int
    fp: int
    fn: int
    tn: int
    agreement: Agreement
    category_match: tuple[int, int] | None = None

    @property
    def precision(self) -> float | None:
        """Of the judge's positives, the share the clinicians confirm (None: no positive)."""
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        """Of the clinicians' positives, the share the judge found (None: no positive)."""
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


def _is_positive(test: str, value: str) -> bool:
    return value != "none" if test == "flags" else value == POSITIVE[test]


def judge_validation(db: sqlite_utils.Database, set_name: str) -> list[JudgeValidation]:
    """The judge's verdicts against the final clinician labels of a robustness set.

    A case counts when its field has a final label (both raters agree, or a coordinator
    adjudicated). Kappa is over the field's full categories (judge = rater A, clinicians =
    rater B); precision and recall over `POSITIVE`. For flags, `category_match` is (cases
    where the clinicians' category is one of the judge's, cases both flagged with a
    clinician category).

    Returns:
        For each test with a decided case: all models, then each model.
    """
    the_set = get_set(db, set_name)
    finals = final_labels(db, set_name)
    units = {(u["test"], u["perturbed_id"]): u for u in verdict_units(db, int(the_set.audit_id))}
    rows: dict[str, list[tuple[str, dict, str, str | None]]] = defaultdict(list)
    for code, stratum, perturbed in db.execute(
            "SELECT code, stratum, perturbed_generation_id FROM annotation_cases "
            "WHERE set_id = ? ORDER BY id", [the_set.id]):
        test = robustness_test({"stratum": stratum})
        final = finals.get((code, CLINICIAN_FIELD.get(test or "", "")))
        unit = units.get((test, perturbed))
        if test is None or final is None or final.value is None or unit is None:
            continue
        category = finals.get((code, "stereotype_category"))
        rows[test].append((unit["model"], unit, final.value,
                           None if category is None else category.value))
    out = []
    for test in ("cfv", "direction", "flags"):
        models = sorted({m for m, *_ in rows[test]})
        for model in [None, *models]:
            chosen = [r for r in rows[test] if model is None or r[0] == model]
            if chosen:
                out.append(_validate(test, model, chosen))
    return out


def _validate(test: str, model: str | None,
              rows: list[tuple[str, dict, str, str | None]]) -> JudgeValidation:
    field = CLINICIAN_FIELD[test]
    pairs = [(unit["automated"], human) for _, unit, human, _ in rows]
    agreement = from_pairs(pairs, FIELDS[field].categories, field=field, stratum=model,
                           rater_a="judge", rater_b="clinicians")
    judged = [(_is_positive(test, a), _is_positive(test, h)) for a, h in pairs]
    tp = sum(a and h for a, h in judged)
    fp = sum(a and not h for a, h in judged)
    fn = sum(h and not a for a, h in judged)
    tn = sum(not a and not h for a, h in judged)
    match = None
    if test == "flags":
        both = [(unit["categories"], cat) for _, unit, human, cat in rows
                if unit["automated"] != "none" and human != "none" and cat is not None]
        match = (sum(cat in cats for cats, cat in both), len(both))
    return JudgeValidation(test, model, POSITIVE[test], len(pairs), tp, fp, fn, tn, agreement,
                           match)


def is_robustness_set(db: sqlite_utils.Database, set_id: int) -> bool:
    """Whether a set was drawn from a robustness run."""
    row = db.execute("SELECT a.kind FROM annotation_sets s JOIN audits a ON a.id = s.audit_id "
                     "WHERE s.id = ?", [set_id]).fetchone()
    return row is not None and row[0] == "robustness"


def _cell(value: float | None) -> float | None:
    return None if value is None else float(value)


def robustness_set_sections(db: sqlite_utils.Database, set_name: str,
                            raters: tuple[str, str]) -> list:
    """Report sections of a robustness set: judge vs clinicians, and inter-rater agreement."""
    import pandas as pd

    from analysis.common.document import Section
    from annotate.agreement import all_agreements

    rows = []
    for v in judge_validation(db, set_name):
        ag = v.agreement
        low, high = ag.kappa_ci if ag.kappa_ci else (None, None)
        rows.append({
            "comparison": f"{v.test} / {v.model or 'all models'}", "positive": v.positive,
            "n": v.n, "raw_agreement": ag.raw_agreement, "kappa": _cell(ag.kappa),
            "kappa_low": _cell(low), "kappa_high": _cell(high),
            "precision": v.precision, "recall": v.recall,
            "category_match": (f"{v.category_match[0]}/{v.category_match[1]}"
                               if v.category_match else ""),
            "note": ag.interpretation if ag.state == "ok" else ag.reason})
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame = frame.set_index("comparison")
    agreement_rows = [{
        "field": ag.label, "n": ag.n, "raw_agreement": ag.raw_agreement,
        "kappa": _cell(ag.kappa), "kappa_low": _cell(ag.kappa_ci[0] if ag.kappa_ci else None),
        "kappa_high": _cell(ag.kappa_ci[1] if ag.kappa_ci else None), "ac1": ag.ac1,
        "landis_koch": ag.interpretation if ag.state == "ok" else ag.reason,
    } for ag in all_agreements(db, set_name, raters=raters)]
    agreement = pd.DataFrame(agreement_rows)
    if not agreement.empty:
        agreement = agreement.set_index("field")
    return [
        Section(f"Judge vs clinicians ({set_name})", frame,
                f"Raters {raters[0]} and {raters[1]}; clinician label = final (both agree, or "
                "adjudicated). Kappa: Cohen's over the field's categories (judge vs "
                "clinicians), 95% CI (statsmodels). Positive class: cfv valid_change (judge "
                "plausible and limited, not circular), direction more_aggressive, flags any "
                "flag (the judge's worst severity vs the clinicians'). Category match = cases "
                "both flagged whose clinician category is one of the judge's. Cases were "
                "balanced over the judge's verdicts within each test × model, so these are "
                "not prevalence-weighted.", key=f"judge_validation_{set_name}"),
        Section(f"Inter-rater agreement ({set_name})", agreement,
                "Cohen's kappa with 95% CI (statsmodels), raw agreement, N and Gwet's AC1 on "
                "the seed-003 fields; undefined when no case was labelled by both raters or "
                "both used one category only.", key=f"agreement_{set_name}"),
    ]
