"""Merging a rater's file back (coordinator): check everything, import each event once.

`merge` opens the file read-only and refuses it whole, naming why, unless all of this
holds: it is a rater file this store packed (its `pack` entry is in the signed record,
with the same statement); the coordinator's signature on its statement and every case's
view digest match; the set is the one packed and its sealed case list is still the
statement's; the rater is one of the set's two raters and the file's key is the one the
record holds for them; every event's hash chain link, hash and Ed25519 signature verify
under that recorded key, its commitment matches its field and value, and it is an event
PAW's screen could have written (field asked, value allowed, supersedes and undo links,
times not before the pack nor in the future and never going back).

Then each event not merged before becomes a `label_events` row of the rater — field and
value sealed (with the commitment's salt) to the rater and the coordinator — in one
transaction, recorded as a `merged_label` entry signed by the coordinator that carries
the rater's own signed event (without its value in clear); `merged_events` maps (file,
sequence number) to the row, so merging the same file again adds nothing and a file that
grew adds only its new events.

No allowed sequence of packs and merges can break the record or bring back an older
decision: a file superseded by a newer pack of the same rater and set (`pack
--supersede`) adds nothing more (its new events are refused, naming the newer file), and
an event stamped before the rater's latest event already in the store is refused, naming
the file, the event and that event (the store's label order is the rater's time order,
which `paw verify` checks). `merge_folder` merges every `*.paw-rater` / `*.db` rater file
of a folder (the coordinator's live view calls it before each recomputation).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from annotate.trust.identity import Person, require
from store.db import dumps, transaction
from store.errors import UserError

CLOCK_SKEW_S = 600
"""How far a file event's time may run ahead of the merging machine's clock."""


@dataclass(frozen=True)
class Merged:
    """What one `merge` did."""

    path: str
    rater: str
    set_name: str
    imported: int
    already: int


def _time(text: str) -> datetime:
    stamp = datetime.fromisoformat(text)
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)


def merge(db: Any, path: str | Path, coordinator: Person) -> Merged:
    """Check a rater file against the store and import its new events (see the module).

    Raises:
        UserError: not a coordinator, or the file is refused (the message names why).
    """
    from annotate.raterfile.file import check_statement, open_file
    from annotate.trust import record

    require(coordinator, "coordinator")
    where = str(path)
    conn = open_file(where, readonly=True)
    try:
        statement = check_statement(conn, where)
        packed = db.execute("SELECT id, set_id, person_id, statement_json FROM rater_files "
                            "WHERE file_id = ?", [statement["file_id"]]).fetchone()
        if packed is None:
            raise UserError(f"{where}: not packed from this store (file "
                            f"{statement['file_id'][:8]}… is unknown here)")
        if json.loads(packed[3]) != statement:
            raise UserError(f"{where}: its statement differs from the one recorded when it "
                            "was packed (the file was altered)")
        entry = [e for e in record.entries(db, "rater_files", packed[0]) if e["kind"] == "pack"]
        if not entry or entry[-1]["content"].get("statement_json") != dumps(statement):
            raise UserError(f"{where}: its pack is not in the signed record")
        set_id, rater_id = int(packed[1]), int(packed[2])
        set_name = db.execute("SELECT name FROM annotation_sets WHERE id = ?",
                              [set_id]).fetchone()[0]
        if statement["set"] != set_name:
            raise UserError(f"{where}: a file of set {statement['set']!r}, not {set_name!r}")
        _check_cases(db, set_id, statement, where)
        rater = _check_rater(db, conn, set_id, rater_id, statement, where)
        events = _check_events(conn, statement, rater, where)
        sessions = {r[0]: r for r in conn.execute(
            "SELECT seq, started_at, app_version, host, pid FROM sessions")}
    finally:
        conn.close()
    imported, already = _import(db, statement, set_id, rater_id, events, sessions, coordinator,
                                where)
    return Merged(where, rater[0], set_name, imported, already)


def _check_cases(db: Any, set_id: int, statement: dict, where: str) -> None:
    codes = {r[0] for r in db.execute("SELECT code FROM annotation_cases WHERE set_id = ?",
                                      [set_id])}
    if {code for code, _ in statement["cases"]} != codes:
        raise UserError(f"{where}: its case list is not set {statement['set']!r}'s")
    from annotate.trust import record

    sealed = [e for e in record.entries(db, "annotation_sets", set_id) if e["kind"] == "set"]
    if not sealed or sealed[-1]["hash"] != statement.get("set_entry_hash"):
        raise UserError(f"{where}: set {statement['set']!r} was sealed again after the file "
                        "was packed; pack a new file")


def _check_rater(db: Any, conn: Any, set_id: int, rater_id: int, statement: dict,
                 where: str) -> tuple[str, bytes]:
    from annotate.sets.raters import named_raters
    from annotate.trust.record import check_person

    pair = named_raters(db, set_id)
    row = db.execute("SELECT name, public_key FROM people WHERE id = ?", [rater_id]).fetchone()
    if pair is None or rater_id not in (pair[0][0], pair[1][0]) or row is None:
        raise UserError(f"{where}: its rater is not one of the set's two raters")
    problem = check_person(db, rater_id)
    if problem:
        raise UserError(f"{where}: rater {row[0]}: {problem}")
    recorded = bytes(row[1])
    name, public = conn.execute("SELECT name, public_key FROM rater").fetchone()
    if name != row[0] or name != statement["rater"] or bytes(public) != recorded or \
            statement["rater_public_key"] != recorded.hex():
        raise UserError(f"{where}: forged rater: the file's rater {name!r} and key are not "
                        f"the record's {row[0]!r} (key {recorded.hex()[:16]}…)")
    return row[0], recorded


def _check_events(conn: Any, statement: dict, rater: tuple[str, bytes],
                  where: str) -> list[dict]:
    from annotate.codebook import MAX_TIME_ON_ITEM_MS, applicable_fields, validate_value
    from annotate.labels import derive_labels
    from annotate.raterfile.file import commitment, event_hash
    from annotate.raterfile.labelling import GENESIS_HASH
    from annotate.trust.keys import signature_valid

    cursor = conn.execute("SELECT * FROM events ORDER BY seq")
    names = [d[0] for d in cursor.description]
    events = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    cases = {code: (json.loads(view), json.loads(asks)) for code, view, asks in
             conn.execute("SELECT code, view_json, asks_json FROM cases")}
    packed_at = _time(statement["packed_at"])
    latest = datetime.now(timezone.utc) + timedelta(seconds=CLOCK_SKEW_S)
    previous_hash, previous_time = GENESIS_HASH, packed_at - timedelta(seconds=CLOCK_SKEW_S)
    raw: dict[str, dict[str, Any]] = {}
    last_of: dict[tuple[str, str], int] = {}
    by_seq: dict[int, dict] = {}
    for n, e in enumerate(events, start=1):
        what = f"{where}: event {e['seq']}"
        if e["seq"] != n or e["prev_hash"] != previous_hash:
            raise UserError(f"{what}: the file's event chain is broken (an event removed, "
                            "inserted or re-ordered)")
        if event_hash(statement["file_id"], e) != e["hash"]:
            raise UserError(f"{what}: altered (its hash does not match)")
        if not signature_valid(rater[1], e["signature"], e["hash"]):
            raise UserError(f"{what}: its signature does not verify under {rater[0]}'s "
                            "recorded key (forged)")
        if commitment(e["salt"], e["field"], e["value"]) != e["commit_sha256"]:
            raise UserError(f"{what}: its field or value was changed after it was signed")
        stamp = _time(e["created_at"])
        if stamp < previous_time or stamp > latest:
            raise UserError(f"{what}: stamped {e['created_at']}, before the file was packed, "
                            "before the previous event, or in the future")
        if e["code"] not in cases:
            raise UserError(f"{what}: case {e['code']} is not in the file")
        view, asks = cases[e["code"]]
        key = (e["code"], e["field"])
        if e["supersedes_seq"] != last_of.get(key):
            raise UserError(f"{what}: supersedes event {e['supersedes_seq']}, not the "
                            f"previous {e['field']} event {last_of.get(key)}")
        labels = derive_labels(raw.get(e["code"], {}))
        if e["undoes_seq"] is not None:
            target = by_seq.get(e["undoes_seq"])
            replaced = target and target["supersedes_seq"]
            restored = by_seq[replaced]["value"] if replaced else None
            if target is None or (target["code"], target["field"]) != key or \
                    e["value"] != restored:
                raise UserError(f"{what}: not a valid undo of event {e['undoes_seq']}")
        else:
            asked = {**labels, "gold_shift": "shifted"} if e["value"] is None else labels
            if e["field"] not in applicable_fields(asks, asked):
                raise UserError(f"{what}: {e['field']} is not asked for case {e['code']}")
            options = {label: text for label, text in view["options"]}
            if e["value"] is not None and validate_value(
                    e["field"], e["value"], options=options, gold=view["gold"]) != e["value"]:
                raise UserError(f"{what}: value {e['value']!r} is not in PAW's stored form")
        if e["time_on_item_ms"] is not None and not \
                0 <= e["time_on_item_ms"] <= MAX_TIME_ON_ITEM_MS:
            raise UserError(f"{what}: time on item {e['time_on_item_ms']} ms, expected 0 to "
                            f"{MAX_TIME_ON_ITEM_MS} (a day)")
        raw.setdefault(e["code"], {})[e["field"]] = e["value"]
        last_of[key], by_seq[e["seq"]] = e["seq"], e
        previous_hash, previous_time = e["hash"], stamp
    return events


def _check_order(conn: Any, statement: dict, set_id: int, rater_id: int, new: list[dict],
                 where: str) -> None:
    """Refuse new events of a superseded file, or stamped before the rater's latest event
    in the store (see the module docstring)."""
    from annotate.raterfile.file import live_file

    if not new:
        return
    live = live_file(conn, set_id, rater_id)
    if live is not None and live[0] != statement["file_id"]:
        raise UserError(f"{where}: event {new[0]['seq']} and {len(new) - 1} more not merged "
                        f"before: this file was superseded by file {live[0][:8]}… (packed "
                        f"{live[1]}); its labels not merged before that are refused; the "
                        "rater labels in the newer file")
    row = conn.execute("SELECT id, created_at FROM label_events WHERE person_id = ? ORDER BY "
                       "created_at DESC, id DESC LIMIT 1", [rater_id]).fetchone()
    if row is None:
        return
    latest = _time(row[1])
    for e in new:
        if _time(e["created_at"]) < latest:
            raise UserError(f"{where}: event {e['seq']} (case {e['code']}, {e['field']}) is "
                            f"stamped {e['created_at']}, before the rater's latest label in "
                            f"the store (event {row[0]}, {row[1]}): merging it would put an "
                            "older decision after a newer one; nothing was merged")


def _import(db: Any, statement: dict, set_id: int, rater_id: int, events: list[dict],
            sessions: dict, coordinator: Person, where: str) -> tuple[int, int]:
    from annotate.raterfile.file import SIGNED_COLUMNS

    file_id = statement["file_id"]
    codes = {r[0]: r[1] for r in db.execute("SELECT code, id FROM annotation_cases WHERE "
                                            "set_id = ?", [set_id])}
    imported = 0
    with transaction(db) as conn:
        done = {r[0]: r[1] for r in conn.execute(
            "SELECT seq, label_event_id FROM merged_events WHERE file_id = ?", [file_id])}
        already = len(done)
        _check_order(conn, statement, set_id, rater_id,
                     [e for e in events if e["seq"] not in done], where)
        for e in events:
            if e["seq"] in done:
                continue
            session_id = _session(conn, file_id, rater_id, set_id, e["session_seq"],
                                  sessions.get(e["session_seq"]))
            offline = {**{c: e[c] for c in SIGNED_COLUMNS}, "file_id": file_id,
                       "hash": e["hash"], "signature": bytes(e["signature"]).hex()}
            try:
                row = _append(conn, e, codes, rater_id, session_id, done, offline, coordinator,
                              set_id)
            except UserError as exc:  # refused whole (the transaction rolls back): say where
                raise UserError(f"{where}: event {e['seq']} (case {e['code']}, {e['field']}): "
                                f"{exc}; nothing was merged") from None
            conn.execute("INSERT INTO merged_events (file_id, seq, label_event_id) VALUES "
                         "(?, ?, ?)", [file_id, e["seq"], row["id"]])
            done[e["seq"]] = row["id"]
            imported += 1
    return imported, already


def _append(conn: Any, e: dict, codes: dict, rater_id: int, session_id: int, done: dict,
            offline: dict, coordinator: Person, set_id: int) -> dict:
    from annotate.events import append_event

    return append_event(conn, {
        "case_id": codes[e["code"]], "person_id": rater_id, "session_id": session_id,
        "field": e["field"], "value": e["value"],
        "supersedes_id": done.get(e["supersedes_seq"]) if e["supersedes_seq"]
        else _latest(conn, codes[e["code"]], rater_id, e["field"]),
        "undoes_id": done.get(e["undoes_seq"]) if e["undoes_seq"] else None,
        "time_on_item_ms": e["time_on_item_ms"], "app_version": e["app_version"],
        "codebook_version": e["codebook_version"], "created_at": e["created_at"],
    }, coordinator, set_id, kind="merged_label", sealed_extra={"salt": e["salt"]},
        offline=offline)


def _latest(conn: Any, case_id: int, person_id: int, field: str) -> int | None:
    """The rater's latest event on (case, field) in the store (a file's first event on it
    supersedes what the rater labelled in the shared store before, if anything)."""
    from annotate.events import own_events

    ids = [e["id"] for e in own_events(conn, person_id, case_id) if e["field"] == field]
    return ids[-1] if ids else None


def _session(conn: Any, file_id: str, rater_id: int, set_id: int, seq: int,
             row: Any) -> int:
    """The store's session for a file session (created once; host names the file)."""
    host = f"rater-file:{file_id}:{seq}"
    found = conn.execute("SELECT id FROM annotation_sessions WHERE host = ?", [host]).fetchone()
    if found:
        return int(found[0])
    started, version = (row[1], row[2]) if row else ("", "paw-file")
    cursor = conn.execute(
        "INSERT INTO annotation_sessions (person_id, set_id, started_at, app_version, host, "
        "pid) VALUES (?, ?, ?, ?, ?, ?)", [rater_id, set_id, started, version, host, None])
    return int(cursor.lastrowid)


RATER_FILE_SUFFIXES = (".paw-rater", ".db", ".sqlite")
"""File names `merge_folder` looks at (anything else in the folder is ignored)."""


def merge_folder(db: Any, folder: str | Path, coordinator: Person,
                 set_name: str | None = None) -> list[Merged | str]:
    """Merge every rater file of a folder (optionally only those of one set); other files,
    SQLite or not, are left alone.

    Returns:
        Per file, what `merge` did, or the one-line reason it was refused (a refused file
        never stops the others).
    """
    from annotate.raterfile.file import meta, open_file

    out: list[Merged | str] = []
    for path in sorted(Path(folder).expanduser().iterdir()):
        if path.suffix not in RATER_FILE_SUFFIXES or not path.is_file():
            continue
        try:
            conn = open_file(path, readonly=True)
        except UserError as exc:
            if path.suffix == ".paw-rater":  # named as a rater file: say why it is not one
                out.append(str(exc))
            continue  # another SQLite file (the store itself, say): not a rater file
        try:
            other_set = set_name is not None and meta(conn).get("set") != set_name
        finally:
            conn.close()
        if other_set:
            continue
        try:
            out.append(merge(db, path, coordinator))
        except UserError as exc:
            out.append(str(exc))
    return out
