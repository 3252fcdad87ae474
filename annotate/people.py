"""Raters and coordinators: registration with a scrypt-hashed passphrase, authentication.

A `Person` is only obtained through `register` or `authenticate`; it carries a per-process
proof that the write functions check, so code cannot label as someone it merely names.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from typing import Literal

import sqlite_utils

from store.db import utcnow
from store.errors import NotFound, UserError

Role = Literal["rater", "coordinator"]
ROLES: tuple[str, ...] = ("rater", "coordinator")

# scrypt cost: 16 MiB of memory and ~50 ms per check; slow enough to make guessing a stolen
# hash expensive, fast enough for a login.
_SCRYPT_N, _SCRYPT_R, _SCRYPT_P, _DKLEN = 2**14, 8, 1, 32
_SALT_BYTES = 16
MIN_PASSPHRASE_CHARS = 8
"""Shortest passphrase accepted at registration."""

# A random key alive only in this process: `Person.proof` is an HMAC of the person's id,
# name and role under it, so a Person built by hand (not by authenticate) is rejected.
_PROCESS_KEY = secrets.token_bytes(32)


def _proof(person_id: int, name: str, role: str) -> str:
    return hmac.new(_PROCESS_KEY, f"{person_id}\x00{name}\x00{role}".encode(),
                    hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Person:
    """An authenticated rater or coordinator.

    Attributes:
        id: `people.id`.
        name: unique name, e.g. 'alice'.
        role: 'rater' or 'coordinator'.
        proof: issued by `authenticate`/`register`; checked by every write.
    """

    id: int
    name: str
    role: str
    proof: str = field(default="", repr=False, compare=False)

    @property
    def is_coordinator(self) -> bool:
        """True for the coordinator role."""
        return self.role == "coordinator"


def _hash(passphrase: str, salt: bytes) -> bytes:
    return hashlib.scrypt(passphrase.encode("utf-8"), salt=salt, n=_SCRYPT_N, r=_SCRYPT_R,
                          p=_SCRYPT_P, dklen=_DKLEN)


def _issue(person_id: int, name: str, role: str) -> Person:
    return Person(person_id, name, role, _proof(person_id, name, role))


def register(db: sqlite_utils.Database, name: str, role: str, passphrase: str) -> Person:
    """Register a rater or coordinator; only a salted scrypt hash of the passphrase is stored.

    Args:
        db: the store.
        name: unique person name (letters, digits, '-', '_', '.').
        role: 'rater' or 'coordinator'.
        passphrase: at least `MIN_PASSPHRASE_CHARS` characters.

    Returns:
        The new, authenticated `Person`.

    Raises:
        UserError: bad name, role or passphrase, or the name is taken.
    """
    if role not in ROLES:
        raise UserError(f"role: expected one of {', '.join(ROLES)}, got {role!r}")
    if not name or not all(c.isalnum() or c in "-_." for c in name):
        raise UserError(f"name: expected letters, digits, '-', '_' or '.', got {name!r}")
    if len(passphrase) < MIN_PASSPHRASE_CHARS:
        raise UserError(f"passphrase: expected at least {MIN_PASSPHRASE_CHARS} characters, "
                        f"got {len(passphrase)}")
    if db.execute("SELECT 1 FROM people WHERE name = ?", [name]).fetchone():
        raise UserError(f"name: {name!r} is already registered")
    salt = secrets.token_bytes(_SALT_BYTES)
    cursor = db.execute(
        "INSERT INTO people (name, role, pass_salt, pass_hash, created_at) VALUES (?, ?, ?, ?, ?)",
        [name, role, salt, _hash(passphrase, salt), utcnow()],
    )
    return _issue(int(cursor.lastrowid), name, role)


def authenticate(db: sqlite_utils.Database, name: str, passphrase: str) -> Person:
    """Check a passphrase and return the authenticated `Person`.

    Raises:
        NotFound: no person of that name.
        UserError: wrong passphrase.
    """
    row = db.execute("SELECT id, role, pass_salt, pass_hash FROM people WHERE name = ?",
                     [name]).fetchone()
    if row is None:
        raise NotFound(f"no rater or coordinator named {name!r} (add one with `paw raters add`)")
    person_id, role, salt, stored = row
    if not hmac.compare_digest(_hash(passphrase, bytes(salt)), bytes(stored)):
        raise UserError(f"{name}: wrong passphrase")
    return _issue(int(person_id), name, role)


def require(person: Person, role: str | None = None) -> Person:
    """Check that `person` came from `authenticate`/`register` (and has `role`, if given).

    Raises:
        UserError: a hand-built Person, or the wrong role.
    """
    if not isinstance(person, Person) or not hmac.compare_digest(
            person.proof, _proof(person.id, person.name, person.role)):
        raise UserError("person: expected an authenticated person (log in with a passphrase)")
    if role is not None and person.role != role:
        raise UserError(f"{person.name}: this needs the {role} role, not {person.role}")
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
