"""People: scrypt at a stored cost, sealed signing keys, who may register whom, sign-in that
upgrades old hashes, and forged persons refused."""

from __future__ import annotations

import hashlib
import time

import pytest

from annotate.trust import keys
from annotate.trust.identity import Person, require
from annotate.trust.people import authenticate, register, upgrade_legacy
from annotate.trust.record import entries
from store.db import loads
from store.errors import NotFound, UserError
from tests.annotate.conftest import PASSPHRASE


def test_only_a_salted_tag_a_sealed_key_and_a_public_key_are_stored(db):
    register(db, "alice", "rater", PASSPHRASE)
    register(db, "bob", "rater", PASSPHRASE)
    rows = {r["name"]: r for r in db.query("SELECT * FROM people")}
    raw = b"".join(bytes(v) if isinstance(v, bytes) else str(v).encode()
                   for row in rows.values() for v in row.values())
    assert PASSPHRASE.encode() not in raw
    alice, bob = rows["alice"], rows["bob"]
    # Same passphrase, different salt -> different tag, key and sealed key.
    assert alice["pass_salt"] != bob["pass_salt"] and alice["pass_hash"] != bob["pass_hash"]
    assert alice["public_key"] != bob["public_key"] and len(alice["public_key"]) == 32
    # The tag is HMAC(scrypt(passphrase, salt, stored cost), label), recomputed by hand.
    params = loads(alice["kdf_json"])
    master = hashlib.scrypt(PASSPHRASE.encode(), salt=alice["pass_salt"], n=params["n"],
                            r=params["r"], p=params["p"], dklen=32)
    assert alice["pass_hash"] == keys.auth_tag(master)
    # The sealed key opens with the passphrase only, and is the public key's private half.
    private = keys.unwrap(alice["wrapped_key"], master, "alice")
    assert keys.public_bytes(private) == alice["public_key"]
    wrong = hashlib.scrypt(b"wrong passphrase", salt=alice["pass_salt"], n=params["n"],
                           r=params["r"], p=params["p"], dklen=32)
    assert keys.unwrap(alice["wrapped_key"], wrong, "alice") is None


def test_production_cost_is_scrypt_2_17_and_tests_lower_it_only_by_the_variable(monkeypatch):
    monkeypatch.delenv(keys.TEST_COST_ENV, raising=False)
    assert keys.current_params() == {"alg": "scrypt", "n": 2**17, "r": 8, "p": 1}
    assert keys.cost_warning() is None
    monkeypatch.setenv(keys.TEST_COST_ENV, "10")
    assert keys.current_params()["n"] == 2**10
    assert "tests only" in keys.cost_warning()
    monkeypatch.setenv(keys.TEST_COST_ENV, "3")
    with pytest.raises(UserError, match=keys.TEST_COST_ENV):
        keys.current_params()


def test_a_hash_is_checked_at_its_stored_cost_and_raised_at_next_sign_in(db, monkeypatch):
    monkeypatch.setenv(keys.TEST_COST_ENV, "10")
    register(db, "alice", "rater", PASSPHRASE)
    public = db.execute("SELECT public_key FROM people").fetchone()[0]
    monkeypatch.setenv(keys.TEST_COST_ENV, "12")  # "today's cost" is now higher
    authenticate(db, "alice", PASSPHRASE)
    kdf, again = db.execute("SELECT kdf_json, public_key FROM people").fetchone()
    assert loads(kdf)["n"] == 2**12 and again == public  # same key, re-sealed
    monkeypatch.setenv(keys.TEST_COST_ENV, "10")  # a lower setting never weakens a hash
    authenticate(db, "alice", PASSPHRASE)
    assert loads(db.execute("SELECT kdf_json FROM people").fetchone()[0])["n"] == 2**12


def test_the_real_cost_is_measurably_slower(db, monkeypatch):
    monkeypatch.delenv(keys.TEST_COST_ENV, raising=False)
    salt = keys.new_salt()
    started = time.perf_counter()
    keys.stretch(PASSPHRASE, salt, keys.current_params())
    real = time.perf_counter() - started
    started = time.perf_counter()
    keys.stretch(PASSPHRASE, salt, {"alg": "scrypt", "n": 2**10, "r": 8, "p": 1})
    cheap = time.perf_counter() - started
    assert real > 20 * cheap  # 128x the work; a ratio, not a wall-clock bound


def _paw01_person(db, name: str, role: str) -> bytes:
    """A PAW 0.1 row: scrypt n=2**14 of the passphrase itself, no cost, no key."""
    salt = name.encode().ljust(16, b"s")
    old = hashlib.scrypt(PASSPHRASE.encode(), salt=salt, n=2**14, r=8, p=1, dklen=32)
    db.execute("INSERT INTO people (name, role, pass_salt, pass_hash, created_at) "
               "VALUES (?, ?, ?, ?, 't')", [name, role, salt, old])
    return old


def test_a_pre_m005_hash_still_verifies_and_is_upgraded_with_a_coordinator(db):
    old = _paw01_person(db, "olga", "rater")
    with pytest.raises(UserError, match="wrong passphrase"):
        authenticate(db, "olga", "not her passphrase")
    # Her first key is made with a coordinator, never by her alone (issue 21).
    with pytest.raises(UserError, match="paw raters upgrade olga --coordinator"):
        authenticate(db, "olga", PASSPHRASE)
    carol = register(db, "carol", "coordinator", PASSPHRASE)
    with pytest.raises(UserError, match="wrong passphrase"):
        upgrade_legacy(db, "olga", "not her passphrase", by=carol)
    olga = upgrade_legacy(db, "olga", PASSPHRASE, by=carol)
    row = next(iter(db.query("SELECT * FROM people WHERE name = 'olga'")))
    assert row["kdf_json"] is not None and row["pass_hash"] != old
    assert keys.public_bytes(olga.signing_key) == row["public_key"]
    kinds = [(e["kind"], e["person_id"]) for e in entries(db, "people", olga.id)]
    assert kinds == [("legacy", None), ("person_key", carol.id)]
    assert authenticate(db, "olga", PASSPHRASE).id == olga.id  # the new hash works
    with pytest.raises(UserError, match="already has a signing key"):
        upgrade_legacy(db, "olga", PASSPHRASE, by=carol)


def test_the_first_pre_m005_coordinator_upgrades_alone_then_nobody_does(db):
    _paw01_person(db, "carol", "coordinator")
    _paw01_person(db, "dora", "coordinator")
    carol = authenticate(db, "carol", PASSPHRASE)  # no coordinator has a key yet
    assert [(e["kind"], e["person_id"]) for e in entries(db, "people", carol.id)] == [
        ("legacy", None), ("person_key", carol.id)]
    with pytest.raises(UserError, match="a coordinator makes it"):
        authenticate(db, "dora", PASSPHRASE)


def test_authenticate_accepts_the_right_passphrase_and_refuses_a_wrong_one(db):
    register(db, "alice", "rater", PASSPHRASE)
    person = authenticate(db, "alice", PASSPHRASE)
    assert (person.name, person.role) == ("alice", "rater") and person.signing_key is not None
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
        register(db, "alice", "rater", PASSPHRASE)


def test_once_a_coordinator_exists_registering_needs_one(db):
    alice = register(db, "alice", "rater", PASSPHRASE)  # before any coordinator: allowed
    carol = register(db, "carol", "coordinator", PASSPHRASE)  # the setup
    for role in ("rater", "coordinator"):
        with pytest.raises(UserError, match="coordinator's passphrase"):
            register(db, "mallory", role, PASSPHRASE)
    with pytest.raises(UserError, match="coordinator role"):
        register(db, "mallory", "rater", PASSPHRASE, by=alice)
    bob = register(db, "bob", "rater", PASSPHRASE, by=carol)
    signed = {e["ref_id"]: e["person_id"] for e in entries(db, "people")}
    assert signed == {alice.id: alice.id, carol.id: carol.id, bob.id: carol.id}


def test_a_hand_built_person_is_refused(db):
    real = register(db, "alice", "rater", PASSPHRASE)
    assert require(real) is real
    with pytest.raises(UserError, match="authenticated"):
        require(Person(real.id, real.name, real.role))
    # A coordinator's proof does not make them a rater, and roles are checked.
    carol = register(db, "carol", "coordinator", PASSPHRASE)
    with pytest.raises(UserError, match="rater role"):
        require(carol, "rater")
