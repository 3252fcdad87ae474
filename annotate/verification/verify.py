"""`paw verify`: recompute the label-event hash chain and the signed record; name what does
not fit.

The label chain (`label_events.hash`/`prev_hash`) shows an event whose content was edited,
an event removed from the middle, events inserted or re-ordered. The signed record
(`annotate/trust/record.py`) adds what a plain hash cannot: every entry is signed with the key of
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
from annotate.verification.content_check import Opener, check_events, sealed_opener
from annotate.verification.record_replay import Checker, RecordProblem


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
    names = [*HASHED_COLUMNS, "sealed_json", "hash"]
    for values in db.execute(f"SELECT {', '.join(names)} FROM label_events ORDER BY id"):
        row = dict(zip(names, values, strict=True))
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
    warnings: tuple[str, ...] = ()
    """Flags that do not fail verification (odd clocks, sets sealed by an older PAW)."""
    n_unopened: int = 0
    """Sealed label values this process could not open: their content was not checked."""

    @property
    def ok(self) -> bool:
        """True when neither the label chain nor the record shows a problem (unsigned
        legacy entries are one: nobody vouches for them)."""
        return self.labels.ok and not self.problems

    def ok_except_legacy(self) -> bool:
        """True when the only problem is unsigned legacy entries (a PAW 0.1 store)."""
        return self.labels.ok and all(p.kind == "legacy" for p in self.problems)

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
    """A record head given in any case, in full or as a unique prefix, as the full hash.

    Only the signed record's heads count (exports print it as `record_head`, reports as
    "record head"): the label chain's head (`chain_head`) covers label events only, so
    accepting it would let an adjudication deleted after it pass. A prefix that matches
    nothing is returned as given (lower case); the anchor check then reports it.

    Raises:
        UserError: not hexadecimal, shorter than `MIN_HEAD_PREFIX`, ambiguous, or a
            label-chain head.
    """
    from store.errors import UserError

    wanted = text.strip().lower()
    if not wanted or not set(wanted) <= _HEX or len(wanted) > 64:
        raise UserError(f"--head: expected a hexadecimal hash or prefix, got {text!r}")
    if len(wanted) < MIN_HEAD_PREFIX:
        raise UserError(f"--head: expected at least {MIN_HEAD_PREFIX} hex digits, got "
                        f"{len(wanted)}")
    found = {r[0] for r in db.execute(
        "SELECT hash FROM record_log WHERE substr(hash, 1, ?) = ?", [len(wanted), wanted])}
    if not found and db.execute("SELECT 1 FROM label_events WHERE substr(hash, 1, ?) = ?",
                                [len(wanted), wanted]).fetchone():
        raise UserError(f"--head: {wanted[:16]}… is a label-chain head (an export's "
                        "`chain_head`); give the record head (`record_head` in exports, "
                        "'record head' in reports and `paw verify`), which covers "
                        "adjudications, people and sets too")
    if len(found) > 1:
        raise UserError(f"--head: prefix {wanted} matches {len(found)} hashes; give more digits")
    return found.pop() if found else wanted


def record_head(db: sqlite_utils.Database) -> tuple[int | None, str]:
    """(id, hash) of the newest record entry (what reports and exports print)."""
    from annotate.trust.record import head

    return head(db)


def verify_record(db: sqlite_utils.Database, head: str | None = None,
                  opener: Opener | None = None) -> RecordReport:
    """Check the label chain, the signed record against every live row it covers, and what
    every label event says (`annotate.verification.content_check`).

    Args:
        db: the store.
        head: an anchored record head (full hash, any case; see `resolve_head` for
            prefixes). It must still be the hash of a record entry.
        opener: reads sealed label values (default: those this process holds keys for).

    Returns:
        A `RecordReport`; its problems name each entry altered, deleted, re-linked or
        forged, and each row not covered by the record or differing from it.
    """
    from annotate.trust import record
    from store.db import snapshot

    with snapshot(db):  # one consistent state, while raters keep labelling
        labels = verify_chain(db)
        checker = Checker(db)
        checker.replay(record.entries(db))
        checker.cover()
        checker.legacy()
        if head is not None:
            checker.anchor(head.strip().lower())
        content = check_events(db, opener or default_opener())
        for finding in content.findings:
            if finding.warning:
                checker.warnings.append(finding.message)
            else:
                checker.add(None, finding.kind, finding.message, finding.person_id)
        head_id, head_hash = record.head(db)
        people = {r[0]: r[1] for r in db.execute("SELECT id, name FROM people")}
        signed = {people.get(pid, f"#{pid}"): n for pid, n in db.execute(
            "SELECT person_id, COUNT(*) FROM record_log WHERE person_id IS NOT NULL "
            "GROUP BY person_id")}
    return RecordReport(checker.n, checker.n_legacy, head_id, head_hash, labels,
                        tuple(checker.problems), signed,
                        {checker.state.names.get(pid, f"#{pid}"): _fp(key)
                         for pid, key in checker.state.keys.items()},
                        tuple(checker.warnings), content.n_unopened)


def default_opener() -> Opener:
    """How verification reads label values: clear ones as they are, sealed ones with the
    keys this process holds (a coordinator signed in: all of them)."""
    return sealed_opener


def _fp(key: bytes) -> str:
    from annotate.trust.keys import fingerprint

    return fingerprint(key)


