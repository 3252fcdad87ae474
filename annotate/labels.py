"""Current labels: the rule that folds a rater's label events into values, and its reads.

The current label of a (case, rater, field) is the value of its latest event (events are
written by `annotate.events`, append-only); a cleared field is absent, and the alternative
letter counts only while gold_shift is 'shifted' (`derive_labels`). The rater's own view,
agreement (`annotate.label_log`), adjudication and the statistics all apply this one rule.
"""

from __future__ import annotations

import sqlite_utils

from annotate.identity import Person, require


def derive_labels(pairs: dict[str, str | None]) -> dict[str, str]:
    """Current labels from each field's latest value: cleared fields dropped, and the
    alternative letter unless gold_shift is 'shifted'."""
    labels = {f: v for f, v in pairs.items() if v is not None}
    if labels.get("gold_shift") != "shifted":
        labels.pop("gold_shift_alt", None)
    return labels


def current_labels(db: sqlite_utils.Database, person: Person, code: str) -> dict[str, str]:
    """`person`'s own current labels for case `code` (field -> value; cleared fields absent).

    Only the asking person's labels are ever returned: a rater never sees another's.
    """
    require(person)
    rows = db.execute(
        "SELECT e.field, e.value FROM label_events e JOIN annotation_cases c ON c.id = e.case_id "
        "WHERE c.code = ? AND e.person_id = ? ORDER BY e.id", [code, person.id]).fetchall()
    return derive_labels({f: v for f, v in rows})


def labels_by_case(db: sqlite_utils.Database, person: Person,
                   set_id: int) -> dict[str, dict[str, str]]:
    """`person`'s own current labels for every case of a set: code -> field -> value."""
    require(person)
    by_case: dict[str, dict[str, str | None]] = {}
    for code, field_name, value in db.execute(
            "SELECT c.code, e.field, e.value FROM label_events e JOIN annotation_cases c "
            "ON c.id = e.case_id WHERE c.set_id = ? AND e.person_id = ? ORDER BY e.id",
            [set_id, person.id]):
        by_case.setdefault(code, {})[field_name] = value
    return {code: derive_labels(pairs) for code, pairs in by_case.items()}


def all_current_labels(db: sqlite_utils.Database,
                       set_id: int) -> dict[tuple[int, int], dict[str, str]]:
    """Every rater's current labels in a set, for agreement and export (coordinator side).

    Returns:
        (case_id, person_id) -> field -> value.
    """
    pairs: dict[tuple[int, int], dict[str, str | None]] = {}
    for case_id, person_id, field_name, value in db.execute(
            "SELECT e.case_id, e.person_id, e.field, e.value FROM label_events e "
            "JOIN annotation_cases c ON c.id = e.case_id WHERE c.set_id = ? ORDER BY e.id",
            [set_id]):
        pairs.setdefault((case_id, person_id), {})[field_name] = value
    return {key: derive_labels(p) for key, p in pairs.items()}
