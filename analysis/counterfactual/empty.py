"""Why a study's report has nothing to compare: when no targeted edit fired (a PubMedQA
abstract names no patient's sex, so a gender swap finds nothing to swap), the report opens
with a section that says so, per target, with the operator's own reason and what to try,
instead of empty tables under "models: none, items: 0" (issue 38)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import sqlite_utils

from analysis.common.document import Section
from analysis.counterfactual.definitions import StudyRole

TRY = ("What to try: a dataset whose questions describe a patient (the demo set's vignettes, "
       "MedQA or MedMCQA stems) for demographic targets; another target (`paw study "
       "--targets …`; `paw operators` lists what each edit changes and an example of it); or "
       "`paw audit`, whose question and chain edits fire on most clinical questions.")


def fired_by_target(db: sqlite_utils.Database, audit_id: int) -> pd.DataFrame:
    """Per targeted operator: the units planned, how many fired, and the commonest reason
    it did not (each unit's first sample)."""
    rows = list(db.query(
        "SELECT v.operator_id AS target, v.fired AS fired, v.reason AS reason, "
        "COUNT(*) AS n FROM jobs j JOIN variants v ON v.id = j.variant_id "
        "WHERE j.audit_id = ? AND j.role = ? AND j.sample_index = 0 "
        "GROUP BY v.operator_id, v.fired, v.reason ORDER BY v.operator_id, n DESC",
        [audit_id, str(StudyRole.TARGET)]))
    table: dict[str, dict[str, Any]] = {}
    for r in rows:
        entry = table.setdefault(r["target"], {"target": r["target"], "units": 0, "fired": 0,
                                              "why not fired": "–"})
        entry["units"] += r["n"]
        if r["fired"]:
            entry["fired"] += r["n"]
        elif entry["why not fired"] == "–":
            entry["why not fired"] = f"{r['reason'] or 'no reason recorded'} ({r['n']} units)"
    return pd.DataFrame(list(table.values()),
                        columns=["target", "units", "fired", "why not fired"])


def nothing_fired_section(db: sqlite_utils.Database, info: dict[str, Any],
                          units: pd.DataFrame) -> Section | None:
    """The report's first section when no targeted edit fired (None when some did)."""
    if len(units) and bool(units["fired"].any()):
        return None
    frame = fired_by_target(db, int(info["id"]))
    n_items = db.execute("SELECT COUNT(DISTINCT item_id) FROM jobs WHERE audit_id = ?",
                         [info["id"]]).fetchone()[0]
    targets = ", ".join(frame["target"]) or "none planned"
    note = (f"No targeted edit fired on any of the {n_items} item(s) of dataset "
            f"{info['dataset']!r} (targets: {targets}), so no prompt pair exists to compare "
            "and every table below is empty: a study compares each model's answers to the "
            "original and the edited question, and an edit that finds nothing to change "
            "(e.g. no gendered word for a gender swap) is recorded as not fired and left "
            f"out. {TRY}")
    return Section("Why this report is empty: no targeted edit fired", frame.set_index(
        "target"), note, "nothing_fired")
