"""Labelling a rater's own file offline: the same checks and guarantees as the shared store.

Each keypress is one `BEGIN IMMEDIATE … COMMIT` on the file (WAL, `synchronous = FULL`):
durable when `record` returns. Events are append-only, a relabel supersedes (by sequence
number), an undo is a new event restoring the value before the undone one, the queue
resumes at the first case not fully labelled, and every event is hash-chained to the
previous one and signed with the rater's Ed25519 key (unsealed by her passphrase), so the
coordinator's merge can show each one is hers and unaltered (`annotate.raterfile.merge`).
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
from dataclasses import dataclass
from typing import Any

from annotate.codebook import (
    CODEBOOK_VERSION,
    MAX_TIME_ON_ITEM_MS,
    applicable_fields,
    validate_value,
)
from annotate.labels import COMPANIONS, companion_value, derive_labels
from annotate.raterfile.file import SIGNED_COLUMNS, commitment, event_hash, file_host, meta
from annotate.sets.cases import CaseView
from annotate.trust.identity import Person, require
from store.errors import NotFound, UserError

GENESIS_HASH = "0" * 64
"""`prev_hash` of a file's first event."""


@dataclass(frozen=True)
class FileEvent:
    """One stored event of a rater file (`seq` is its id within the file)."""

    id: int
    code: str
    field: str
    value: str | None
    supersedes_id: int | None


def _tuples(value: Any) -> Any:
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


class FileLabelling:
    """A rater's session on their own file (the `Labelling` of annotate/labelling.py).

    Args:
        conn: the file, opened with `annotate.raterfile.file.open_file`.
        person: the rater, signed in with `annotate.raterfile.file.sign_in`.
        app: app name stamped (with the version) on the session and events.
    """

    def __init__(self, conn: sqlite3.Connection, person: Person, app: str = "paw-file") -> None:
        from annotate.events import app_version

        self.conn, self.person = conn, require(person, "rater")
        self.app_version = app_version(app)
        self.file_id = meta(conn)["file_id"]
        if meta(conn)["codebook_version"] != CODEBOOK_VERSION:
            raise UserError(f"the file uses codebook {meta(conn)['codebook_version']}, this "
                            f"PAW {CODEBOOK_VERSION}: label it with the PAW that packed it")
        self.session_seq: int | None = None

    # ---- reading ----------------------------------------------------------------------

    def _events(self, code: str | None = None) -> list[dict[str, Any]]:
        sql, params = "SELECT * FROM events", []
        if code is not None:
            sql, params = sql + " WHERE code = ?", [code]
        cursor = self.conn.execute(sql + " ORDER BY seq", params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def _labels(self, code: str) -> dict[str, str]:
        return derive_labels({e["field"]: e["value"] for e in self._events(code)})

    def _case(self, code: str) -> tuple[int, dict, dict]:
        row = self.conn.execute("SELECT position, view_json, asks_json FROM cases WHERE "
                                "code = ?", [code]).fetchone()
        if row is None:
            raise NotFound(f"case: no case {code!r} in this file")
        return int(row[0]), json.loads(row[1]), json.loads(row[2])

    def _view(self, position: int, data: dict, asks: dict, labels: dict[str, str],
              total: int) -> CaseView:
        fields = applicable_fields(asks, labels)
        return CaseView(**{k: _tuples(v) for k, v in data.items()}, position=position + 1,
                        total=total, fields=fields,
                        my_labels=tuple((f, v) for f, v in labels.items()))

    def start(self) -> None:
        """Open a session in the file (durable at once)."""
        from store.db import utcnow

        cursor = self.conn.execute(
            "INSERT INTO sessions (started_at, app_version, host, pid) VALUES (?, ?, ?, ?)",
            [utcnow(), self.app_version, file_host(), os.getpid()])
        assert cursor.lastrowid is not None  # set by every INSERT
        self.session_seq = cursor.lastrowid

    def queue(self) -> list[CaseView]:
        """Every case of the file in the rater's order, with their current labels."""
        total = self.conn.execute("SELECT COUNT(*) FROM cases").fetchone()[0]
        raw: dict[str, dict[str, str | None]] = {}
        for e in self._events():
            raw.setdefault(e["code"], {})[e["field"]] = e["value"]
        return [self._view(int(p), json.loads(v), json.loads(a),
                           derive_labels(raw.get(code, {})), total)
                for p, code, v, a in self.conn.execute(
                    "SELECT position, code, view_json, asks_json FROM cases ORDER BY position")]

    def view(self, code: str) -> CaseView:
        """One case with the rater's current labels."""
        total = self.conn.execute("SELECT COUNT(*) FROM cases").fetchone()[0]
        position, data, asks = self._case(code)
        return self._view(position, data, asks, self._labels(code), total)

    # ---- writing ----------------------------------------------------------------------

    def record(self, code: str, field: str, value: str | None,
               time_on_item_ms: int | None = None, companion: str | None = None) -> FileEvent:
        """Validate one label as `annotate.events.record_label` does; commit it, signed,
        with its companion event for a field of `annotate.labels.COMPANIONS` (the same
        shape whatever the value, carried into the store by the merge).

        Raises:
            UserError: no session, a field the case does not ask, a value the field does
                not allow, or a negative time.
        """
        from annotate.codebook import field as field_spec

        if self.session_seq is None:
            raise UserError("no session: call start() first")
        _, data, asks = self._case(code)
        name = field_spec(field).name
        mine = self._labels(code)
        asked = {**mine, "gold_shift": "shifted"} if value is None else mine
        if name not in applicable_fields(asks, asked):
            why = ("label gold_shift 'shifted' first" if name == "gold_shift_alt"
                   else "it does not apply to this case")
            raise UserError(f"{name}: not asked for case {code} ({why})")
        clean = validate_value(name, value, options=dict(_tuples(data["options"])),
                               gold=data["gold"])
        if time_on_item_ms is not None and not 0 <= time_on_item_ms <= MAX_TIME_ON_ITEM_MS:
            raise UserError(f"time_on_item_ms: expected 0 to {MAX_TIME_ON_ITEM_MS} ms (a day), "
                            f"got {time_on_item_ms}")
        writes = [(name, clean)]
        if name in COMPANIONS:
            other = companion_value(name, clean, companion)
            if other is not None:
                other = validate_value(COMPANIONS[name][0], other,
                                       options=dict(_tuples(data["options"])),
                                       gold=data["gold"])
            writes.append((COMPANIONS[name][0], other))
        elif companion is not None:
            raise UserError(f"{name}: has no companion field; got {companion!r}")
        with self._transaction():
            events = self._events(code)
            written = []
            for one, one_value in writes:
                previous = [e["seq"] for e in events if e["field"] == one]
                written.append(self._append(code, one, one_value,
                                            previous[-1] if previous else None, None,
                                            time_on_item_ms))
            return written[0]

    def undo(self) -> FileEvent | None:
        """Undo this session's latest label not undone yet, with a new event."""
        if self.session_seq is None:
            return None
        with self._transaction():
            events = self._events()
            undone = {e["undoes_seq"] for e in events if e["undoes_seq"] is not None}
            target = next((e for e in reversed(events) if e["session_seq"] == self.session_seq
                           and e["undoes_seq"] is None and e["seq"] not in undone), None)
            if target is None:
                return None
            by_seq = {e["seq"]: e for e in events}
            targets = [target]
            before = by_seq.get(target["seq"] - 1)
            if before is not None and before["session_seq"] == self.session_seq and \
                    before["code"] == target["code"] and \
                    COMPANIONS.get(before["field"], ("",))[0] == target["field"]:
                targets.insert(0, before)  # written with its field: undone with it
            undos = []
            for one in targets:
                replaced = one["supersedes_seq"]
                restored = by_seq[replaced]["value"] if replaced is not None else None
                current = [e["seq"] for e in events if e["code"] == one["code"]
                           and e["field"] == one["field"]][-1]
                undos.append(self._append(one["code"], one["field"], restored, current,
                                          one["seq"], None))
            return undos[0]

    def _transaction(self):
        from contextlib import contextmanager

        @contextmanager
        def immediate():
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
            else:
                self.conn.execute("COMMIT")

        return immediate()

    def _append(self, code: str, field: str, value: str | None, supersedes: int | None,
                undoes: int | None, time_on_item_ms: int | None) -> FileEvent:
        from annotate.trust.keys import sign
        from store.db import utcnow

        last = self.conn.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1"
                                 ).fetchone()
        salt = secrets.token_hex(16)
        row: dict[str, Any] = {
            "seq": (last[0] + 1) if last else 1, "code": code, "field": field,
            "value": value, "salt": salt, "commit_sha256": commitment(salt, field, value),
            "supersedes_seq": supersedes, "undoes_seq": undoes,
            "time_on_item_ms": time_on_item_ms, "session_seq": self.session_seq,
            "app_version": self.app_version, "codebook_version": CODEBOOK_VERSION,
            "created_at": utcnow(), "prev_hash": last[1] if last else GENESIS_HASH}
        row["hash"] = event_hash(self.file_id, row)
        row["signature"] = sign(self.person.signing_key, row["hash"])
        columns = [*SIGNED_COLUMNS, "field", "value", "salt", "hash", "signature"]
        self.conn.execute(f"INSERT INTO events ({', '.join(columns)}) VALUES "
                          f"({', '.join('?' * len(columns))})", [row[c] for c in columns])
        return FileEvent(row["seq"], code, field, value, supersedes)
