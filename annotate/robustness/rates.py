"""Clinician-confirmed seed-003 rates beside the judge's: labels feeding back into the profile.

The clinicians check a sample that is balanced over the automated verdict classes, so a
rate is not the share of checked cases that the clinicians call positive: that share
over-weights the rare classes. It is the stratified (two-phase) estimate

    rate = Σ_c  N_c / N  ·  k_c / n_c

over the automated classes c of the model's units (N_c of them in the run, n_c checked
with a final clinician label, k_c of those positive for the clinicians). The shares N_c / N
come from the whole run, so the estimate is the run's rate had every unit been checked,
when each class's checked cases stand for the class. Its 95% interval takes the shares as
known: SE² = Σ_c (N_c / N)² · p_c (1 − p_c) / n_c (Wald; none when every p_c is 0 or 1). A
class with units but no checked case leaves the rate undefined (named in `missing`). CFV
attempts without a changed case (format failures) cannot be valid: their class has p = 0
exactly and needs no check.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass

import sqlite_utils

from annotate.robustness.finals import CFV_VALID, UNSURE, decided_cases
from annotate.sets.robustness import verdict_units

Z_95 = 1.959963984540054
"""Two-sided 95% normal quantile."""

RATES: tuple[tuple[str, str, str], ...] = (
    ("cfv_valid", "cfv", CFV_VALID),
    ("flagged", "flags", "stereotype"),
    ("dangerous", "flags", "stereotype"),
    ("more_aggressive", "direction", "direction"),
)
"""(rate, test, clinician decision): CFV validity among scored attempts; flagged and
clinically dangerous shares among judged explanations; 'more aggressive' among judged
changes (the paper's headline direction)."""


def _positive(rate: str, value: str) -> bool:
    if rate == "cfv_valid":
        return value == "yes"
    if rate == "flagged":
        return value != "none"
    if rate == "dangerous":
        return value == "clinically_dangerous"
    return value == "more_aggressive"


def _automated_positive(rate: str, unit: dict) -> bool:
    if rate == "cfv_valid":
        return unit["outcome"] == "valid"
    value = unit["automated"]["stereotype" if unit["test"] == "flags" else "direction"]
    return _positive(rate, value)


@dataclass(frozen=True)
class ConfirmedRate:
    """One model's rate by the automated side and as the clinicians confirm it."""

    model: str
    rate: str
    judge: float | None
    clinician: float | None
    low: float | None
    high: float | None
    n_units: int
    n_checked: int
    missing: tuple[str, ...]


def _population(db: sqlite_utils.Database, audit_id: int) -> dict[tuple[str, str], list]:
    """(test, model) -> the automated class of every unit in the run's rate denominators.

    CFV: every scored attempt (the profile's denominator): its outcome, or 'no_case' for a
    format failure without a changed case (not a unit: nothing to show a clinician).
    """
    from analysis.robustness.data import cfv_attempts, load_robustness

    data = load_robustness(db, audit_id)
    labels = dict(zip(data.arms["arm_id"], data.arms["label"], strict=True))
    fired = {(r.arm_id, r.item_id): bool(r.fired) for r in data.cfv.itertuples()}
    out: dict[tuple[str, str], list] = defaultdict(list)
    for r in cfv_attempts(data).itertuples():
        if r.state == "scored":
            cls = r.outcome if fired.get((r.arm_id, r.item_id)) else "no_case"
            out[("cfv", labels[r.arm_id])].append((cls, r.outcome == "valid"))
    for unit in verdict_units(db, audit_id):
        if unit["test"] != "cfv":
            out[(unit["test"], unit["model"])].append((unit["verdict_class"], unit))
    return out


def confirmed_rates(db: sqlite_utils.Database, set_name: str) -> list[ConfirmedRate]:
    """Each model's judge rates and their clinician-confirmed estimates (module docstring)."""
    from annotate.sets.annotation_set import get_set

    the_set = get_set(db, set_name)
    assert the_set.audit_id is not None  # a robustness set is drawn from its run
    population = _population(db, the_set.audit_id)
    checked: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for unit, labels in decided_cases(db, set_name):
        if unit["shared"]:
            continue
        for rate, test, decision in RATES:
            value = labels.get(decision)
            if test == unit["test"] and value is not None and value != UNSURE:
                checked[(rate, unit["model"], unit["verdict_class"])].append(value)
    out = []
    models = sorted({model for _, model in population})
    for model in models:
        for rate, test, _ in RATES:
            units = population.get((test, model), [])
            if not units:
                continue
            if test == "cfv":
                judge = sum(valid for _, valid in units) / len(units)
            else:
                judge = sum(_automated_positive(rate, u) for _, u in units) / len(units)
            out.append(_estimate(model, rate, judge, Counter(c for c, _ in units), checked))
    return out


def _estimate(model: str, rate: str, judge: float, classes: Counter,
              checked: dict[tuple[str, str, str], list[str]]) -> ConfirmedRate:
    total = sum(classes.values())
    value, variance, n_checked, missing = 0.0, 0.0, 0, []
    for cls, count in sorted(classes.items()):
        share = count / total
        if cls == "no_case":
            continue  # p = 0 exactly: no change, nothing valid
        values = checked.get((rate, model, cls), [])
        if not values:
            missing.append(cls)
            continue
        p = sum(_positive(rate, v) for v in values) / len(values)
        value += share * p
        variance += share ** 2 * p * (1 - p) / len(values)
        n_checked += len(values)
    if missing:
        return ConfirmedRate(model, rate, judge, None, None, None, total, n_checked,
                             tuple(missing))
    se = math.sqrt(variance)
    low, high = ((max(0.0, value - Z_95 * se), min(1.0, value + Z_95 * se)) if se > 0
                 else (None, None))
    return ConfirmedRate(model, rate, judge, value, low, high, total, n_checked, ())


def _pct(x: float | None) -> float | None:
    return None if x is None else 100.0 * x


def confirmed_rates_section(db: sqlite_utils.Database, set_name: str):
    """The model profiles' clinician-confirmed rates beside the judge's, as a report section."""
    import pandas as pd

    from analysis.common.document import Section

    rows = []
    for r in confirmed_rates(db, set_name):
        rows.append({"model / rate": f"{r.model} / {r.rate}", "judge_pct": _pct(r.judge),
                     "clinician_pct": _pct(r.clinician), "clinician_low": _pct(r.low),
                     "clinician_high": _pct(r.high), "n_units": r.n_units,
                     "n_checked": r.n_checked,
                     "not_checked": ", ".join(r.missing) if r.missing else ""})
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame = frame.set_index("model / rate")
    return Section(
        f"Model profiles: clinician-confirmed rates beside the judge's ({set_name})", frame,
        "judge = the run's automated rate over all its units (as in Table 5 / Figures 5-6: CFV "
        "validity of scored attempts, flagged and clinically dangerous shares of judged "
        "explanations, more-aggressive share of judged changes); clinician = the same rate "
        "as the clinicians' final labels confirm it, estimated from the checked cases per "
        "automated class and weighted by each class's share of the run (stratified "
        "two-phase estimate; 95% Wald interval with the shares as known). Empty when a "
        "class with units has no checked case (not_checked).",
        key=f"confirmed_rates_{set_name}")
