"""Raters and coordinators: registration, sign-in, and each person's signing key.

Who may register whom: before any coordinator exists, anyone may register (a rater, or
the first coordinator: setting up a new annotation database); once one exists, every
registration needs a coordinator's passphrase and is signed by that coordinator in the
record (`annotate/trust/record.py`). Trust in a rater comes from a coordinator naming them as one
of a set's two raters (`annotate.sets.raters`), never from registration alone.

A `Person` is only obtained through `register` or `authenticate`; it carries a per-process
proof that the write functions check, and the person's private signing key, unsealed by
their passphrase, with which every event they write is signed (`Person` and that check:
`annotate/trust/identity.py`). Passphrase hashing and keys: `annotate/trust/keys.py`.
"""

from __future__ import annotations

import hmac
from typing import Any

import sqlite_utils

from annotate.trust import keys
from annotate.trust.identity import Person, issue, require
from annotate.trust.sealing import box_public
from store.db import loads, transaction, utcnow
from store.errors import NotFound, UserError

ROLES: tuple[str, ...] = ("rater", "coordinator")


def coordinator_exists(db: Any) -> bool:
    """True once a coordinator is registered (in the table or in the signed record)."""
    if db.execute("SELECT 1 FROM people WHERE role = 'coordinator' LIMIT 1").fetchone():
        return True
    # A coordinator row deleted by hand does not reopen self-registration.
    return db.execute(
        "SELECT 1 FROM record_log WHERE ref_table = 'people' AND "
        "json_extract(content_json, '$.role') = 'coordinator' LIMIT 1").fetchone() is not None


def people_registered(db: Any) -> bool:
    """True once anyone is registered (in the table or in the signed record): from then on
    the auditor's workbench opens only for a coordinator (`paw ui`'s sign-in gate)."""
    if db.execute("SELECT 1 FROM people LIMIT 1").fetchone():
        return True
    return db.execute("SELECT 1 FROM record_log WHERE ref_table = 'people' LIMIT 1"
                      ).fetchone() is not None


def _validate(name: str, role: str, passphrase: str) -> None:
    if role not in ROLES:
        raise UserError(f"role: expected one of {', '.join(ROLES)}, got {role!r}")
    if not name or not all(c.isalnum() or c in "-_." for c in name):
        raise UserError(f"name: expected letters, digits, '-', '_' or '.', got {name!r}")
    from annotate.trust.passphrase import check

    check(passphrase, name)


def register(db: sqlite_utils.Database, name: str, role: str, passphrase: str, *,
             by: Person | None = None) -> Person:
    """Register a rater or coordinator with a new signing key sealed under the passphrase.

    Args:
        db: the store.
        name: unique person name (letters, digits, '-', '_', '.').
        role: 'rater' or 'coordinator'.
        passphrase: at least 8 characters and zxcvbn strength 3 of 4
            (`annotate.trust.passphrase`).
        by: the authenticated coordinator registering them; required once a coordinator
            exists. Without one (a new database), the person signs their own entry.

    Returns:
        The new, authenticated `Person`.

    Raises:
        UserError: bad name, role or passphrase, a taken name, or no coordinator's
            authority when one is needed.
    """
    from annotate.trust import record

    _validate(name, role, passphrase)
    if by is not None:
        require(by, "coordinator")
    params = keys.current_params()
    salt = keys.new_salt()
    master = keys.stretch(passphrase, salt, params)  # slow (scrypt): outside the lock
    pair = keys.new_keypair()
    with transaction(db) as conn:
        # Checked under the write lock, so two first coordinators cannot race in.
        if by is None and coordinator_exists(conn):
            raise UserError(f"{name}: registering needs a coordinator's passphrase once a "
                            "coordinator exists (`paw raters add NAME --coordinator C`)")
        if conn.execute("SELECT 1 FROM people WHERE name = ?", [name]).fetchone():
            raise UserError(f"name: {name!r} is already registered")
        cursor = conn.execute(
            "INSERT INTO people (name, role, pass_salt, pass_hash, kdf_json, public_key, "
            "wrapped_key, registered_by, created_at, box_public_key) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [name, role, salt, keys.auth_tag(master), keys.params_json(params), pair.public,
             keys.wrap(pair.private, master, name), by.id if by else None, utcnow(),
             box_public(pair.private)])
        assert cursor.lastrowid is not None  # set by every INSERT
        person = issue(cursor.lastrowid, name, role, pair.private)
        row = record.rows(conn, "SELECT * FROM people WHERE id = ?", [person.id])[0]
        record.append(conn, "person", "people", person.id, record.person_content(row),
                      by or person)
    return person


def _person_row(db: Any, name: str) -> dict[str, Any]:
    from annotate.trust.record import rows

    found = rows(db, "SELECT * FROM people WHERE name = ?", [name])
    if not found:
        raise NotFound(f"no rater or coordinator named {name!r} (add one with `paw raters add`)")
    return found[0]


def authenticate(db: sqlite_utils.Database, name: str, passphrase: str, *,
                 write: bool = True) -> Person:
    """Check a passphrase, unseal the person's signing key and return the `Person`.

    A hash made at a lower cost than today's (or by PAW 0.1) is re-made at the current
    cost; a PAW 0.1 person gets their signing key here, recorded as a `person_key` entry.
    With `write=False` (a read-only store: `paw verify`) nothing is re-made or recorded.
    The person must be in the signed record as they are in the table (a row inserted or
    edited by hand is refused).

    Raises:
        NotFound: no person of that name.
        UserError: wrong passphrase, a key that does not match the record, or a person
            the record does not vouch for.
    """
    from annotate.trust.record import check_person

    row = _person_row(db, name)
    salt = bytes(row["pass_salt"])
    if row["kdf_json"] is None:
        if not hmac.compare_digest(keys.legacy_tag(passphrase, salt), bytes(row["pass_hash"])):
            raise UserError(f"{name}: wrong passphrase")
        if not write:
            raise UserError(f"{name}: registered by PAW 0.1 and has no signing key yet; "
                            "sign in once on the writable store first")
        if row["role"] != "coordinator" or _keyed_coordinator(db):
            raise UserError(f"{name}: registered by PAW 0.1 and has no signing key yet; a "
                            f"coordinator makes it with them: `paw raters upgrade {name} "
                            "--coordinator NAME`")
        return _upgrade_legacy(db, row, passphrase, None)
    params = loads(row["kdf_json"])
    master = keys.stretch(passphrase, salt, params)
    if not hmac.compare_digest(keys.auth_tag(master), bytes(row["pass_hash"])):
        raise UserError(f"{name}: wrong passphrase")
    private = keys.unwrap(row["wrapped_key"], master, name)
    if private is None or keys.public_bytes(private) != bytes(row["public_key"] or b""):
        raise UserError(f"{name}: the stored signing key does not open with this passphrase "
                        "(the people row was altered; a coordinator should run `paw verify "
                        "--details`)")
    problem = check_person(db, int(row["id"]))
    if problem:
        raise UserError(f"{name}: refused: {problem}")
    if write and keys.weaker_than_current(params):
        _rewrap(db, row, passphrase, private)
    person = issue(int(row["id"]), name, row["role"], private)
    if write and row.get("box_public_key") is None:
        _add_box_key(db, person)
    return person


def _add_box_key(db: sqlite_utils.Database, person: Person) -> None:
    """A person registered before m009 gets the key sealed label values are encrypted to
    (derived from their signing key), recorded in a `person_box` entry they sign."""
    from annotate.trust import record

    with transaction(db) as conn:
        conn.execute("UPDATE people SET box_public_key = ? WHERE id = ? AND box_public_key "
                     "IS NULL", [box_public(person.signing_key), person.id])
        fresh = record.rows(conn, "SELECT * FROM people WHERE id = ?", [person.id])[0]
        record.append(conn, "person_box", "people", person.id, record.person_content(fresh),
                      person)


def _rewrap(db: sqlite_utils.Database, row: dict[str, Any], passphrase: str,
            private: Any) -> None:
    """Re-make the hash at today's cost, sealing the same private key (public key kept)."""
    params, salt = keys.current_params(), keys.new_salt()
    master = keys.stretch(passphrase, salt, params)
    db.execute("UPDATE people SET pass_salt = ?, pass_hash = ?, kdf_json = ?, wrapped_key = ? "
               "WHERE id = ?", [salt, keys.auth_tag(master), keys.params_json(params),
                                keys.wrap(private, master, row["name"]), row["id"]])


def _keyed_coordinator(db: Any) -> bool:
    """True once a coordinator with a signing key is registered."""
    return db.execute("SELECT 1 FROM people WHERE role = 'coordinator' AND public_key IS NOT "
                      "NULL LIMIT 1").fetchone() is not None


def upgrade_legacy(db: sqlite_utils.Database, name: str, passphrase: str, *,
                   by: Person) -> Person:
    """Make a PAW 0.1 person's signing key with a coordinator (`paw raters upgrade`).

    The person types their own (old) passphrase; the coordinator, signed in, signs the
    `person_key` entry, so nobody can claim a not-yet-upgraded person's key alone.

    Raises:
        UserError: `by` is not a coordinator, a wrong passphrase, or a person who already
            has a key.
    """
    require(by, "coordinator")
    row = _person_row(db, name)
    if row["kdf_json"] is not None:
        raise UserError(f"{name}: already has a signing key (nothing to upgrade)")
    if not hmac.compare_digest(keys.legacy_tag(passphrase, bytes(row["pass_salt"])),
                               bytes(row["pass_hash"])):
        raise UserError(f"{name}: wrong passphrase")
    return _upgrade_legacy(db, row, passphrase, by)


def _upgrade_legacy(db: sqlite_utils.Database, row: dict[str, Any], passphrase: str,
                    by: Person | None) -> Person:
    """A PAW 0.1 person's upgrade: today's hash cost, a new key, a `person_key` entry signed
    by the coordinator `by` (by the person only as the first keyed coordinator)."""
    from annotate.trust import record

    params, salt = keys.current_params(), keys.new_salt()
    master = keys.stretch(passphrase, salt, params)
    pair = keys.new_keypair()
    with transaction(db) as conn:
        if by is None and _keyed_coordinator(conn):  # checked again under the write lock
            raise UserError(f"{row['name']}: a coordinator makes this key now: `paw raters "
                            f"upgrade {row['name']} --coordinator NAME`")
        record.seal_legacy(conn)  # the row as it was, before this upgrade changes it
        sealed = [e for e in record.entries(conn, "people", row["id"])]
        if not sealed or sealed[-1]["kind"] != "legacy" or \
                sealed[-1]["content"] != record.legacy_person_content(row):
            raise UserError(f"{row['name']}: refused: the people row differs from the record "
                            "sealed at the upgrade (a coordinator should run `paw verify "
                            "--details`)")
        conn.execute(
            "UPDATE people SET pass_salt = ?, pass_hash = ?, kdf_json = ?, public_key = ?, "
            "wrapped_key = ?, box_public_key = ? WHERE id = ?",
            [salt, keys.auth_tag(master), keys.params_json(params), pair.public,
             keys.wrap(pair.private, master, row["name"]), box_public(pair.private),
             row["id"]])
        person = issue(int(row["id"]), row["name"], row["role"], pair.private)
        fresh = record.rows(conn, "SELECT * FROM people WHERE id = ?", [person.id])[0]
        record.append(conn, "person_key", "people", person.id, record.person_content(fresh),
                      by or person)
    return person


def list_people(db: sqlite_utils.Database) -> list[tuple[str, str]]:
    """(name, role) of everyone registered, by name; no secrets."""
    return [(r[0], r[1]) for r in db.execute("SELECT name, role FROM people ORDER BY name")]


def person_id(db: sqlite_utils.Database, name: str) -> int:
    """Id of the person called `name` (for read-only reports; writes need a `Person`).

    Raises:
        NotFound: no such person.
    """
    row = db.execute("SELECT id FROM people WHERE name = ?", [name]).fetchone()
    if row is None:
        raise NotFound(f"no rater or coordinator named {name!r}")
    return int(row[0])


def key_fingerprint(db: sqlite_utils.Database, name: str) -> str:
    """Short fingerprint of a person's public key, for anchoring outside the database."""
    row = db.execute("SELECT public_key FROM people WHERE name = ?", [name]).fetchone()
    if row is None:
        raise NotFound(f"no rater or coordinator named {name!r}")
    return keys.fingerprint(row[0])
