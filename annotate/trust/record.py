"""The signed record: every row that decides an annotation result, hash-chained and signed.

One append-only table, `record_log`. Each write that decides a result appends one entry in
the same transaction as the row it attests:

- `person`: a `people` row (name, role, public key, registered by); signed by the
  registering coordinator, or by the person themself before any coordinator exists;
- `person_key`: the key a pre-m005 person got at their upgrade; signed by a coordinator
  (the first coordinator: themself);
- `person_box`: the receiving key (sealed label values) a pre-m009 person got at sign-in;
  signed by that person;
- `set`: a set's two raters (with their public keys), its case list, each case's variant
  and generations, and a digest of every text the raters are shown; signed by the
  coordinator who named the raters;
- `label`: a `label_events` row; signed by the rater;
- `adjudication`: an `adjudications` row; signed by the coordinator;
- `legacy`: rows written before m005, sealed unsigned by the first write after the
  upgrade; signed by nobody.

An entry's `hash` is SHA-256 over the canonical JSON of all its columns including the
previous entry's hash; its `signature` is the signer's Ed25519 signature of that hash, so
the chain cannot be re-linked or rebuilt without every signer's private key.
`annotate.verification.verify` checks all of it against the live tables.
"""

from __future__ import annotations

import hashlib
import sqlite3
from typing import Any

from annotate.trust.identity import Person, require
from store.db import dumps, loads, utcnow

GENESIS_HASH = "0" * 64
"""`prev_hash` of the first entry."""

ENTRY_COLUMNS: tuple[str, ...] = (
    "id", "kind", "ref_table", "ref_id", "person_id", "content_json", "created_at",
    "prev_hash",
)
"""Columns an entry's hash covers (everything but the hash and the signature)."""

PERSON_COLUMNS: tuple[str, ...] = ("id", "name", "role", "public_key", "registered_by",
                                   "created_at")
"""`people` columns a `person` entry attests (the passphrase tag and sealed key are left
out: they change when the hash cost is raised, and a wrong one cannot sign anyway)."""

SET_COLUMNS: tuple[str, ...] = ("id", "name", "audit_id", "config_json", "codebook_version",
                                "created_at", "rater_a_id", "rater_b_id", "raters_named_by")
CASE_COLUMNS: tuple[str, ...] = ("id", "code", "variant_id", "baseline_generation_id",
                                 "perturbed_generation_id", "stratum", "ask_harm",
                                 "ask_chain_registration")

# Everything a case view is built from (annotate/sets/cases.py), so a text edited after the
# set was sealed changes the digest even where a screen does not show that part yet.
_SHOWN_SQL = """
SELECT c.id, i.kind, i.question, i.context, i.options_json, i.gold, v.text AS edited,
       v.options_json AS variant_options, v.gold AS variant_gold,
       b.answer AS answer_before, b.output AS chain_before,
       p.answer AS answer_after, p.output AS chain_after
FROM annotation_cases c
JOIN variants v ON v.id = c.variant_id
JOIN items i ON i.id = v.item_id
LEFT JOIN generations b ON b.id = c.baseline_generation_id
LEFT JOIN generations p ON p.id = c.perturbed_generation_id
WHERE c.set_id = ? ORDER BY c.id
"""


def rows(conn: Any, sql: str, params: list | tuple = ()) -> list[dict[str, Any]]:
    """Query results as dicts (works on a sqlite3 connection or a sqlite_utils Database)."""
    cursor = conn.execute(sql, params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]


def plain(value: Any) -> Any:
    """A column value as JSON can hold it (BLOBs as hex)."""
    return bytes(value).hex() if isinstance(value, (bytes, bytearray, memoryview)) else value


def entry_hash(entry: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of an entry's `ENTRY_COLUMNS`."""
    return hashlib.sha256(dumps({c: entry.get(c) for c in ENTRY_COLUMNS}).encode()).hexdigest()


# ---- what each kind attests ---------------------------------------------------------------

def person_content(row: dict[str, Any]) -> dict[str, Any]:
    """What a `person`/`person_key`/`person_box` entry attests of a `people` row (the
    receiving key only once the row has one: entries made before m009 have none)."""
    content = {c: plain(row.get(c)) for c in PERSON_COLUMNS}
    if row.get("box_public_key") is not None:
        content["box_public_key"] = plain(row["box_public_key"])
    return content


def legacy_person_content(row: dict[str, Any]) -> dict[str, Any]:
    """A pre-m005 person: name, role and a digest of the stored salt and hash."""
    secret = hashlib.sha256(bytes(row["pass_salt"]) + bytes(row["pass_hash"])).hexdigest()
    return {"id": row["id"], "name": row["name"], "role": row["role"],
            "created_at": row["created_at"], "secret_sha256": secret}


def row_content(conn: Any, table: str, row_id: int) -> dict[str, Any] | None:
    """Every column of one `label_events` or `adjudications` row (None if it is gone)."""
    found = rows(conn, f"SELECT * FROM {table} WHERE id = ?", [row_id])
    return {k: plain(v) for k, v in found[0].items()} if found else None


def shown_digests(conn: Any, set_id: int) -> dict[int, str]:
    """case id -> SHA-256 of every text its view is built from (question, edit, options,
    gold, answers and chains)."""
    out = {}
    for row in rows(conn, _SHOWN_SQL, [set_id]):
        case_id = row.pop("id")
        out[case_id] = hashlib.sha256(dumps(row).encode()).hexdigest()
    return out


def set_content(conn: Any, set_id: int) -> dict[str, Any]:
    """What a `set` entry attests: the set row, its raters' keys, and every case with a
    digest of its shown texts and its inputs to the clinician tables
    (`annotate.trust.record_inputs`)."""
    from annotate.trust.record_inputs import SET_CONTENT_VERSION, case_inputs

    the_set = rows(conn, f"SELECT {', '.join(SET_COLUMNS)} FROM annotation_sets WHERE id = ?",
                   [set_id])[0]
    raters = []
    for key in ("rater_a_id", "rater_b_id"):
        if the_set[key] is not None:
            person = rows(conn, "SELECT id, name, public_key FROM people WHERE id = ?",
                          [the_set[key]])[0]
            raters.append({k: plain(v) for k, v in person.items()})
    shown = shown_digests(conn, set_id)
    inputs = case_inputs(conn, set_id)
    cases = [{**case, "shown_sha256": shown.get(case["id"]), "inputs": inputs.get(case["id"])}
             for case in rows(conn, f"SELECT {', '.join(CASE_COLUMNS)} FROM annotation_cases "
                              "WHERE set_id = ? ORDER BY id", [set_id])]
    return {"v": SET_CONTENT_VERSION, "set": the_set, "raters": raters, "cases": cases}


# ---- appending ----------------------------------------------------------------------------

def head(conn: Any) -> tuple[int | None, str]:
    """(id, hash) of the newest entry; (None, genesis) for an empty record."""
    row = conn.execute("SELECT id, hash FROM record_log ORDER BY id DESC LIMIT 1").fetchone()
    return (row[0], row[1]) if row else (None, GENESIS_HASH)


def _insert(conn: sqlite3.Connection, kind: str, ref_table: str, ref_id: int,
            content: dict[str, Any], signer: Person | None) -> dict[str, Any]:
    from annotate.trust.keys import sign

    last_id, last_hash = head(conn)
    entry: dict[str, Any] = {
        "id": (last_id or 0) + 1, "kind": kind, "ref_table": ref_table, "ref_id": int(ref_id),
        "person_id": signer.id if signer else None, "content_json": dumps(content),
        "created_at": utcnow(), "prev_hash": last_hash}
    entry["hash"] = entry_hash(entry)
    entry["signature"] = sign(signer.signing_key, entry["hash"]) if signer else None
    columns = [*ENTRY_COLUMNS, "hash", "signature"]
    conn.execute(f"INSERT INTO record_log ({', '.join(columns)}) VALUES "
                 f"({', '.join('?' * len(columns))})", [entry[c] for c in columns])
    return entry


def seal_legacy(conn: sqlite3.Connection, skip: tuple[str, int] | None = None) -> int:
    """Seal rows written before the record existed as unsigned `legacy` entries (once).

    Runs at the first append to an empty record: from then on an edit of those rows is
    detected too, although nobody's signature vouches for them (docs/annotation.md).

    Args:
        conn: a connection inside the write transaction.
        skip: (table, id) of the row the pending append attests (new, not legacy).

    Returns:
        How many entries were written (0 when the record already has entries).
    """
    if conn.execute("SELECT 1 FROM record_log LIMIT 1").fetchone():
        return 0
    _refuse_missing_record(conn, skip[1] if skip and skip[0] == "people" else None)
    written = 0
    for person in rows(conn, "SELECT * FROM people ORDER BY id"):
        if skip == ("people", person["id"]):
            continue
        _insert(conn, "legacy", "people", person["id"], legacy_person_content(person), None)
        written += 1
    for (set_id,) in conn.execute("SELECT id FROM annotation_sets ORDER BY id").fetchall():
        if skip == ("annotation_sets", set_id):
            continue
        _insert(conn, "legacy", "annotation_sets", set_id, set_content(conn, set_id), None)
        written += 1
    for table in ("label_events", "adjudications"):
        for (row_id,) in conn.execute(f"SELECT id FROM {table} ORDER BY id").fetchall():
            if skip == (table, row_id):
                continue
            _insert(conn, "legacy", table, row_id, row_content(conn, table, row_id) or {}, None)
            written += 1
    return written


def _refuse_missing_record(conn: Any, new_person: int | None) -> None:
    """An empty record with people who have signing keys was deleted, not never made:
    sealing that state as legacy would launder whatever was edited meanwhile."""
    from store.errors import UserError

    if conn.execute("SELECT 1 FROM people WHERE public_key IS NOT NULL AND id IS NOT ? "
                    "LIMIT 1", [new_person]).fetchone():
        raise UserError("the signed annotation record is empty although people have signing "
                        "keys: it was deleted; restore a copy made with `paw backup`")


def append(conn: sqlite3.Connection, kind: str, ref_table: str, ref_id: int,
           content: dict[str, Any], signer: Person) -> dict[str, Any]:
    """Append one signed entry; call inside the transaction that wrote the row it attests.

    Args:
        conn: a connection inside `store.transaction` (BEGIN IMMEDIATE holds the chain).
        kind: 'person', 'person_key', 'set', 'label' or 'adjudication'.
        ref_table: the table of the attested row.
        ref_id: its id.
        content: what is attested (from the `*_content` builders above).
        signer: an authenticated person holding their signing key.

    Returns:
        The stored entry.
    """
    require(signer)
    if not conn.in_transaction:
        raise RuntimeError("record.append must run inside the transaction of its row")
    seal_legacy(conn, skip=(ref_table, int(ref_id)))
    return _insert(conn, kind, ref_table, ref_id, content, signer)


def entries(conn: Any, ref_table: str | None = None, ref_id: int | None = None,
            ) -> list[dict[str, Any]]:
    """Stored entries in id order (optionally only those attesting one row), content parsed."""
    sql = "SELECT * FROM record_log WHERE 1"
    params: list[str | int] = []
    if ref_table is not None:
        sql += " AND ref_table = ?"
        params.append(ref_table)
    if ref_id is not None:
        sql += " AND ref_id = ?"
        params.append(ref_id)
    out = rows(conn, sql + " ORDER BY id", params)
    for entry in out:
        entry["content"] = loads(entry["content_json"])
    return out


# ---- who may sign what (shared by sign-in and `paw verify`) --------------------------------

class RecordState:
    """What the record has established so far while it is replayed in id order."""

    def __init__(self) -> None:
        self.keys: dict[int, bytes] = {}
        """person id -> recorded public key."""
        self.roles: dict[int, str] = {}
        """person id -> recorded role."""
        self.names: dict[int, str] = {}
        """person id -> recorded name."""
        self.coordinator_seen = False
        """True once any coordinator is recorded (self-registration then ends)."""
        self.keyed_coordinator_seen = False
        """True once a coordinator with a signing key is recorded (from then on a legacy
        person's first key is made with a coordinator, never by the person alone)."""
        self.legacy_people: set[int] = set()
        """People sealed as legacy who have not yet recorded a key."""

    def signer_key(self, person_id: int | None) -> bytes | None:
        """The recorded public key of a signer (None when they have none yet)."""
        return self.keys.get(person_id) if person_id is not None else None


def person_entry_problem(state: RecordState, entry: dict[str, Any]) -> str | None:
    """Why a people entry is not valid given what precedes it (None when it is).

    Rules: a `legacy` entry is unsigned; a `person_key` (a legacy person's first key,
    once) is signed by a coordinator who has a key — or by the person themself only when
    they are a coordinator and no coordinator has a key yet (the first upgraded
    coordinator, like the setup); a self-signed `person` entry is valid only while no
    coordinator is recorded; any other `person` entry is signed by the coordinator it
    names as registrar.
    """
    from annotate.trust.keys import signature_valid

    content, kind, signer = entry["content"] or {}, entry["kind"], entry["person_id"]
    subject = entry["ref_id"]
    if kind == "legacy":
        return None
    if kind == "person_box":
        if signer != subject or subject not in state.keys:
            return "a receiving key recorded by someone other than its person"
        if content.get("public_key") != state.keys[subject].hex() or \
                content.get("role") != state.roles.get(subject) or \
                not content.get("box_public_key"):
            return "a receiving-key entry that changes more than the receiving key"
        key = state.keys[subject]
    elif kind == "person_key":
        if subject not in state.legacy_people:
            return "a key recorded for a person who already has one or was never sealed"
        if signer == subject:
            if content.get("role") != "coordinator" or state.keyed_coordinator_seen:
                return ("a legacy person's first key signed by that person alone (a "
                        "coordinator makes it: `paw raters upgrade`)")
            key = bytes.fromhex(content.get("public_key") or "")
        else:
            if state.roles.get(signer) != "coordinator" or signer not in state.keys:
                return "a legacy person's first key signed by someone who is not a coordinator"
            key = state.keys[signer]
    elif kind == "person":
        registrar = content.get("registered_by")
        if registrar is None:
            if state.coordinator_seen:
                return "registered without a coordinator although one already existed"
            if signer != subject:
                return "a self-registration signed by someone else"
            key = bytes.fromhex(content.get("public_key") or "")
        else:
            if signer != registrar:
                return "signed by someone other than the coordinator it names as registrar"
            if state.roles.get(registrar) != "coordinator":
                return "registered by someone the record does not know as a coordinator"
            key = state.signer_key(registrar) or b""
    else:
        return f"an entry of kind {kind!r} attesting a people row"
    if not signature_valid(key, entry["signature"], entry["hash"]):
        return "its signature does not verify"
    return None


def advance(state: RecordState, entry: dict[str, Any]) -> None:
    """Update `state` with a people entry taken as valid."""
    content = entry["content"] or {}
    subject = entry["ref_id"]
    state.roles[subject] = content.get("role", state.roles.get(subject, ""))
    state.names[subject] = content.get("name", state.names.get(subject, ""))
    if content.get("role") == "coordinator":
        state.coordinator_seen = True
    if entry["kind"] == "legacy":
        state.legacy_people.add(subject)
    else:
        state.legacy_people.discard(subject)
        if content.get("public_key"):
            state.keys[subject] = bytes.fromhex(content["public_key"])
            if content.get("role") == "coordinator":
                state.keyed_coordinator_seen = True


def check_person(conn: Any, person_id: int) -> str | None:
    """At sign-in: why the record does not vouch for this person as they stand (or None).

    Replays the people entries (few) up to the person's latest one: it must be intact,
    validly signed by someone entitled to, and match the live `people` row.
    """
    if conn.execute("SELECT 1 FROM record_log LIMIT 1").fetchone() is None:
        has_key = conn.execute("SELECT public_key FROM people WHERE id = ?",
                               [person_id]).fetchone()
        if has_key and has_key[0] is not None:
            return "the signed record is missing (deleted); restore a copy made with `paw backup`"
        return None  # a store from before m005 whose record is not sealed yet
    live = rows(conn, "SELECT * FROM people WHERE id = ?", [person_id])
    if not live:
        return "no such person"
    state = RecordState()
    latest = None
    for entry in entries(conn, "people"):
        if entry_hash(entry) != entry["hash"]:
            if entry["ref_id"] == person_id:
                return "their record entry was altered"
            continue
        problem = person_entry_problem(state, entry)
        if entry["ref_id"] == person_id:
            if problem:
                return f"their record entry is not valid ({problem})"
            latest = entry
        if problem is None:
            advance(state, entry)
    if latest is None:
        return "not in the signed record (the people row was added outside PAW)"
    expected = (legacy_person_content(live[0]) if latest["kind"] == "legacy"
                else person_content(live[0]))
    if expected != latest["content"]:
        return "the people row differs from the record (name, role, key or registrar edited)"
    return None


def append_row(conn: sqlite3.Connection, kind: str, table: str, row_id: int,
               signer: Person) -> dict[str, Any]:
    """Append a signed entry attesting every column of a `label_events`/`adjudications` row
    just written in this transaction."""
    return append(conn, kind, table, row_id, row_content(conn, table, row_id) or {}, signer)
