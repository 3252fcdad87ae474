"""Registration stores only a salted scrypt hash; authentication; forged persons refused."""

from __future__ import annotations

import hashlib

import pytest

from annotate.people import Person, authenticate, register, require
from store.errors import NotFound, UserError

from tests.annotate.conftest import PASSPHRASE


def test_passphrase_is_stored_only_as_a_salted_scrypt_hash(db):
    register(db, "alice", "rater", PASSPHRASE)
    register(db, "bob", "rater", PASSPHRASE)
    rows = {r["name"]: r for r in db.query("SELECT * FROM people")}
    raw = b"".join(bytes(v) if isinstance(v, bytes) else str(v).encode()
                   for row in rows.values() for v in row.values())
    assert PASSPHRASE.encode() not in raw
    alice, bob = rows["alice"], rows["bob"]
    # Same passphrase, different salt -> different hash.
    assert alice["pass_salt"] != bob["pass_salt"]
    assert alice["pass_hash"] != bob["pass_hash"]
    expected = hashlib.scrypt(PASSPHRASE.encode(), salt=alice["pass_salt"], n=2**14, r=8, p=1,
                              dklen=32)
    assert alice["pass_hash"] == expected


def test_authenticate_accepts_the_right_passphrase_and_refuses_a_wrong_one(db):
    register(db, "alice", "rater", PASSPHRASE)
    person = authenticate(db, "alice", PASSPHRASE)
    assert (person.name, person.role) == ("alice", "rater")
    with pytest.raises(UserError, match="wrong passphrase"):
        authenticate(db, "alice", PASSPHRASE + "x")
    with pytest.raises(NotFound):
        authenticate(db, "mallory", PASSPHRASE)


def test_registration_validates_role_name_passphrase_and_uniqueness(db):
    with pytest.raises(UserError, match="role"):
        register(db, "alice", "admin", PASSPHRASE)
    with pytest.raises(UserError, match="passphrase"):
        register(db, "alice", "rater", "short")
    with pytest.raises(UserError, match="name"):
        register(db, "alice smith", "rater", PASSPHRASE)
    register(db, "alice", "rater", PASSPHRASE)
    with pytest.raises(UserError, match="already registered"):
        register(db, "alice", "coordinator", PASSPHRASE)


def test_a_hand_built_person_is_refused(db):
    real = register(db, "alice", "rater", PASSPHRASE)
    assert require(real) is real
    with pytest.raises(UserError, match="authenticated"):
        require(Person(real.id, real.name, real.role))
    # A coordinator's proof does not make them a rater, and roles are checked.
    carol = register(db, "carol", "coordinator", PASSPHRASE)
    with pytest.raises(UserError, match="rater role"):
        require(carol, "rater")
