"""A rater's own file: the blinded cases of one set for one rater, labelled offline.

`pack` writes a separate SQLite file (format `FORMAT`) holding only what that rater may
see, in that rater's order: each case exactly as the labelling screen shows it (texts,
options, gold, the edit's spans, answers and reasoning of flips and chain cases, already
scrubbed of model names), which questions it asks, the codebook, the rater's own person
row with their sealed signing key, and the set's case list as the coordinator signed it.
No audit, model, operator, arm, stratum, verdict, other rater or agreement figure is in it
(tests read the file with plain sqlite3 to show that).

The coordinator's signed *statement* ties the file to the store: file id, set, the
record's set entry hash, the rater and their public key, and every case code with the
SHA-256 of its view as written. It is stored in the file and, in the same transaction
that writes `rater_files`, as a `pack` entry of the store's signed record.

The rater labels the file with the usual screen (`paw annotate --file FILE`,
`annotate.raterfile.labelling`): each keypress is one committed, signed event in the file's
own hash chain; the coordinator merges it back (`annotate.raterfile.merge`).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotate.trust import keys
from annotate.trust.identity import Person, issue, require
from store.db import dumps, transaction, utcnow
from store.errors import NotFound, UserError, no_such

FORMAT = "paw-rater-file-1"
"""`meta.format` of a rater file (a different format is refused, naming both)."""

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE rater (person_id INTEGER NOT NULL, name TEXT NOT NULL, pass_salt BLOB NOT NULL,
                    pass_hash BLOB NOT NULL, kdf_json TEXT NOT NULL, public_key BLOB NOT NULL,
                    wrapped_key BLOB NOT NULL);
CREATE TABLE codebook (name TEXT PRIMARY KEY, spec_json TEXT NOT NULL);
CREATE TABLE cases (position INTEGER PRIMARY KEY, code TEXT NOT NULL UNIQUE,
                    view_json TEXT NOT NULL, asks_json TEXT NOT NULL);
CREATE TABLE sessions (seq INTEGER PRIMARY KEY, started_at TEXT NOT NULL,
                       app_version TEXT NOT NULL, host TEXT, pid INTEGER);
CREATE TABLE events (seq INTEGER PRIMARY KEY, code TEXT NOT NULL, field TEXT NOT NULL,
                     value TEXT, salt TEXT NOT NULL, commit_sha256 TEXT NOT NULL,
                     supersedes_seq INTEGER, undoes_seq INTEGER, time_on_item_ms INTEGER,
                     session_seq INTEGER NOT NULL, app_version TEXT NOT NULL,
                     codebook_version TEXT NOT NULL, created_at TEXT NOT NULL,
                     prev_hash TEXT NOT NULL, hash TEXT NOT NULL UNIQUE,
                     signature BLOB NOT NULL);
"""
"""The file's tables (it is not a PAW store: none of the store's tables are in it)."""

SIGNED_COLUMNS: tuple[str, ...] = (
    "seq", "code", "commit_sha256", "supersedes_seq", "undoes_seq", "time_on_item_ms",
    "session_seq", "app_version", "codebook_version", "created_at", "prev_hash")
"""What a file event's hash covers, with the file id. The field and value enter as
`commit_sha256` = SHA-256(salt, field, value): the merged event's record entry carries
the signed event without its value in clear, and the coordinator, who opens the sealed
value, checks it against the commitment."""

VIEW_DROPPED = ("position", "total", "fields", "my_labels")
"""`CaseView` attributes not stored (they depend on the rater's labels and order)."""


def commitment(salt: str, field: str, value: str | None) -> str:
    """SHA-256 binding a file event's field and value (with a random salt, so the few
    categorical values cannot be guessed from it)."""
    return hashlib.sha256(dumps([salt, field, value]).encode()).hexdigest()


def event_hash(file_id: str, row: dict[str, Any]) -> str:
    """SHA-256 of a file event's `SIGNED_COLUMNS` and the file id (canonical JSON)."""
    return hashlib.sha256(dumps({"file_id": file_id, **{c: row.get(c) for c in
                                                        SIGNED_COLUMNS}}).encode()).hexdigest()


def statement_digest(statement: dict[str, Any]) -> str:
    """What the coordinator signs of a statement: SHA-256 of its canonical JSON."""
    return hashlib.sha256(dumps(statement).encode()).hexdigest()


def view_text(view: Any) -> str:
    """A case view as stored in the file (canonical JSON, order-dependent parts dropped)."""
    data = view.to_dict()
    for name in VIEW_DROPPED:
        data.pop(name, None)
    return dumps(data)


@dataclass(frozen=True)
class Packed:
    """What `pack` wrote."""

    path: str
    file_id: str
    n_cases: int


def pack(db: Any, set_name: str, rater: str, out: str | Path, coordinator: Person, *,
         supersede: bool = False) -> Packed:
    """Write rater `rater`'s own file of set `set_name` (coordinator only).

    One live file per rater and set: a rater labelling two files of one set would leave two
    histories whose merge, in either order, puts an older decision after a newer one. A
    second file is packed only with `supersede`, and the older file is then superseded:
    labels in it not merged by now are refused at merge (`merge`), naming the newer file.

    Raises:
        UserError: not a coordinator, `rater` not one of the set's two raters, `out`
            exists (nothing is overwritten), or the rater has a live file of the set and
            `supersede` is not given.
        NotFound: no such set or person.
    """
    from annotate.codebook import CODEBOOK_VERSION, FIELDS, robustness_test
    from annotate.sets.annotation_set import ensure_order, get_set
    from annotate.sets.cases import shown_case
    from annotate.sets.raters import named_raters
    from annotate.trust import record

    require(coordinator, "coordinator")
    out = Path(out).expanduser()
    if out.exists():
        raise UserError(f"--out: {out} already exists; choose a new file name")
    if not out.resolve().parent.is_dir():
        raise UserError(f"--out: folder {out.resolve().parent} does not exist")
    the_set = get_set(db, set_name)
    pair = named_raters(db, the_set.id)
    found = record.rows(db, "SELECT * FROM people WHERE name = ?", [rater])
    if not found:
        raise NotFound(f"--rater: no rater named {rater!r}")
    person = found[0]
    if pair is None or person["id"] not in (pair[0][0], pair[1][0]):
        raise UserError(f"--rater: {rater} is not one of the two raters of set {set_name!r}")
    if person["public_key"] is None or person["kdf_json"] is None:
        raise UserError(f"--rater: {rater} has no signing key yet (`paw raters upgrade`)")
    live = live_file(db, the_set.id, int(person["id"]))
    if live is not None and not supersede:
        merged = db.execute("SELECT COUNT(*) FROM merged_events WHERE file_id = ?",
                            [live[0]]).fetchone()[0]
        raise UserError(f"--rater: {rater} already has a file of set {set_name!r} (file "
                        f"{live[0][:8]}…, packed {live[1]}; {merged} labels merged from it); "
                        "merge it first, then pack again with --supersede (labels in the "
                        "older file not merged by then will be refused)")
    order = ensure_order(db, the_set, int(person["id"]), rater)
    codes = {r[0]: r[1] for r in db.execute("SELECT id, code FROM annotation_cases "
                                            "WHERE set_id = ?", [the_set.id])}
    cases = []
    for position, case_id in enumerate(order):
        code = codes[case_id]
        view = shown_case(db, code, coordinator)
        row = db.execute("SELECT ask_harm, ask_chain_registration, stratum FROM "
                         "annotation_cases WHERE id = ?", [case_id]).fetchone()
        asks = {"ask_harm": int(row[0]), "ask_chain_registration": int(row[1]),
                "stratum": robustness_test({"stratum": row[2]}) or ""}
        cases.append((position, code, view_text(view), dumps(asks)))
    file_id = secrets.token_hex(16)
    set_entry = [e for e in record.entries(db, "annotation_sets", the_set.id)
                 if e["kind"] == "set"]
    statement = {"format": FORMAT, "file_id": file_id, "set": the_set.name,
                 "set_entry_hash": set_entry[-1]["hash"] if set_entry else None,
                 "rater": rater, "rater_public_key": bytes(person["public_key"]).hex(),
                 "codebook_version": CODEBOOK_VERSION, "packed_at": utcnow(),
                 "cases": [[code, hashlib.sha256(text.encode()).hexdigest()]
                           for _, code, text, _ in cases]}
    partial = out.with_name(out.name + ".partial")
    partial.unlink(missing_ok=True)
    try:
        _write(partial, statement, person, cases, coordinator,
               {name: dumps({"title": f.title, "question": f.question, "kind": f.kind,
                             "values": [[v.value, v.key, v.help] for v in f.values],
                             "applies": f.applies, "needs": list(f.needs)})
                for name, f in FIELDS.items()})
        with transaction(db) as conn:
            cursor = conn.execute(
                "INSERT INTO rater_files (file_id, set_id, person_id, packed_by, packed_at, "
                "statement_json) VALUES (?, ?, ?, ?, ?, ?)",
                [file_id, the_set.id, person["id"], coordinator.id, statement["packed_at"],
                 dumps(statement)])
            row_id = cursor.lastrowid
            assert row_id is not None  # set by every INSERT
            record.append(conn, "pack", "rater_files", row_id,
                          record.row_content(conn, "rater_files", row_id) or {}, coordinator)
        partial.replace(out)
    finally:
        partial.unlink(missing_ok=True)
    return Packed(str(out), file_id, len(cases))


def live_file(db: Any, set_id: int, person_id: int) -> tuple[str, str] | None:
    """(file id, packed at) of the rater's newest file of the set, the only one whose
    labels `merge` still takes; None if none was packed."""
    row = db.execute("SELECT file_id, packed_at FROM rater_files WHERE set_id = ? AND "
                     "person_id = ? ORDER BY id DESC LIMIT 1", [set_id, person_id]).fetchone()
    return (str(row[0]), str(row[1])) if row else None


def _write(path: Path, statement: dict, person: dict, cases: list, coordinator: Person,
           codebook: dict[str, str]) -> None:
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        conn.executescript(SCHEMA)
        conn.execute("BEGIN")
        signature = keys.sign(coordinator.signing_key, statement_digest(statement))
        meta = {"format": FORMAT, "file_id": statement["file_id"], "set": statement["set"],
                "codebook_version": statement["codebook_version"],
                "statement_json": dumps(statement), "statement_signature": signature.hex(),
                "coordinator_public_key": keys.public_bytes(coordinator.signing_key).hex()}
        conn.executemany("INSERT INTO meta VALUES (?, ?)", sorted(meta.items()))
        conn.execute("INSERT INTO rater VALUES (?, ?, ?, ?, ?, ?, ?)",
                     [person["id"], person["name"], person["pass_salt"], person["pass_hash"],
                      person["kdf_json"], person["public_key"], person["wrapped_key"]])
        conn.executemany("INSERT INTO codebook VALUES (?, ?)", sorted(codebook.items()))
        conn.executemany("INSERT INTO cases VALUES (?, ?, ?, ?)", cases)
        conn.execute("COMMIT")
        conn.execute("PRAGMA journal_mode = DELETE")  # one self-contained file to hand over
    finally:
        conn.close()


# ---- opening a rater file ---------------------------------------------------------------------

def open_file(path: str | Path, *, readonly: bool = False) -> sqlite3.Connection:
    """A connection to a rater file (WAL and `synchronous = FULL` for labelling; read-only,
    changing nothing, for merging).

    Raises:
        UserError: no such file, not SQLite, or not a rater file of this format.
    """
    from store.db import connect, open_readonly

    where = str(path)
    if not Path(where).expanduser().is_file():
        raise UserError(no_such(where, "rater file"))
    if readonly:
        conn = open_readonly(where, schema=False).conn
    else:
        try:
            conn = connect(where)
        except sqlite3.Error as exc:
            from store.db import describe_sqlite_error

            raise UserError(describe_sqlite_error(exc, where)) from None
    try:
        found = conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
    except sqlite3.Error:
        found = None
    if found is None or found[0] != FORMAT:
        conn.close()
        got = found[0] if found else "not a rater file"
        raise UserError(f"{where}: expected a rater file ({FORMAT}), got {got!r} (pack one "
                        "with `paw annotate pack`)")
    return conn


def meta(conn: sqlite3.Connection) -> dict[str, str]:
    """The file's `meta` table as a dict."""
    return dict(conn.execute("SELECT key, value FROM meta").fetchall())


def sign_in(conn: sqlite3.Connection, where: str, passphrase: str) -> Person:
    """Check the rater's passphrase against the file's copy of their sealed key.

    Raises:
        UserError: wrong passphrase, or a key that is not the one the coordinator's
            statement names (the file was altered).
    """
    import hmac

    name, person_id, salt, tag, kdf, public, wrapped = conn.execute(
        "SELECT name, person_id, pass_salt, pass_hash, kdf_json, public_key, wrapped_key "
        "FROM rater").fetchone()
    master = keys.stretch(passphrase, bytes(salt), json.loads(kdf))
    if not hmac.compare_digest(keys.auth_tag(master), bytes(tag)):
        raise UserError(f"{name}: wrong passphrase")
    private = keys.unwrap(wrapped, master, name)
    statement = json.loads(meta(conn)["statement_json"])
    if private is None or keys.public_bytes(private) != bytes(public) or \
            bytes(public).hex() != statement.get("rater_public_key"):
        raise UserError(f"{where}: the rater's key in the file is not the one the coordinator "
                        "packed it with (the file was altered)")
    return issue(int(person_id), name, "rater", private)


def check_statement(conn: sqlite3.Connection, where: str) -> dict[str, Any]:
    """The file's statement, after checking the coordinator's signature on it and that its
    case list matches the file's cases (codes, order and the digest of every view).

    Raises:
        UserError: the statement's signature, or any case, does not match (naming which).
    """
    info = meta(conn)
    statement = json.loads(info["statement_json"])
    if not keys.signature_valid(bytes.fromhex(info["coordinator_public_key"]),
                                bytes.fromhex(info["statement_signature"]),
                                statement_digest(statement)):
        raise UserError(f"{where}: the coordinator's signature on the file's case list does "
                        "not verify (the file was altered)")
    stored = [(code, hashlib.sha256(text.encode()).hexdigest()) for code, text in
              conn.execute("SELECT code, view_json FROM cases ORDER BY position")]
    expected = [tuple(pair) for pair in statement["cases"]]
    if stored != expected:
        bad = next((c for c, e in zip(stored, expected, strict=False) if c != e), None)
        what = f"case {bad[0]} differs from" if bad else "the case list differs from"
        raise UserError(f"{where}: {what} what the coordinator packed (the file was altered)")
    return statement


def file_host() -> str:
    """Where a file session runs (host name), stamped on its sessions."""
    import socket

    return socket.gethostname() or os.uname().nodename
