"""Seed-003 annotation: clinicians make the decisions the robustness run made automatically.

The paper's authors name the absence of clinician validation as their main limitation
(§6); here a coordinator draws a set from a robustness run (`annotate.sets.robustness`:
one case per automated decision, stratified by test × dataset × model) and two raters
answer the same questions the pipeline answered.

`judge_validation` compares each automated decision with the clinicians' final label
(unanimous or adjudicated), one row per decision: for a CFV attempt the judge's plausible
and limited, the circularity rule, the re-answer's target correct and same direction, and
the validity they add up to; the direction label; the flags' worst severity. Cohen's kappa
(statsmodels, via `annotate.agreement.kappa`), precision and recall of the positive class, per model
and overall. A judge decision counts once: the sampler never draws two units of one judge
generation, and a set that holds two (drawn before that rule) counts the first only.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import sqlite_utils

from annotate.agreement.kappa import Agreement, from_pairs
from annotate.agreement.tally import Tally
from annotate.codebook import CFV_FIELDS, FIELDS
from annotate.robustness.finals import CFV_VALID, UNSURE, automated, decided_cases

DECISIONS: dict[str, tuple[str, ...]] = {"cfv": (*CFV_FIELDS, CFV_VALID),
                                         "direction": ("direction",),
                                         "flags": ("stereotype",)}
"""The decisions compared for each test, in report order (clinician field names)."""

POSITIVE: dict[str, str] = {**{d: "yes" for d in (*CFV_FIELDS, CFV_VALID)},
                            "direction": "more_aggressive", "stereotype": "flagged"}
"""The positive class of each decision's precision/recall: 'yes' for the CFV decisions; a
more aggressive change (the paper's headline direction); a flagged explanation (any
severity)."""

@dataclass(frozen=True)
class JudgeValidation(Tally):
    """One automated decision against the clinicians' final labels (one model or all).

    The `Tally` (n, tp, fp, fn, tn) counts the cases compared (both sides have a value),
    automated against clinicians on the positive class.

    Attributes:
        test: 'cfv', 'direction' or 'flags'.
        decision: the clinician field compared (or `CFV_VALID`).
        model: the arm label, None for all models.
        positive: the positive class of precision/recall.
        agreement: kappa etc. over the decision's categories (automated = rater A).
        category_match: flags only: (cases whose clinician category is one of the
            judge's, cases both flagged with a clinician category).
        n_unsure: decided cases the clinicians marked 'unsure' (left out).
        n_no_automated: decided cases without an automated value (its verdict or
            re-answer did not parse).
        n_shared: decided cases left out because their judge decision was counted already.
    """

    test: str
    decision: str
    model: str | None
    positive: str
    agreement: Agreement
    category_match: tuple[int, int] | None = None
    n_unsure: int = 0
    n_no_automated: int = 0
    n_shared: int = 0

    @property
    def note(self) -> str:
        """Landis–Koch wording, or why it does not apply (undefined; one label used)."""
        ag = self.agreement
        if ag.state != "ok":
            return ag.reason
        rows = [sum(row) for row in ag.confusion]
        cols = [sum(ag.confusion[i][j] for i in range(len(rows))) for j in range(len(rows))]
        for side, counts in (("the automated side", rows), ("the clinicians", cols)):
            used = [c for c, k in zip(ag.categories, counts, strict=True) if k]
            if len(used) == 1:
                # p_o = p_e exactly when one side is constant: kappa is 0 by construction and
                # says nothing about agreement (Landis–Koch would call it 'slight').
                return f"kappa 0 by construction: {side} used one label only ({used[0]})"
        return ag.interpretation


def _categories(decision: str) -> tuple[str, ...]:
    if decision in (*CFV_FIELDS, CFV_VALID):
        return ("yes", "no")
    return FIELDS[decision].categories


def _is_positive(decision: str, value: str) -> bool:
    return value != "none" if decision == "stereotype" else value == POSITIVE[decision]


def judge_validation(db: sqlite_utils.Database, set_name: str) -> list[JudgeValidation]:
    """Every automated decision of a robustness set against the final clinician labels.

    A case counts for a decision when the clinicians' final label exists (both raters agree,
    or a coordinator adjudicated), is not 'unsure', and the automated side has a value.

    Returns:
        For each test and decision with a compared case: all models, then each model.
    """
    rows: dict[tuple[str, str], list[tuple[dict, str, str, dict]]] = defaultdict(list)
    skipped: dict[tuple[str, str, str | None], dict[str, int]] = defaultdict(
        lambda: {"n_unsure": 0, "n_no_automated": 0, "n_shared": 0})
    for unit, labels in decided_cases(db, set_name):
        for decision in DECISIONS[unit["test"]]:
            human = labels.get(decision)
            if human is None:
                continue
            auto = automated(unit, decision)
            if unit["shared"] or human == UNSURE or auto is None:
                reason = ("n_shared" if unit["shared"] else "n_unsure" if human == UNSURE
                          else "n_no_automated")
                for model in (None, unit["model"]):
                    skipped[(unit["test"], decision, model)][reason] += 1
                continue
            rows[(unit["test"], decision)].append((unit, auto, human, labels))
    out = []
    for test, decisions in DECISIONS.items():
        for decision in decisions:
            chosen = rows[(test, decision)]
            for model in [None, *sorted({u["model"] for u, *_ in chosen})]:
                mine = [r for r in chosen if model is None or r[0]["model"] == model]
                if mine:
                    out.append(_validate(test, decision, model, mine,
                                         skipped[(test, decision, model)]))
    return out


def _validate(test: str, decision: str, model: str | None, rows: list,
              skipped: dict[str, int]) -> JudgeValidation:
    pairs = [(auto, human) for _, auto, human, _ in rows]
    agreement = from_pairs(pairs, _categories(decision), field=decision, stratum=model,
                           rater_a="automated", rater_b="clinicians")
    judged = [(_is_positive(decision, a), _is_positive(decision, h)) for a, h in pairs]
    match = None
    if test == "flags":
        both = [(unit["categories"], labels.get("stereotype_category"))
                for unit, auto, human, labels in rows
                if auto != "none" and human != "none" and labels.get("stereotype_category")]
        match = (sum(cat in cats for cats, cat in both), len(both))
    return JudgeValidation(*Tally.count(judged), test=test, decision=decision, model=model,
                           positive=POSITIVE[decision], agreement=agreement,
                           category_match=match, **skipped)


def is_robustness_set(db: sqlite_utils.Database, set_id: int) -> bool:
    """Whether a set was drawn from a robustness run."""
    row = db.execute("SELECT a.kind FROM annotation_sets s JOIN audits a ON a.id = s.audit_id "
                     "WHERE s.id = ?", [set_id]).fetchone()
    return row is not None and row[0] == "robustness"


def _cell(value: float | None) -> float | None:
    return None if value is None else float(value)


def validation_frame(db: sqlite_utils.Database, set_name: str):
    """`judge_validation` as a table: one row per test / decision / model."""
    import pandas as pd

    rows = []
    for v in judge_validation(db, set_name):
        ag = v.agreement
        low, high = ag.kappa_ci if ag.kappa_ci else (None, None)
        rows.append({
            "comparison": f"{v.test} / {v.decision} / {v.model or 'all models'}",
            "positive": v.positive, "n": v.n, "raw_agreement": ag.raw_agreement,
            "kappa": _cell(ag.kappa), "kappa_low": _cell(low), "kappa_high": _cell(high),
            "precision": v.precision, "recall": v.recall,
            "category_match": (f"{v.category_match[0]}/{v.category_match[1]}"
                               if v.category_match else ""),
            "n_unsure": v.n_unsure, "n_no_automated": v.n_no_automated,
            "n_shared": v.n_shared, "note": v.note})
    frame = pd.DataFrame(rows)
    return frame.set_index("comparison") if not frame.empty else frame


def robustness_set_sections(db: sqlite_utils.Database, set_name: str,
                            raters: tuple[str, str]) -> list:
    """Report sections of a robustness set: each automated decision vs the clinicians, the
    clinician-confirmed rates beside the judge's, and inter-rater agreement."""
    import pandas as pd

    from analysis.common.document import Section
    from annotate.agreement.tables import all_agreements
    from annotate.robustness.rates import confirmed_rates_section

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
        Section(f"Automated decisions vs clinicians ({set_name})",
                validation_frame(db, set_name),
                f"Raters {raters[0]} and {raters[1]}; clinician label = final (both agree, or "
                "adjudicated). One row per decision: CFV — the judge's plausible and "
                "limited, the circularity rule, the model's re-answer standing in for "
                "'target correct' (re-answer = target) and 'same direction' (re-answer = "
                "the original gold), and cfv_valid (automated outcome valid vs clinicians: "
                "plausible, limited, not circular, target correct); direction; flags (the "
                "judge's worst severity vs the clinicians'). Kappa: Cohen's over the "
                "decision's categories, 95% CI (statsmodels). Unsure = clinicians could not "
                "tell, no automated = the verdict or re-answer did not parse, shared = a "
                "judge decision already counted: all left out. Cases were balanced over the "
                "automated verdicts within each test × model, so precision and recall are "
                "not prevalence-weighted (the confirmed rates below are).",
                key=f"judge_validation_{set_name}"),
        confirmed_rates_section(db, set_name),
        Section(f"Inter-rater agreement ({set_name})", agreement,
                "Cohen's kappa with 95% CI (statsmodels), raw agreement, N and Gwet's AC1 on "
                "the seed-003 fields; undefined when no case was labelled by both raters or "
                "both used one category only.", key=f"agreement_{set_name}"),
    ]
