"""`paw verify`: recompute the label-event hash chain and name every event that does not fit.

What the chain shows: an event whose content was edited (its hash no longer matches), an
event removed from the middle (the next event's `prev_hash` points at nothing, and its id
is missing), events inserted or re-ordered. What it cannot show on its own: removal of the
newest events, or a chain rebuilt wholesale by someone who recomputed every hash (the
hash is not keyed). Both are closed by an anchor kept outside the database: the head hash
that `paw verify` prints (and every export carries); `verify_chain(head=...)` checks that
an anchored head is still in the chain.
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
