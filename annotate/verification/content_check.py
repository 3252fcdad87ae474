"""`paw verify` checks what each label event says, not only who signed it.

A rater holds her own signing key, so she can sign events PAW's screens would refuse: a
value the codebook does not have (`banana`), a field that does not exist or that this
case does not ask (harm on a case that is not a flip), a conditional field where it does
not apply, a negative time on the case, another rater's session, a time stamp from before
the set existed. The signature proves who wrote them; this module proves they are events
PAW could have written. Each event is replayed in id order against the codebook
(`annotate.codebook`) and its case, with the rater's labels as they stood just before it:

- the field exists and is asked for the case given those labels (`applicable_fields`;
  clearing a label is allowed wherever the field can apply, as `record_label` allows);
- the value is one the field allows for the case (`validate_value`, in its stored form);
- `supersedes_id` names the rater's previous event on that (case, field); an undo names an
  event of the same rater, case and field not undone before, and restores what it replaced;
- the session is one of this rater's, on this case's set; the time on item is not negative
  (sealed with the value in a live label: checked where it opens);
- times: not before the set was sealed, not in the future (`CLOCK_SKEW_S`), never earlier
  than the same rater's previous event. Time stamps are the client's clock, so two
  weaker signs are *flagged* (warnings, not failures): an event stamped more than
  `CLOCK_SKEW_S` before the event committed just before it (event ids follow commit order
  under the write lock), and a gap of more than `FAR_GAP_S` from the rater's previous event.

Sealed values (`annotate.trust.sealing`) are checked only where this process holds a key that
opens them (the coordinator's signed-in session); the others are counted as unchecked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from annotate.codebook import FIELDS, applicable_fields, validate_value
from annotate.labels import derive_labels
from store.db import loads
from store.errors import UserError

CLOCK_SKEW_S = 600
"""Seconds a client's clock may be off: ahead of now, or behind the previous commit."""

FAR_GAP_S = 30 * 24 * 3600
"""A rater's events more than this far apart (30 days) are flagged."""


@dataclass(frozen=True)
class Finding:
    """One content or time finding about a label event.

    Attributes:
        event_id: the event.
        kind: 'content' (not an event PAW could write) or 'time'.
        message: what is wrong (names the event and case; coordinator-facing).
        person_id: the event's rater.
        warning: True for a flag that does not fail verification.
    """

    event_id: int
    kind: str
    message: str
    person_id: int | None
    warning: bool = False


@dataclass(frozen=True)
class ContentReport:
    """Result of `check_events`."""

    findings: tuple[Finding, ...]
    n_checked: int
    n_unopened: int
    """Sealed events this process could not open (their content is not checked)."""


_CASES_SQL = """
SELECT c.id, c.code, c.set_id, c.ask_harm, c.ask_chain_registration, c.stratum,
       i.options_json, COALESCE(v.gold, i.gold) AS gold, v.options_json AS variant_options
FROM annotation_cases c JOIN variants v ON v.id = c.variant_id JOIN items i ON i.id = v.item_id
"""


def _time(text: Any) -> datetime | None:
    try:
        stamp = datetime.fromisoformat(str(text))
    except (TypeError, ValueError):
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)


def _set_starts(db: Any) -> dict[int, datetime | None]:
    """set id -> when it was sealed (its first `set` record entry), else created."""
    starts: dict[int, datetime | None] = {}
    for set_id, created in db.execute("SELECT id, created_at FROM annotation_sets"):
        starts[set_id] = _time(created)
    for set_id, sealed in db.execute(
            "SELECT ref_id, MIN(created_at) FROM record_log WHERE kind = 'set' "
            "GROUP BY ref_id"):
        stamp = _time(sealed)
        if stamp is not None and set_id in starts:
            starts[set_id] = stamp
    return starts


Opener = Callable[[dict[str, Any]], tuple[str, str | None] | None]
"""Given a `label_events` row, its (field, value) in clear, or None when sealed and this
process holds no key for it."""


def sealed_opener(row: dict[str, Any]) -> tuple[str, str | None] | None:
    """The default opener: clear events as they are, sealed ones with the keys this process
    holds (`annotate.trust.sealing.open_row`)."""
    from annotate.trust.sealing import open_row

    return open_row(row)


def check_events(db: Any, opener: Opener = sealed_opener,
                 now: datetime | None = None) -> ContentReport:
    """Replay every label event against the codebook, its case, its session and the clock.

    Args:
        db: the store (read only).
        opener: reads an event's field and value (see `Opener`).
        now: the present (tests fix it); default the system clock.
    """
    now = now or datetime.now(timezone.utc)
    cases = {}
    cursor = db.execute(_CASES_SQL)
    names = [d[0] for d in cursor.description]
    for values in cursor.fetchall():
        row = dict(zip(names, values, strict=True))
        row["options"] = loads(row["variant_options"]) or loads(row["options_json"]) or {}
        cases[row["id"]] = row
    sessions = {r[0]: (r[1], r[2]) for r in db.execute(
        "SELECT id, person_id, set_id FROM annotation_sessions")}
    starts = _set_starts(db)
    replay = _Replay(cases, sessions, starts, now)
    # Merged rater-file events are committed at the merge, long after their own time.
    replay.merged = {r[0] for r in db.execute("SELECT label_event_id FROM merged_events")}
    cursor = db.execute("SELECT * FROM label_events ORDER BY id")
    names = [d[0] for d in cursor.description]
    for values in cursor:
        row = dict(zip(names, values, strict=True))
        opened = opener(row)
        replay.time_checks(row)
        if opened is None:
            replay.unopened += 1
            continue
        replay.content_checks(row, *opened)
    return ContentReport(tuple(replay.findings), replay.checked, replay.unopened)


class _Replay:
    """State while events are replayed in id order."""

    def __init__(self, cases: dict, sessions: dict, starts: dict, now: datetime) -> None:
        self.cases, self.sessions, self.starts, self.now = cases, sessions, starts, now
        self.findings: list[Finding] = []
        self.raw: dict[tuple[int, int], dict[str, str | None]] = {}
        self.last_of: dict[tuple[int, int, str], int] = {}
        self.events: dict[int, tuple[int, int, str, str | None, int | None]] = {}
        self.undone: set[int] = set()
        self.rater_time: dict[int, datetime] = {}
        self.previous_time: datetime | None = None
        self.checked = self.unopened = 0
        self.merged: set[int] = set()

    def add(self, row: dict, kind: str, message: str, warning: bool = False) -> None:
        case = self.cases.get(row["case_id"], {})
        where = f"label event {row['id']} (case {case.get('code', row['case_id'])})"
        self.findings.append(Finding(row["id"], kind, f"{where}: {message}", row["person_id"],
                                     warning))

    def time_checks(self, row: dict) -> None:
        stamp = _time(row["created_at"])
        skew = timedelta(seconds=CLOCK_SKEW_S)
        if stamp is None:
            self.add(row, "time", f"created_at {row['created_at']!r} is not a time")
            return
        case = self.cases.get(row["case_id"])
        start = self.starts.get(case["set_id"]) if case else None
        if start is not None and stamp < start - skew:
            self.add(row, "time", f"stamped {row['created_at']}, before its set was sealed "
                     f"({start.isoformat()})")
        if stamp > self.now + skew:
            self.add(row, "time", f"stamped {row['created_at']}, in the future")
        mine = self.rater_time.get(row["person_id"])
        if mine is not None and stamp < mine:
            self.add(row, "time", f"stamped {row['created_at']}, earlier than the same "
                     f"rater's previous event ({mine.isoformat()})")
        elif mine is not None and (stamp - mine).total_seconds() > FAR_GAP_S:
            self.add(row, "time", f"{(stamp - mine).days} days after the same rater's "
                     "previous event", warning=True)
        if row["id"] in self.merged:
            self.rater_time[row["person_id"]] = max(stamp, mine) if mine else stamp
            return
        if self.previous_time is not None and stamp < self.previous_time - skew:
            self.add(row, "time", f"stamped {row['created_at']}, more than "
                     f"{CLOCK_SKEW_S // 60} minutes before the event committed just before "
                     "it (a client clock off?)", warning=True)
        self.rater_time[row["person_id"]] = max(stamp, mine) if mine else stamp
        self.previous_time = max(stamp, self.previous_time) if self.previous_time else stamp

    def content_checks(self, row: dict, field: str, value: str | None) -> None:
        self.checked += 1
        case = self.cases.get(row["case_id"])
        if case is None:
            self.add(row, "content", "its case does not exist")
            return
        session = self.sessions.get(row["session_id"])
        if row["session_id"] is not None and (session is None or session[0] != row["person_id"]
                                              or session[1] != case["set_id"]):
            self.add(row, "content", f"session {row['session_id']} is not one of this "
                     "rater's sessions on this set")
        from annotate.trust.sealing import time_on_item

        spent = time_on_item(row)  # sealed with the value in a live label (issue 35)
        if spent is not None and spent < 0:
            self.add(row, "content", f"time on item {spent} ms is negative")
        key = (row["case_id"], row["person_id"])
        labels = derive_labels(self.raw.get(key, {}))
        if field not in FIELDS:
            self.add(row, "content", f"field {field!r} is not in the codebook")
            return
        previous = self.last_of.get((*key, field))
        if row["supersedes_id"] != previous:
            self.add(row, "content", f"supersedes event {row['supersedes_id']}, but the "
                     f"rater's previous {field} event is {previous}")
        if row["undoes_id"] is not None:
            self._check_undo(row, field, value)
        else:
            asked = {**labels, "gold_shift": "shifted"} if value is None else labels
            if field not in applicable_fields(case, asked):
                self.add(row, "content", f"{field} is not asked for this case"
                         + (" (gold_shift is not 'shifted')" if field == "gold_shift_alt"
                            else ""))
            elif value is not None:
                self._check_value(row, case, field, value)
        self.raw.setdefault(key, {})[field] = value
        self.last_of[(*key, field)] = row["id"]
        self.events[row["id"]] = (row["case_id"], row["person_id"], field, value,
                                  row["supersedes_id"])

    def _check_value(self, row: dict, case: dict, field: str, value: str) -> None:
        try:
            clean = validate_value(field, value, options=case["options"], gold=case["gold"])
        except UserError as exc:
            self.add(row, "content", f"value {value!r} is not allowed ({exc})")
            return
        if clean != value:
            self.add(row, "content", f"value {value!r} is not in the form PAW stores "
                     f"({clean!r})")

    def _check_undo(self, row: dict, field: str, value: str | None) -> None:
        target = self.events.get(row["undoes_id"])
        if target is None or target[:3] != (row["case_id"], row["person_id"], field):
            self.add(row, "content", f"undoes event {row['undoes_id']}, which is not this "
                     "rater's event on this case and field")
            return
        if row["undoes_id"] in self.undone:
            self.add(row, "content", f"undoes event {row['undoes_id']} a second time")
        self.undone.add(row["undoes_id"])
        replaced = target[4]
        restored = self.events[replaced][3] if replaced in self.events else None
        if value != restored:
            self.add(row, "content", f"an undo that sets {value!r}, not the {restored!r} "
                     "the undone event replaced")
