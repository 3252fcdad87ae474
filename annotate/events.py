"""Append-only label events: one transaction per keypress, relabel supersedes, hash-chained.

Nothing here updates or deletes a `label_events` row. Each event's field and value are
sealed to the rater and the set's coordinator (`annotate.trust.sealing`: the row holds
field '*', value NULL and `sealed_json`); events from before m009 are in clear. The
current label of a (case, rater, field) is the value of its latest event; a relabel is a
new event whose `supersedes_id` names the one it replaces; an undo is a new event
(`undoes_id` set) restoring the value before the undone event. Each event's `hash` covers
its content and the previous event's hash (one global chain, ordered by id), so
`annotate.verification.verify` can show that no event was altered or removed outside the
app. Each event is also entered in the signed record (`annotate/trust/record.py`) in the
same transaction, signed with the rater's key, so an event nobody's key signed is
detected as forged. Only the two raters named for a set label it. Current labels are read
from these events by `annotate.labels`.
"""

from __future__ import annotations

import hashlib
import os
import socket
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from annotate.codebook import (
    CODEBOOK_VERSION,
    MAX_TIME_ON_ITEM_MS,
    applicable_fields,
    validate_value,
)
from annotate.codebook import field as field_spec
from annotate.labels import COMPANIONS, companion_value, current_labels
from annotate.sets.raters import require_named_rater
from annotate.trust.identity import Person, require
from annotate.trust.record import rows
from store.db import dumps, transaction, utcnow
from store.errors import UserError

GENESIS_HASH = "0" * 64
"""`prev_hash` of the first event in a store."""

HASHED_COLUMNS: tuple[str, ...] = (
    "id", "case_id", "person_id", "session_id", "field", "value", "supersedes_id",
    "undoes_id", "time_on_item_ms", "app_version", "codebook_version", "created_at",
    "prev_hash",
)
"""Columns an event's hash covers (everything but the hash itself)."""


def app_version(app: str = "paw") -> str:
    """'<app> <installed package version>' stamped on sessions and events."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{app} {version('paw-workbench')}"
    except PackageNotFoundError:  # running from a source tree that was never installed
        return f"{app} 0+unknown"


def event_hash(row: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of an event's `HASHED_COLUMNS`, and of its sealed
    form when it has one (older events' hashes stay as they were)."""
    content = {c: row.get(c) for c in HASHED_COLUMNS}
    if row.get("sealed_json") is not None:
        content["sealed_json"] = row["sealed_json"]
    return hashlib.sha256(dumps(content).encode()).hexdigest()


def recipients(conn: Any, set_id: int, rater_id: int) -> dict[int, bytes]:
    """person id -> receiving key of the rater and the set's coordinator, each checked
    against the signed record first (a key swapped in by hand would receive the labels).

    Raises:
        UserError: either has no receiving key yet, or the record does not vouch for them.
    """
    from annotate.trust.record import check_person

    coordinator = conn.execute("SELECT raters_named_by FROM annotation_sets WHERE id = ?",
                               [set_id]).fetchone()
    out: dict[int, bytes] = {}
    for pid in (rater_id, coordinator[0] if coordinator else None):
        row = conn.execute("SELECT name, box_public_key FROM people WHERE id = ?",
                           [pid]).fetchone() if pid is not None else None
        if pid is None or row is None:
            raise UserError(f"set {set_id}: no coordinator to seal its labels to")
        if row[1] is None:
            raise UserError(f"{row[0]}: has no key for sealed labels yet (registered before "
                            f"PAW sealed labels): {row[0]} signs in once on this store, e.g. "
                            "`paw annotate --rater NAME` or `paw coordinate --coordinator "
                            "NAME`")
        problem = check_person(conn, int(pid))
        if problem:
            raise UserError(f"{row[0]}: labels are not sealed to them: {problem}")
        out[int(pid)] = bytes(row[1])
    return out


def own_events(conn: Any, person_id: int, case_id: int) -> list[dict[str, Any]]:
    """One rater's events on one case in id order, field and value opened (their own: the
    rater's process holds their key)."""
    from annotate.trust.sealing import require_open

    out = []
    for row in rows(conn, "SELECT * FROM label_events WHERE case_id = ? AND person_id = ? "
                    "ORDER BY id", [case_id, person_id]):
        row["field"], row["value"] = require_open(row)
        out.append(row)
    return out


@dataclass(frozen=True)
class Session:
    """A rater's labelling session (one app launch or one `paw label` call)."""

    id: int
    person_id: int
    set_id: int
    set_name: str
    app_version: str
    started_at: str


@dataclass(frozen=True)
class LabelEvent:
    """One stored label event (see the module docstring)."""

    id: int
    code: str
    case_id: int
    person_id: int
    session_id: int | None
    field: str
    value: str | None
    supersedes_id: int | None
    undoes_id: int | None
    time_on_item_ms: int | None
    app_version: str
    codebook_version: str
    created_at: str
    prev_hash: str
    hash: str


def start_session(db: sqlite_utils.Database, person: Person, set_name: str,
                  app: str = "paw") -> Session:
    """Open a labelling session for `person` on a set (durable at once).

    Args:
        db: the store.
        person: an authenticated rater (coordinators may open one too, to browse).
        set_name: the annotation set.
        app: the app name stamped with the version, e.g. 'paw-tui' or 'paw-label'.
    """
    from annotate.sets.annotation_set import get_set

    require(person)
    the_set = get_set(db, set_name)
    version, started = app_version(app), utcnow()
    cursor = db.execute(
        "INSERT INTO annotation_sessions (person_id, set_id, started_at, app_version, host, pid) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [person.id, the_set.id, started, version, socket.gethostname(), os.getpid()])
    assert cursor.lastrowid is not None  # set by every INSERT
    return Session(cursor.lastrowid, person.id, the_set.id, the_set.name, version, started)


_EVENT_SQL = (
    "SELECT e.*, c.code FROM label_events e JOIN annotation_cases c ON c.id = e.case_id "
)


def _event(row: dict) -> LabelEvent:
    from annotate.trust.sealing import SEALED_FIELD, require_open

    field_name, value = (require_open(row) if row["field"] == SEALED_FIELD
                         else (row["field"], row["value"]))
    return LabelEvent(**{**{k: row[k] for k in LabelEvent.__dataclass_fields__},
                         "field": field_name, "value": value})


def append_event(conn: Any, values: dict[str, Any], signer: Person, set_id: int, *,
                 kind: str = "label", sealed_extra: dict[str, str] | None = None,
                 offline: dict[str, Any] | None = None) -> dict[str, Any]:
    """Insert one event, its field and value sealed, inside an open BEGIN IMMEDIATE
    transaction, with its signed record entry; returns the row with the field and value
    in clear.

    Args:
        conn: the connection inside the transaction.
        values: the event's columns (field and value in clear).
        signer: who signs the record entry: the rater (kind 'label'), or the coordinator
            merging a rater file (kind 'merged_label', whose entry also carries the
            rater's own signed event, `offline`).
        set_id: the case's set (its coordinator receives the sealed value).
        kind: the record entry's kind.
        sealed_extra: more to seal with the value (a merged event's commitment salt).
        offline: the rater file's signed event, for a 'merged_label' entry.
    """
    from annotate.trust import record
    from annotate.trust.sealing import SEALED_FIELD, seal

    last = conn.execute("SELECT id, hash FROM label_events ORDER BY id DESC LIMIT 1").fetchone()
    row = dict(values)
    row["id"] = (last[0] + 1) if last else 1
    row["prev_hash"] = last[1] if last else GENESIS_HASH
    clear = (row["field"], row["value"])
    row["sealed_json"] = seal(*clear, event_id=row["id"], case_id=row["case_id"],
                              person_id=row["person_id"],
                              recipients=recipients(conn, set_id, row["person_id"]),
                              extra=sealed_extra)
    row["field"], row["value"] = SEALED_FIELD, None
    row["hash"] = event_hash(row)
    columns = [*HASHED_COLUMNS, "sealed_json", "hash"]
    conn.execute(f"INSERT INTO label_events ({', '.join(columns)}) VALUES "
                 f"({', '.join('?' * len(columns))})", [row[c] for c in columns])
    content = record.row_content(conn, "label_events", row["id"]) or {}
    if offline is not None:
        content = {"row": content, "offline": offline}
    record.append(conn, kind, "label_events", row["id"], content, signer)
    row["field"], row["value"] = clear
    return row


def _check_session(db: sqlite_utils.Database, person: Person, session: Session) -> None:
    row = db.execute("SELECT person_id, set_id FROM annotation_sessions WHERE id = ?",
                     [session.id]).fetchone()
    if row is None or row[0] != person.id:
        raise UserError(f"session {session.id}: not a session of {person.name}")


def record_label(db: sqlite_utils.Database, person: Person, session: Session, code: str,
                 field: str, value: str | None, time_on_item_ms: int | None = None,
                 companion: str | None = None) -> LabelEvent:
    """Validate and append one label event, committed before this returns.

    Args:
        db: the store.
        person: the authenticated rater labelling (the event is always theirs).
        session: the rater's own session from `start_session`.
        code: case code.
        field: a codebook field that applies to the case.
        value: a value of the field or its digit key; None clears the label.
        time_on_item_ms: time the rater has spent on this case so far.
        companion: for a field of `annotate.labels.COMPANIONS` (gold shift, stereotype),
            its companion's value where `value` asks it (the new answer, the category);
            the companion event is written in the same transaction, empty where not asked
            (or not given yet: `paw label` may set it later).

    Returns:
        The stored event (its `supersedes_id` names the label it replaced, if any).

    Raises:
        UserError: unauthenticated person, a coordinator, a foreign session, a case outside
            the session's set, a field that does not apply, or a value the field forbids.
    """
    from annotate.sets.cases import case_row
    require(person, "rater")
    _check_session(db, person, session)
    case = case_row(db, code)
    if case["set_id"] != session.set_id:
        raise UserError(f"case {code}: not in set {session.set_name!r}")
    require_named_rater(db, case["set_id"], person)
    field_name = field_spec(field).name
    mine = current_labels(db, person, code)
    if value is None:  # clearing a stale label is always allowed where the field can apply
        mine = {**mine, "gold_shift": "shifted"}
    if field_name not in applicable_fields(case, mine):
        why = ("label gold_shift 'shifted' first" if field_name == "gold_shift_alt"
               else "it does not apply to this case")
        raise UserError(f"{field_name}: not asked for case {code} ({why})")
    clean = validate_value(field_name, value, options=case["options"], gold=case["gold"])
    if time_on_item_ms is not None and not 0 <= time_on_item_ms <= MAX_TIME_ON_ITEM_MS:
        raise UserError(f"time_on_item_ms: expected 0 to {MAX_TIME_ON_ITEM_MS} ms (a day), "
                        f"got {time_on_item_ms}")
    writes = [(field_name, clean)]
    if field_name in COMPANIONS:  # the companion too: the same shape whatever the value
        name = COMPANIONS[field_name][0]
        other = companion_value(field_name, clean, companion)
        if other is not None:
            other = validate_value(name, other, options=case["options"], gold=case["gold"])
        writes.append((name, other))
    elif companion is not None:
        raise UserError(f"{field_name}: has no companion field; got {companion!r}")
    now = utcnow()
    with transaction(db) as conn:
        own = own_events(conn, person.id, case["id"])
        rows = []
        for name, clean_value in writes:
            previous = [e["id"] for e in own if e["field"] == name]
            rows.append(append_event(conn, {
                "case_id": case["id"], "person_id": person.id, "session_id": session.id,
                "field": name, "value": clean_value,
                "supersedes_id": previous[-1] if previous else None, "undoes_id": None,
                "time_on_item_ms": time_on_item_ms, "app_version": session.app_version,
                "codebook_version": CODEBOOK_VERSION, "created_at": now,
            }, person, case["set_id"]))
    return _event({**rows[0], "code": code})


def undo_last(db: sqlite_utils.Database, person: Person, session: Session) -> LabelEvent | None:
    """Undo `person`'s latest not-yet-undone label of this session, by appending an event.

    The new event supersedes the current label of that (case, field) and restores the
    value the undone event had replaced (None if it was the first). Repeated calls step
    further back. Nothing is deleted.

    Returns:
        The undo event, or None when there is nothing left to undo in this session.
    """
    require(person, "rater")
    _check_session(db, person, session)
    require_named_rater(db, session.set_id, person)
    with transaction(db) as conn:
        target = conn.execute(
            "SELECT e.id, e.case_id, e.field, e.supersedes_id FROM label_events e "
            "WHERE e.session_id = ? AND e.person_id = ? AND e.undoes_id IS NULL "
            "AND NOT EXISTS (SELECT 1 FROM label_events u WHERE u.undoes_id = e.id) "
            "ORDER BY e.id DESC LIMIT 1", [session.id, person.id]).fetchone()
        if target is None:
            return None
        target_id, case_id, _, _ = target
        mine = {e["id"]: e for e in own_events(conn, person.id, case_id)}
        targets = [target_id]
        before = mine.get(target_id - 1)
        if before is not None and before["session_id"] == session.id and \
                COMPANIONS.get(before["field"], ("",))[0] == mine[target_id]["field"]:
            targets.insert(0, target_id - 1)  # written with its field: undone with it
        now = utcnow()
        rows = []
        for undone in targets:
            field_name, replaced = mine[undone]["field"], mine[undone]["supersedes_id"]
            restored = mine[replaced]["value"] if replaced is not None else None
            current = [i for i, e in mine.items() if e["field"] == field_name][-1]
            rows.append(append_event(conn, {
                "case_id": case_id, "person_id": person.id, "session_id": session.id,
                "field": field_name, "value": restored, "supersedes_id": current,
                "undoes_id": undone, "time_on_item_ms": None,
                "app_version": session.app_version, "codebook_version": CODEBOOK_VERSION,
                "created_at": now,
            }, person, session.set_id))
        code = conn.execute("SELECT code FROM annotation_cases WHERE id = ?",
                            [case_id]).fetchone()[0]
    return _event({**rows[0], "code": code})


def events_of(db: sqlite_utils.Database, *, person_id: int | None = None,
              code: str | None = None) -> list[LabelEvent]:
    """Stored events in id order, optionally only one person's and/or one case's."""
    sql = _EVENT_SQL + "WHERE 1"
    params: list[int | str] = []
    if person_id is not None:
        sql += " AND e.person_id = ?"
        params.append(person_id)
    if code is not None:
        sql += " AND c.code = ?"
        params.append(code)
    return [_event(r) for r in db.query(sql + " ORDER BY e.id", params)]
