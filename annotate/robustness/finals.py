"""A robustness set's cases read back: each case's unit and the clinicians' final labels.

Shared by the judge-vs-clinician comparison (`annotate.robustness.validation`) and the
clinician-confirmed rates (`annotate.robustness.rates`). A judge decision counts once: the
sampler never draws two units of one judge generation, and a set that holds two (drawn
before that rule) marks every case after the first as `shared`.
"""

from __future__ import annotations

import sqlite_utils

from annotate.adjudicate import final_labels
from annotate.codebook import FIELDS, robustness_test
from annotate.sets.annotation_set import get_set
from annotate.sets.robustness import verdict_units

CFV_VALID = "cfv_valid"
"""The derived CFV decision: valid (automated: outcome 'valid'; clinicians: plausible,
limited, not circular and the target correct)."""

UNSURE = "unsure"
"""A clinician's 'cannot tell': left out of the comparison and counted."""


def clinician_valid(labels: dict[str, str | None]) -> str | None:
    """The clinicians' CFV validity from their final labels: 'yes' when the change is
    plausible, limited, not circular and makes the target correct; None while one of the
    four is undecided or 'unsure'."""
    needed = [labels.get(f) for f in ("cfv_plausible", "cfv_limited", "cfv_circular",
                                      "cfv_target_correct")]
    if any(v is None or v == UNSURE for v in needed):
        return None
    plausible, limited, circular, target = needed
    return "yes" if (plausible, limited, circular, target) == ("yes", "yes", "no", "yes") \
        else "no"


def decided_cases(db: sqlite_utils.Database, set_name: str) -> list[tuple[dict, dict]]:
    """(unit, clinician finals by decision) for every case of a robustness set, each judge
    decision once (the first case of a decision by case id; later ones get `shared`)."""
    the_set = get_set(db, set_name)
    assert the_set.audit_id is not None  # a robustness set is drawn from its run
    finals = final_labels(db, set_name)
    units = {(u["test"], u["variant_id"], u["perturbed_id"]): u
             for u in verdict_units(db, the_set.audit_id)}
    seen: set[tuple[str, int]] = set()
    out = []
    for code, stratum, variant, perturbed in db.execute(
            "SELECT code, stratum, variant_id, perturbed_generation_id FROM annotation_cases "
            "WHERE set_id = ? ORDER BY id", [the_set.id]):
        test = robustness_test({"stratum": stratum})
        unit = units.get((test, variant, perturbed))
        if test is None or unit is None:
            continue
        labels: dict[str, str | None] = {
            name: (finals[(code, name)].value if (code, name) in finals else None)
            for name in FIELDS}
        if test == "cfv":
            labels[CFV_VALID] = clinician_valid(labels)
        shared = (test, unit["decision"]) in seen
        seen.add((test, unit["decision"]))
        out.append((dict(unit, shared=shared), labels))
    return out


def automated(unit: dict, decision: str) -> str | None:
    """The automated value of one decision of a unit (None: none available)."""
    if decision == CFV_VALID:
        outcome = unit["outcome"]
        return None if outcome is None else ("yes" if outcome == "valid" else "no")
    return unit["automated"].get(decision)


