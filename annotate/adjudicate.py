"""Adjudication: the queue of disagreements (lowest-agreement strata first) and final labels.

Adjudication never touches `label_events`: the coordinator's decision is a new
`adjudications` row (value, source, reason, by whom, when). The final label of a
(case, field) is its latest adjudication row; failing that, the raters' common value when
they agree ('unanimous'); failing that, it is pending.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlite_utils

from annotate.agreement.label_log import set_cases
from annotate.agreement.tables import agreements_from, rater_pair
from annotate.codebook import AGREEMENT_FIELDS, validate_value
from annotate.labels import all_current_labels, derive_labels, opened_events
from annotate.sets.annotation_set import get_set
from annotate.trust.identity import Person, require
from store.db import utcnow
from store.errors import UserError

ADJUDICATED_FIELDS: tuple[str, ...] = (*AGREEMENT_FIELDS, "gold_shift_alt")
"""Fields that get a final label (the note is free text and is not adjudicated)."""


@dataclass(frozen=True)
class Disagreement:
    """One (case, field) the two raters labelled differently (coordinator-facing)."""

    code: str
    field: str
    stratum: str
    rater_a: str
    value_a: str
    rater_b: str
    value_b: str
    stratum_kappa: float | None


@dataclass(frozen=True)
class FinalLabel:
    """The final value of one (case, field) and where it came from."""

    code: str
    field: str
    value: str | None
    source: str  # 'unanimous' | 'adjudicated'
    reason: str | None
    by: str | None
    at: str | None


@dataclass(frozen=True)
class RaterLabels:
    """One rater's current labels of one case, note included (coordinator-facing)."""

    name: str
    labels: dict[str, str]


def rater_labels(db: sqlite_utils.Database, set_name: str, code: str,
                 coordinator: Person) -> tuple[RaterLabels, RaterLabels] | None:
    """Both raters' current labels of case `code`, notes included, rater A first.

    What the adjudication screen shows beside the case. None when the set has no two
    raters yet.

    Raises:
        UserError: `coordinator` is not an authenticated coordinator.
        NotFound: no such set or case.
    """
    from annotate.sets.cases import case_row

    require(coordinator, "coordinator")
    the_set = get_set(db, set_name)
    pair = rater_pair(db, the_set.id, None)
    if pair is None:
        return None
    case_id = case_row(db, code)["id"]
    out = []
    for person_id, name in pair:
        rows = opened_events(db, "e.case_id = ? AND e.person_id = ?", [case_id, person_id])
        out.append(RaterLabels(name, derive_labels({r["field"]: r["value"] for r in rows})))
    return out[0], out[1]


def _labels_and_pair(db: sqlite_utils.Database, set_id: int):
    pair = rater_pair(db, set_id, None)
    if pair is None:
        return None, None
    return all_current_labels(db, set_id), pair


def _adjudication_rows(db: sqlite_utils.Database, set_id: int) -> dict[tuple[str, str], dict]:
    rows = db.query(
        "SELECT c.code, a.field, a.value, a.source, a.reason, a.created_at, p.name AS by_name "
        "FROM adjudications a JOIN annotation_cases c ON c.id = a.case_id "
        "LEFT JOIN people p ON p.id = a.person_id WHERE c.set_id = ? ORDER BY a.id", [set_id])
    return {(r["code"], r["field"]): r for r in rows}  # later rows win


def disagreements(db: sqlite_utils.Database, set_name: str,
                  include_adjudicated: bool = False) -> list[Disagreement]:
    """The adjudication queue: disagreements, lowest-kappa strata first.

    Within a stratum (full 'family|dataset|model' key), the queue follows the field order
    of the codebook, then the case code. Kappa is always defined in a stratum that has a
    disagreement (chance agreement 1 would need every label identical).

    Args:
        db: the store.
        set_name: the annotation set.
        include_adjudicated: also list (case, field) pairs already decided.
    """
    the_set = get_set(db, set_name)
    labels, pair = _labels_and_pair(db, the_set.id)
    if pair is None:
        return []
    (a_id, a_name), (b_id, b_name) = pair
    done = _adjudication_rows(db, the_set.id)
    found: list[tuple[str, str, str, str, str]] = []
    for case_id, code, stratum in db.execute(
            "SELECT id, code, stratum FROM annotation_cases WHERE set_id = ? ORDER BY code",
            [the_set.id]):
        la, lb = labels.get((case_id, a_id), {}), labels.get((case_id, b_id), {})
        for name in ADJUDICATED_FIELDS:
            va, vb = la.get(name), lb.get(name)
            if va is None or vb is None or va == vb:
                continue
            if not include_adjudicated and (code, name) in done:
                continue
            found.append((code, name, stratum, va, vb))
    # One pass over the labels already read gives every stratum's kappa (never one log
    # read per stratum).
    kappa_field = {name: "gold_shift" if name == "gold_shift_alt" else name
                   for name in ADJUDICATED_FIELDS}
    strata = sorted({stratum for _, _, stratum, _, _ in found})
    fields = tuple(dict.fromkeys(kappa_field[name] for _, name, _, _, _ in found))
    kappas = {(a.stratum, a.field): a.kappa for a in agreements_from(
        set_cases(db, the_set.id), labels, pair, strata, fields, (False,))}
    order = {name: i for i, name in enumerate(ADJUDICATED_FIELDS)}
    queue = [Disagreement(code, name, stratum, a_name, va, b_name, vb,
                          kappas[(stratum, kappa_field[name])])
             for code, name, stratum, va, vb in found]
    queue.sort(key=lambda d: (d.stratum_kappa if d.stratum_kappa is not None else -2.0,
                              d.stratum, order[d.field], d.code))
    return queue


def adjudicate(db: sqlite_utils.Database, coordinator: Person, code: str, field: str,
               value: str | None, reason: str) -> FinalLabel:
    """Record the coordinator's final value for one (case, field); raters' labels untouched.

    Args:
        db: the store.
        coordinator: an authenticated coordinator.
        code: case code.
        field: one of `ADJUDICATED_FIELDS`.
        value: the final value (a value of the field or its digit key).
        reason: why (required: the audit trail of the decision).

    Raises:
        UserError: not a coordinator, unknown case/field, bad value, or no reason.
    """
    from annotate.sets.cases import case_row

    require(coordinator, "coordinator")
    if field not in ADJUDICATED_FIELDS:
        raise UserError(f"field: expected one of {', '.join(ADJUDICATED_FIELDS)}, got {field!r}")
    case = case_row(db, code)
    clean = validate_value(field, value, options=case["options"], gold=case["gold"])
    if not reason or not reason.strip():
        raise UserError("reason: expected a few words on why, got nothing")
    from annotate.trust.record import append_row
    from store.db import transaction

    now = utcnow()
    with transaction(db) as conn:  # the row and its signed record entry, or neither
        cursor = conn.execute(
            "INSERT INTO adjudications (case_id, field, value, source, reason, person_id, "
            "created_at) VALUES (?, ?, ?, 'adjudicated', ?, ?, ?)",
            [case["id"], field, clean, reason.strip(), coordinator.id, now])
        assert cursor.lastrowid is not None  # set by every INSERT
        append_row(conn, "adjudication", "adjudications", cursor.lastrowid, coordinator)
    return FinalLabel(code, field, clean, "adjudicated", reason.strip(), coordinator.name, now)


def final_labels(db: sqlite_utils.Database, set_name: str) -> dict[tuple[str, str], FinalLabel]:
    """Final label of every decided (case, field): adjudicated, else unanimous.

    Returns:
        (code, field) -> FinalLabel; pending pairs (disagreement not yet adjudicated, or
        not labelled by both raters) are absent.
    """
    the_set = get_set(db, set_name)
    out: dict[tuple[str, str], FinalLabel] = {}
    labels, pair = _labels_and_pair(db, the_set.id)
    if pair is not None:
        (a_id, _), (b_id, _) = pair
        for case_id, code in db.execute(
                "SELECT id, code FROM annotation_cases WHERE set_id = ?", [the_set.id]):
            la, lb = labels.get((case_id, a_id), {}), labels.get((case_id, b_id), {})
            for name in ADJUDICATED_FIELDS:
                if la.get(name) is not None and la.get(name) == lb.get(name):
                    out[(code, name)] = FinalLabel(code, name, la[name], "unanimous", None,
                                                   None, None)
    for key, row in _adjudication_rows(db, the_set.id).items():
        out[key] = FinalLabel(key[0], key[1], row["value"], row["source"], row["reason"],
                              row["by_name"], row["created_at"])
    return out


def record_unanimous(db: sqlite_utils.Database, coordinator: Person, set_name: str) -> int:
    """Freeze every current unanimous (case, field) as an 'unanimous' adjudications row.

    Run when labelling is closed, so later relabels cannot silently change a final label.
    Pairs that already have an adjudications row are left alone.

    Returns:
        How many rows were written.
    """
    from annotate.trust.record import append_row
    from store.db import transaction

    require(coordinator, "coordinator")
    the_set = get_set(db, set_name)
    existing = _adjudication_rows(db, the_set.id)
    ids = {code: cid for cid, code in db.execute(
        "SELECT id, code FROM annotation_cases WHERE set_id = ?", [the_set.id])}
    now, written = utcnow(), 0
    with transaction(db) as conn:
        for (code, name), final in final_labels(db, set_name).items():
            if final.source != "unanimous" or (code, name) in existing:
                continue
            cursor = conn.execute(
                "INSERT INTO adjudications (case_id, field, value, source, reason, person_id, "
                "created_at) VALUES (?, ?, ?, 'unanimous', 'both raters agreed', ?, ?)",
                [ids[code], name, final.value, coordinator.id, now])
            assert cursor.lastrowid is not None  # set by every INSERT
            append_row(conn, "adjudication", "adjudications", cursor.lastrowid, coordinator)
            written += 1
    return written
