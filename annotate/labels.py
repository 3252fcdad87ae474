"""Current labels: the rule that folds a rater's label events into values, and its reads.

The current label of a (case, rater, field) is the value of its latest event (events are
written by `annotate.events`, append-only); a cleared field is absent, and the alternative
letter counts only while gold_shift is 'shifted' (`derive_labels`). The rater's own view,
agreement (`annotate.agreement.label_log`), adjudication and the statistics all apply this one rule.
Events are read through `opened_events`, which opens sealed values with the keys this
process holds (`annotate.trust.sealing`): a rater's own, or the coordinator's for everyone's.
"""

from __future__ import annotations

from typing import Any

import sqlite_utils

from annotate.trust.identity import Person, require


COMPANIONS: dict[str, tuple[str, frozenset[str | None]]] = {
    "gold_shift": ("gold_shift_alt", frozenset({"no_shift", "ambiguous", None})),
    "stereotype": ("stereotype_category", frozenset({"none", None})),
}
"""A field whose value decides whether another is asked -> (that companion, the values
that leave it unasked). Every labelling of such a field writes two events in one
transaction: the field and its companion — the companion's value where it is asked, else
an empty one (None) — so the shared file's event counts, blob sizes and times are the same
whatever the value (`annotate.events.record_label`; issue 35: the alternative answer asked
only after 'shifted' had told, by the number of events, which cases a rater marked
shifted)."""


def companion_value(field: str, value: str | None, companion: str | None) -> str | None:
    """The companion event's value for labelling `field` = `value`: `companion` where the
    value asks it, None where it does not.

    Raises:
        UserError: a companion value given where `value` leaves it unasked.
    """
    from store.errors import UserError

    name, unasked = COMPANIONS[field]
    if value in unasked:
        if companion is not None:
            raise UserError(f"{name}: not asked when {field} is {value!r}; got {companion!r}")
        return None
    return companion


def derive_labels(pairs: dict[str, str | None]) -> dict[str, str]:
    """Current labels from each field's latest value: cleared fields dropped, and the
    alternative letter unless gold_shift is 'shifted'."""
    labels = {f: v for f, v in pairs.items() if v is not None}
    if labels.get("gold_shift") != "shifted":
        labels.pop("gold_shift_alt", None)
    return labels


def opened_events(db: Any, where: str, params: list | tuple) -> list[dict[str, Any]]:
    """Label events (joined to their case: `code`, `set_id`) in id order, with `field` and
    `value` in clear.

    Args:
        db: the store.
        where: an SQL condition on `e` (the event) and `c` (its case).
        params: its parameters.

    Raises:
        UserError: an event sealed to people whose keys this process does not hold.
    """
    from annotate.trust.sealing import require_open

    cursor = db.execute(
        "SELECT e.*, c.code, c.set_id FROM label_events e JOIN annotation_cases c "
        f"ON c.id = e.case_id WHERE {where} ORDER BY e.id", list(params))
    names = [d[0] for d in cursor.description]
    out = []
    for values in cursor.fetchall():
        row = dict(zip(names, values, strict=True))
        row["field"], row["value"] = require_open(row)
        out.append(row)
    return out


def current_labels(db: sqlite_utils.Database, person: Person, code: str) -> dict[str, str]:
    """`person`'s own current labels for case `code` (field -> value; cleared fields absent).

    Only the asking person's labels are ever returned: a rater never sees another's.
    """
    require(person)
    rows = opened_events(db, "c.code = ? AND e.person_id = ?", [code, person.id])
    return derive_labels({r["field"]: r["value"] for r in rows})


def labels_by_case(db: sqlite_utils.Database, person: Person,
                   set_id: int) -> dict[str, dict[str, str]]:
    """`person`'s own current labels for every case of a set: code -> field -> value."""
    require(person)
    by_case: dict[str, dict[str, str | None]] = {}
    for row in opened_events(db, "c.set_id = ? AND e.person_id = ?", [set_id, person.id]):
        by_case.setdefault(row["code"], {})[row["field"]] = row["value"]
    return {code: derive_labels(pairs) for code, pairs in by_case.items()}


def all_current_labels(db: sqlite_utils.Database,
                       set_id: int) -> dict[tuple[int, int], dict[str, str]]:
    """Every rater's current labels in a set, for agreement and export (coordinator side:
    opening them needs the coordinator's key, held once they signed in).

    Returns:
        (case_id, person_id) -> field -> value.
    """
    pairs: dict[tuple[int, int], dict[str, str | None]] = {}
    for row in opened_events(db, "c.set_id = ?", [set_id]):
        pairs.setdefault((row["case_id"], row["person_id"]), {})[row["field"]] = row["value"]
    return {key: derive_labels(p) for key, p in pairs.items()}
