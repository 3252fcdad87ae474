"""Issue 21, criterion 2: label values sealed in the shared file (X25519 + ChaCha20-Poly1305).

Reading `paw.db` with plain sqlite3 shows no rater's fields or values; a rater's own
process opens only her own labels; agreement is computed in the coordinator's signed-in
session; a sealed value cannot be moved to another event; keys swapped in by hand receive
nothing; `paw verify` checks sealed content only where it can open it.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest

from annotate.events import record_label, start_session
from annotate.sets.annotation_set import rater_queue
from annotate.sets.audit import create_set
from annotate.trust import keys, sealing
from store.errors import UserError
from tests.annotate.conftest import child_env, named, save_to_file

NOTE = "Patient history suggests anticoagulation, checked twice"
VALUES = {"gold_shift": "shifted", "gold_shift_alt": "C", "validity": "borderline",
          "note": NOTE}


@pytest.fixture
def shared(db, audit, people, tmp_path) -> tuple[str, dict]:
    """A store file where alice and bob labelled the same 4 cases (alice with VALUES)."""
    create_set(db, audit.audit_id, 12, per_family=None, seed=1, name="s", **named(people))
    codes = {}
    first = [v.code for v in rater_queue(db, "s", people["alice"])[:4]]
    for name in ("alice", "bob"):
        session = start_session(db, people[name], "s")
        codes[name] = first  # the same four cases
        for code in codes[name]:
            if name == "alice":
                for field, value in VALUES.items():
                    record_label(db, people[name], session, code, field, value)
            else:
                record_label(db, people[name], session, code, "gold_shift", "ambiguous")
                record_label(db, people[name], session, code, "validity", "invalid")
    return save_to_file(db, tmp_path / "shared.db"), codes


def every_text(path: str) -> str:
    """Every value of every table of the file, read with plain sqlite3 (not PAW)."""
    conn = sqlite3.connect(path)
    parts = []
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        for row in conn.execute(f"SELECT * FROM {table}"):
            parts += [str(v) for v in row]
    conn.close()
    return "\n".join(parts)


def test_sqlite3_shows_no_labelled_field_or_value(shared):
    path, _ = shared
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT field, value, sealed_json FROM label_events").fetchall()
    conn.close()
    # 24 labels; each gold-shift label also writes its new answer (empty or not): 8 more.
    assert len(rows) == 32 and all(f == "*" and v is None and s for f, v, s in rows)
    text = every_text(path)
    # Values and fields of both raters, anywhere in the file (events, record, sessions):
    for secret in ("shifted", "borderline", "ambiguous", "invalid", NOTE, "gold_shift_alt",
                   "anticoagulation"):
        assert secret not in text, secret


def test_categorical_labels_are_indistinguishable_by_length(shared):
    path, _ = shared
    conn = sqlite3.connect(path)
    lengths = {len(json.loads(s)["ct"]) for (s,) in conn.execute(
        "SELECT sealed_json FROM label_events")}
    conn.close()
    # Every field/value pair pads to one 64-byte block (+16-byte tag); the note to two.
    assert lengths == {2 * (64 + 16), 2 * (128 + 16)}


def read_as(path: str, name: str) -> dict:
    result = subprocess.run([sys.executable, "-m", "tests.annotate.sealed_reader", path, name,
                             "s"], capture_output=True, text=True, env=child_env(),
                            cwd=child_env()["PYTHONPATH"])
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_raters_process_opens_her_own_labels_only(shared, people):
    path, _ = shared
    seen = read_as(path, "alice")
    assert seen["held"] == [seen["me"]]
    assert {owner for owner, *_ in seen["opened"].values()} == {people["alice"].id}
    assert len(seen["opened"]) == 20 and len(seen["closed"]) == 12  # bob's 12 stay closed
    assert sorted({(f, v) for _, f, v in seen["opened"].values() if v is not None}) == \
        sorted(VALUES.items())
    assert seen["agreement"] is None and "sealed to the rater and the set's coordinator" in \
        seen["error"]


def test_agreement_is_computed_in_the_coordinators_session(shared, people):
    path, _ = shared
    seen = read_as(path, "carol")
    assert len(seen["opened"]) == 32 and seen["closed"] == []
    assert seen["agreement"]["gold_shift (3-way)"] == 4 and seen["error"] is None


def test_a_sealed_value_moved_to_another_event_does_not_open(db, shared, people):
    path, codes = shared
    conn = sqlite3.connect(path)
    (bob_sealed,) = conn.execute("SELECT sealed_json FROM label_events WHERE person_id = ? "
                                 "ORDER BY id LIMIT 1", [people["bob"].id]).fetchone()
    alice_row = conn.execute("SELECT id, case_id, person_id FROM label_events WHERE "
                             "person_id = ? ORDER BY id LIMIT 1",
                             [people["alice"].id]).fetchone()
    conn.close()
    # Even with every key held (this process registered all three), the associated data
    # binds the ciphertext to bob's own event.
    assert sealing.open_sealed(bob_sealed, event_id=alice_row[0], case_id=alice_row[1],
                               person_id=alice_row[2]) is None


def test_a_receiving_key_swapped_in_by_hand_gets_no_labels(db, audit, people):
    create_set(db, audit.audit_id, 12, per_family=None, name="s", **named(people))
    mallory_box = sealing.box_public(keys.new_keypair().private)
    db.execute("UPDATE people SET box_public_key = ? WHERE name = 'carol'", [mallory_box])
    session = start_session(db, people["alice"], "s")
    code = rater_queue(db, "s", people["alice"])[0].code
    with pytest.raises(UserError, match="carol: labels are not sealed to them"):
        record_label(db, people["alice"], session, code, "validity", "valid")
    assert db.execute("SELECT COUNT(*) FROM label_events").fetchone()[0] == 0


def test_verify_checks_sealed_content_only_where_it_can_open_it(shared, people, tmp_path):
    from tests.annotate.test_verify import COORDINATOR, paw_verify

    path, _ = shared
    plain = paw_verify(path)
    assert plain.returncode == 0
    assert "32 sealed label values not opened, their content unchecked" in plain.stdout
    details = paw_verify(path, "--details", *COORDINATOR)
    assert details.returncode == 0 and "not opened" not in details.stdout
    signed_in = paw_verify(path, *COORDINATOR)  # the verdict only, every value checked
    assert signed_in.returncode == 0 and "not opened" not in signed_in.stdout
    assert "TAMPERED" not in signed_in.stdout and "key alice" not in signed_in.stdout
    own = paw_verify(path, "--person", "bob", "--passphrase-env", "PAW_TEST_PW")
    assert "20 sealed label values not opened" in own.stdout  # alice's stay closed to bob
