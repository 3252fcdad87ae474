"""`paw verify`: recompute the label-event hash chain and the signed record; name what does
not fit.

The label chain (`label_events.hash`/`prev_hash`) shows an event whose content was edited,
an event removed from the middle, events inserted or re-ordered. The signed record
(`annotate/record.py`) adds what a plain hash cannot: every entry is signed with the key of
the person who made it, so an event appended by someone without that person's passphrase,
a chain rebuilt with recomputed hashes, a people row, set, case list, shown text or
adjudication edited by hand — each is named. Removal of the newest entries is closed by an
anchor kept outside the database: the head that `paw verify`, `paw report` and every export
print; `verify_record(head=...)` checks that an anchored head is still in the record.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sqlite_utils

from annotate.events import GENESIS_HASH, HASHED_COLUMNS, event_hash


@dataclass(frozen=True)
class ChainProblem:
    """One finding: the event id concerned and what is wrong with it."""

    event_id: int
    kind: str  # 'altered' | 'deleted' | 'relinked' | 'anchor'
    message: str


@dataclass(frozen=True)
class ChainReport:
    """Result of `verify_chain`."""

    n_events: int
    head_id: int | None
    head_hash: str
    problems: tuple[ChainProblem, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems


def chain_head(db: sqlite_utils.Database) -> tuple[int | None, str]:
    """(id, hash) of the newest event; (None, genesis) for an empty log."""
    row = db.execute("SELECT id, hash FROM label_events ORDER BY id DESC LIMIT 1").fetchone()
    return (row[0], row[1]) if row else (None, GENESIS_HASH)


def verify_chain(db: sqlite_utils.Database, head: str | None = None) -> ChainReport:
    """Recompute every event's hash and link, in id order.

    Args:
        db: the store.
        head: a head hash recorded earlier (e.g. from an export); it must still be the hash
            of some event whose content verifies.

    Returns:
        A `ChainReport` whose problems name each event altered, deleted or re-linked.
    """
    problems: list[ChainProblem] = []
    previous_id, previous_hash = 0, GENESIS_HASH
    seen_hashes: set[str] = set()
    n = 0
    columns = ", ".join([*HASHED_COLUMNS, "hash"])
    for values in db.execute(f"SELECT {columns} FROM label_events ORDER BY id"):
        row = dict(zip([*HASHED_COLUMNS, "hash"], values))
        n += 1
        event_id = row["id"]
        if event_hash(row) != row["hash"]:
            problems.append(ChainProblem(event_id, "altered",
                                         f"event {event_id}: content altered (hash mismatch)"))
        if row["prev_hash"] != previous_hash:
            if event_id > previous_id + 1:
                missing = (f"event {previous_id + 1}" if event_id == previous_id + 2 else
                           f"events {previous_id + 1}-{event_id - 1}")
                problems.append(ChainProblem(
                    previous_id + 1, "deleted",
                    f"{missing} deleted (event {event_id} links to a missing predecessor)"))
            else:
                problems.append(ChainProblem(
                    event_id, "relinked",
                    f"event {event_id}: prev_hash does not match event {previous_id} "
                    "(replaced or re-ordered)"))
        elif event_id > previous_id + 1:
            problems.append(ChainProblem(
                previous_id + 1, "deleted",
                f"event id gap {previous_id + 1}-{event_id - 1} before event {event_id}"))
        seen_hashes.add(row["hash"])
        previous_id, previous_hash = event_id, row["hash"]
    if head is not None and head not in seen_hashes and head != GENESIS_HASH:
        problems.append(ChainProblem(
            previous_id, "anchor",
            f"anchored head {head[:16]}… is not in the chain (newest events deleted or the "
            "chain rebuilt)"))
    head_id, head_hash = chain_head(db)
    return ChainReport(n, head_id, head_hash, tuple(problems))


# ---- the signed record -----------------------------------------------------------------------

@dataclass(frozen=True)
class RecordProblem:
    """One finding in the signed record.

    Attributes:
        entry_id: the record entry concerned (None for a row with no entry at all).
        kind: 'altered' | 'deleted' | 'relinked' | 'forged' | 'unrecorded' | 'anchor'.
        message: what is wrong, naming the row (coordinator-facing: may name people).
        person_id: whose row, event or signature it concerns, when known.
    """

    entry_id: int | None
    kind: str
    message: str
    person_id: int | None = None


@dataclass(frozen=True)
class RecordReport:
    """Result of `verify_record`: the label chain's report and the record's own."""

    n_entries: int
    n_legacy: int
    head_id: int | None
    head_hash: str
    labels: ChainReport
    problems: tuple[RecordProblem, ...]
    signed_by: dict[str, int]
    fingerprints: dict[str, str]

    @property
    def ok(self) -> bool:
        """True when neither the label chain nor the record shows a problem."""
        return self.labels.ok and not self.problems

    def counts(self) -> dict[str, int]:
        """Problems per kind (label chain and record together), for a summary line."""
        out: dict[str, int] = {}
        for kind in [p.kind for p in self.labels.problems] + [p.kind for p in self.problems]:
            out[kind] = out.get(kind, 0) + 1
        return out


_HEX = set("0123456789abcdef")
MIN_HEAD_PREFIX = 8
"""Shortest head prefix `resolve_head` accepts."""


def resolve_head(db: sqlite_utils.Database, text: str) -> str:
    """A head given in any case, in full or as a unique prefix, as the full stored hash.

    Both the record's hashes and the label chain's (older exports carry that one) count.
    A prefix that matches nothing is returned as given (lower case); the anchor check
    then reports it.

    Raises:
        UserError: not hexadecimal, shorter than `MIN_HEAD_PREFIX`, or ambiguous.
    """
    from store.errors import UserError

    wanted = text.strip().lower()
    if not wanted or not set(wanted) <= _HEX or len(wanted) > 64:
        raise UserError(f"--head: expected a hexadecimal hash or prefix, got {text!r}")
    if len(wanted) < MIN_HEAD_PREFIX:
        raise UserError(f"--head: expected at least {MIN_HEAD_PREFIX} hex digits, got "
                        f"{len(wanted)}")
    found = {r[0] for table in ("record_log", "label_events") for r in db.execute(
        f"SELECT hash FROM {table} WHERE substr(hash, 1, ?) = ?", [len(wanted), wanted])}
    if len(found) > 1:
        raise UserError(f"--head: prefix {wanted} matches {len(found)} hashes; give more digits")
    return found.pop() if found else wanted


def record_head(db: sqlite_utils.Database) -> tuple[int | None, str]:
    """(id, hash) of the newest record entry (what reports and exports print)."""
    from annotate.record import head

    return head(db)


def verify_record(db: sqlite_utils.Database, head: str | None = None) -> RecordReport:
    """Check the label chain and the signed record against every live row they cover.

    Args:
        db: the store.
        head: an anchored head (full hash, any case; see `resolve_head` for prefixes). It
            must still be the hash of a record entry or label event.

    Returns:
        A `RecordReport`; its problems name each entry altered, deleted, re-linked or
        forged, and each row not covered by the record or differing from it.
    """
    from annotate import record
    from store.db import snapshot

    with snapshot(db):  # one consistent state, while raters keep labelling
        labels = verify_chain(db)
        checker = _Checker(db)
        checker.replay(record.entries(db))
        checker.cover()
        if head is not None:
            checker.anchor(head.strip().lower())
        head_id, head_hash = record.head(db)
        people = {r[0]: r[1] for r in db.execute("SELECT id, name FROM people")}
        signed = {people.get(pid, f"#{pid}"): n for pid, n in db.execute(
            "SELECT person_id, COUNT(*) FROM record_log WHERE person_id IS NOT NULL "
            "GROUP BY person_id")}
    return RecordReport(checker.n, checker.n_legacy, head_id, head_hash, labels,
                        tuple(checker.problems), signed,
                        {checker.state.names.get(pid, f"#{pid}"): _fp(key)
                         for pid, key in checker.state.keys.items()})


def _fp(key: bytes) -> str:
    from annotate.keys import fingerprint

    return fingerprint(key)


class _Checker:
    """Replays the record in id order, then compares it with the live tables."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        from annotate.record import RecordState

        self.db = db
        self.state = RecordState()
        self.problems: list[RecordProblem] = []
        self.latest: dict[tuple[str, int], dict] = {}
        self.set_of_case: dict[int, int] = {}
        self.hashes: set[str] = set()
        self.n = self.n_legacy = 0

    def add(self, entry_id: int | None, kind: str, message: str,
            person_id: int | None = None) -> None:
        self.problems.append(RecordProblem(entry_id, kind, message, person_id))

    def who(self, person_id: int | None) -> str:
        return self.state.names.get(person_id, f"person #{person_id}")

    # -- the chain itself
    def replay(self, entries: list[dict]) -> None:
        from annotate.record import GENESIS_HASH, advance, entry_hash, person_entry_problem

        previous_id, previous_hash, signing_began = 0, GENESIS_HASH, False
        for e in entries:
            self.n += 1
            eid, what = e["id"], f"record entry {e['id']} ({e['kind']}, {e['ref_table']} " \
                                 f"{e['ref_id']})"
            intact = record_intact = entry_hash(e) == e["hash"]
            if not record_intact:
                self.add(eid, "altered", f"{what}: content altered (hash mismatch)",
                         e["person_id"])
            if e["prev_hash"] != previous_hash:
                if eid > previous_id + 1:
                    self.add(previous_id + 1, "deleted", f"record entries {previous_id + 1}-"
                             f"{eid - 1} deleted (entry {eid} links to a missing predecessor)")
                else:
                    self.add(eid, "relinked", f"{what}: prev_hash does not match entry "
                             f"{previous_id} (replaced or re-ordered)")
            elif eid > previous_id + 1:
                self.add(previous_id + 1, "deleted",
                         f"record entry id gap {previous_id + 1}-{eid - 1} before entry {eid}")
            previous_id, previous_hash = eid, e["hash"]
            self.hashes.add(e["hash"])
            if e["person_id"] is None:
                self.n_legacy += 1
                if e["kind"] != "legacy" or signing_began:
                    self.add(eid, "forged", f"{what}: unsigned, after signing began")
                    intact = False
            else:
                signing_began = True
            if e["ref_table"] == "people":
                problem = person_entry_problem(self.state, e)
                if problem:
                    self.add(eid, "forged", f"{what}: {problem}", e["ref_id"])
                elif intact:
                    advance(self.state, e)
                    self.latest[("people", e["ref_id"])] = e
                continue
            if e["kind"] != "legacy":
                problem = self.authority(e)
                if problem:
                    self.add(eid, "forged", f"{what}: {problem}", e["person_id"])
                    continue
            if intact:
                self.latest[(e["ref_table"], e["ref_id"])] = e
                if e["ref_table"] == "annotation_sets":
                    for case in (e["content"] or {}).get("cases", []):
                        self.set_of_case[case["id"]] = e["ref_id"]

    def authority(self, e: dict) -> str | None:
        """Why a signed non-people entry is not valid (None when it is)."""
        from annotate.keys import signature_valid

        signer, content = e["person_id"], e["content"] or {}
        key = self.state.signer_key(signer)
        if key is None:
            return f"signed by {self.who(signer)}, who has no key in the record"
        if not signature_valid(key, e["signature"], e["hash"]):
            return f"its signature does not verify under {self.who(signer)}'s recorded key"
        role = self.state.roles.get(signer)
        if e["kind"] == "set":
            the_set = content.get("set", {})
            if role != "coordinator" or the_set.get("raters_named_by") != signer:
                return f"a set sealed by {self.who(signer)}, who is not its coordinator"
            for rater in content.get("raters", []):
                pinned = bytes.fromhex(rater.get("public_key") or "")
                if self.state.roles.get(rater["id"]) != "rater" or \
                        self.state.keys.get(rater["id"]) != pinned:
                    return f"names {rater.get('name')} as a rater with a key the record " \
                           "does not hold"
        elif e["kind"] == "adjudication":
            if role != "coordinator" or content.get("person_id") != signer:
                return f"an adjudication signed by {self.who(signer)}, not its coordinator"
        elif e["kind"] == "label":
            if content.get("person_id") != signer:
                return (f"an event of {self.who(content.get('person_id'))} signed by "
                        f"{self.who(signer)}")
            set_entry = self.latest.get(("annotation_sets",
                                         self.set_of_case.get(content.get("case_id"), -1)))
            the_set = ((set_entry or {}).get("content") or {}).get("set", {})
            if signer not in (the_set.get("rater_a_id"), the_set.get("rater_b_id")):
                return f"an event by {self.who(signer)}, who is not a named rater of its set"
        else:
            return f"an entry of unknown kind {e['kind']!r}"
        return None

    # -- every live row against its entry
    def cover(self) -> None:
        from annotate import record

        db = self.db
        for row in record.rows(db, "SELECT * FROM people ORDER BY id"):
            entry = self.latest.get(("people", row["id"]))
            if entry is None:
                self.add(None, "unrecorded", f"person {row['name']}: not in the signed record "
                         "(added outside PAW)", row["id"])
                continue
            expected = (record.legacy_person_content(row) if entry["kind"] == "legacy"
                        else record.person_content(row))
            diff = _diff(entry["content"], expected)
            if diff:
                self.add(entry["id"], "altered", f"person {row['name']}: differs from the "
                         f"record ({diff})", row["id"])
        for set_id, name, named in db.execute(
                "SELECT id, name, rater_a_id FROM annotation_sets ORDER BY id").fetchall():
            entry = self.latest.get(("annotation_sets", set_id))
            if entry is None:
                if named is not None or self._has_labels(set_id):
                    self.add(None, "unrecorded", f"set {name}: not in the signed record")
                continue
            self.compare_set(name, entry, record.set_content(db, set_id))
        for table, noun in (("label_events", "label event"), ("adjudications", "adjudication")):
            live_ids = set()
            for (row_id,) in db.execute(f"SELECT id FROM {table} ORDER BY id").fetchall():
                live_ids.add(row_id)
                entry = self.latest.get((table, row_id))
                content = record.row_content(db, table, row_id) or {}
                if entry is None:
                    self.add(None, "unrecorded", f"{noun} {row_id}: not in the signed record "
                             "(inserted outside PAW, or its entry is invalid)",
                             content.get("person_id"))
                    continue
                diff = _diff(entry["content"], {k: content.get(k) for k in entry["content"]})
                if diff:
                    self.add(entry["id"], "altered", f"{noun} {row_id}: differs from its "
                             f"signed record entry ({diff})", content.get("person_id"))
        for (table, row_id), entry in self.latest.items():
            if table in ("label_events", "adjudications", "people", "annotation_sets"):
                exists = db.execute(f"SELECT 1 FROM {table} WHERE id = ?", [row_id]).fetchone()
                if not exists:
                    self.add(entry["id"], "deleted", f"{table} row {row_id}: deleted (record "
                             f"entry {entry['id']} attests it)", entry["person_id"])

    def _has_labels(self, set_id: int) -> bool:
        return self.db.execute(
            "SELECT 1 FROM label_events e JOIN annotation_cases c ON c.id = e.case_id "
            "WHERE c.set_id = ? LIMIT 1", [set_id]).fetchone() is not None

    def compare_set(self, name: str, entry: dict, live: dict) -> None:
        sealed = entry["content"] or {}
        diff = _diff(sealed.get("set", {}), live["set"])
        if diff:
            self.add(entry["id"], "altered", f"set {name}: differs from the record ({diff})")
        if [r["id"] for r in sealed.get("raters", [])] != [r["id"] for r in live["raters"]] \
                or _diff({r["id"]: r for r in sealed.get("raters", [])},
                         {r["id"]: r for r in live["raters"]}):
            self.add(entry["id"], "altered", f"set {name}: its raters or their keys changed")
        old = {c["id"]: c for c in sealed.get("cases", [])}
        new = {c["id"]: c for c in live["cases"]}
        if set(old) != set(new):
            added, removed = sorted(set(new) - set(old)), sorted(set(old) - set(new))
            self.add(entry["id"], "altered", f"set {name}: case list changed (added ids "
                     f"{added or '-'}, removed ids {removed or '-'})")
        for case_id in sorted(set(old) & set(new)):
            a, b = old[case_id], new[case_id]
            if a.get("shown_sha256") != b.get("shown_sha256"):
                self.add(entry["id"], "altered", f"set {name}, case {b['code']}: a text shown "
                         "to raters (question, edit, options, gold, answers or chain) changed "
                         "after the set was sealed")
            diff = _diff({k: v for k, v in a.items() if k != "shown_sha256"},
                         {k: v for k, v in b.items() if k != "shown_sha256"})
            if diff:
                self.add(entry["id"], "altered", f"set {name}, case {b['code']}: {diff}")

    def anchor(self, wanted: str) -> None:
        labels = {r[0] for r in self.db.execute("SELECT hash FROM label_events")}
        if wanted not in self.hashes and wanted not in labels and wanted != GENESIS_HASH:
            self.add(None, "anchor", f"anchored head {wanted[:16]}… is in neither the record "
                     "nor the label chain (newest entries deleted or the record rebuilt)")


def _diff(recorded: dict, live: dict) -> str:
    """'field: recorded → live' for each difference (empty when equal)."""
    parts = []
    for key in sorted(set(recorded) | set(live), key=str):
        if recorded.get(key) != live.get(key):
            parts.append(f"{key}: {_short(recorded.get(key))} → {_short(live.get(key))}")
    return "; ".join(parts)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "…'"
