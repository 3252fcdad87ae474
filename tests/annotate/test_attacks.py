"""A dishonest rater (or anyone with write access to the file) attacks the annotation record;
each attack is refused when it is tried or named by `verify_record` afterwards.

The attacker knows their own passphrase (alice's) and can run any SQL on the file, but
does not know bob's or carol's passphrase.
"""

from __future__ import annotations

import pytest

from annotate.adjudicate import adjudicate
from annotate.agreement.tables import rater_pair
from annotate.events import HASHED_COLUMNS, event_hash, record_label, start_session
from annotate.export import export_verified
from annotate.sets.annotation_set import get_set, rater_queue
from annotate.sets.audit import create_set
from annotate.trust import keys, record
from annotate.trust.people import authenticate, register
from annotate.verification.verify import verify_record
from store.db import dumps, utcnow
from store.errors import UserError
from tests.annotate.conftest import PASSPHRASE, named


@pytest.fixture
def labelled(db, audit, people):
    """Set 's' (raters alice and bob, coordinator carol); 3 labels each; one adjudication."""
    create_set(db, audit.audit_id, 12, per_family=None, seed=0, name="s", **named(people))
    for name in ("alice", "bob"):
        session = start_session(db, people[name], "s")
        for view in rater_queue(db, "s", people[name])[:3]:
            record_label(db, people[name], session, view.code, "gold_shift", "no_shift")
    code = rater_queue(db, "s", people["alice"])[0].code
    adjudicate(db, people["carol"], code, "validity", "valid", "reviewed the chart")
    assert verify_record(db).ok
    return code


def problems(db) -> list[tuple[str, str]]:
    report = verify_record(db)
    return [(p.kind, p.message) for p in [*report.labels.problems, *report.problems]]


def _self_made_person(db, name: str, role: str) -> int:
    """What an attacker can write by hand: a people row with a key they made themselves."""
    params, salt = keys.current_params(), keys.new_salt()
    master = keys.stretch(PASSPHRASE, salt, params)
    pair = keys.new_keypair()
    cursor = db.execute(
        "INSERT INTO people (name, role, pass_salt, pass_hash, kdf_json, public_key, "
        "wrapped_key, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [name, role, salt, keys.auth_tag(master), keys.params_json(params), pair.public,
         keys.wrap(pair.private, master, name), utcnow()])
    return int(cursor.lastrowid), pair


def _forge_entry(db, kind: str, table: str, ref_id: int, content: dict, signer_id: int,
                 private) -> None:
    """Append a record entry signed with a key the attacker holds, correctly chained."""
    last_id, last_hash = record.head(db)
    entry = {"id": last_id + 1, "kind": kind, "ref_table": table, "ref_id": ref_id,
             "person_id": signer_id, "content_json": dumps(content), "created_at": utcnow(),
             "prev_hash": last_hash}
    entry["hash"] = record.entry_hash(entry)
    entry["signature"] = keys.sign(private, entry["hash"])
    db["record_log"].insert(entry)


# ---- sock-puppet rater -------------------------------------------------------------------

def test_sock_puppet_rater_cannot_register_label_or_become_the_pair(db, people, labelled):
    alice = people["alice"]
    with pytest.raises(UserError, match="coordinator's passphrase"):
        register(db, "alice2", "rater", PASSPHRASE)
    with pytest.raises(UserError, match="coordinator role"):
        register(db, "alice2", "rater", PASSPHRASE, by=alice)
    # By hand: a people row with a key alice made. Sign-in refuses it; verify names it.
    _self_made_person(db, "alice2", "rater")
    with pytest.raises(UserError, match="not in the signed record"):
        authenticate(db, "alice2", PASSPHRASE)
    assert ("unrecorded", "person alice2: not in the signed record (added outside PAW)") in \
        problems(db)


def test_a_registered_rater_not_named_for_the_set_cannot_label_it(db, people, labelled):
    dave = register(db, "dave", "rater", PASSPHRASE, by=people["carol"])
    session = start_session(db, dave, "s")
    code = rater_queue(db, "s", dave)[0].code
    with pytest.raises(UserError, match="not one of the two raters of set 's' \\(alice, bob\\)"):
        record_label(db, dave, session, code, "gold_shift", "shifted")
    # The pair is the named one, whoever labelled most.
    (_, a), (_, b) = rater_pair(db, get_set(db, "s").id)
    assert (a, b) == ("alice", "bob")


def test_swapping_the_named_rater_by_hand_is_detected(db, people, labelled):
    dave = register(db, "dave", "rater", PASSPHRASE, by=people["carol"])
    db.execute("UPDATE annotation_sets SET rater_b_id = ? WHERE name = 's'", [dave.id])
    session = start_session(db, dave, "s")
    code = rater_queue(db, "s", dave)[0].code
    record_label(db, dave, session, code, "gold_shift", "shifted")  # the live row lets him
    found = problems(db)
    assert any(k == "altered" and "set s: differs from the record (rater_b_id" in m
               for k, m in found)
    assert any(k == "forged" and "an event by dave, who is not a named rater of its set" in m
               for k, m in found)


# ---- unauthenticated coordinator registration -------------------------------------------

def test_unauthenticated_coordinator_registration_is_refused_or_detected(db, people, labelled):
    with pytest.raises(UserError, match="coordinator's passphrase"):
        register(db, "mallory", "coordinator", PASSPHRASE)
    # By hand, with a self-signed entry that looks like a first coordinator's.
    mallory_id, pair = _self_made_person(db, "mallory", "coordinator")
    row = record.rows(db, "SELECT * FROM people WHERE id = ?", [mallory_id])[0]
    _forge_entry(db, "person", "people", mallory_id, record.person_content(row), mallory_id,
                 pair.private)
    with pytest.raises(UserError, match="registered without a coordinator although one "
                                        "already existed"):
        authenticate(db, "mallory", PASSPHRASE)
    assert any(k == "forged" and "registered without a coordinator although one already "
               "existed" in m for k, m in problems(db))


def test_deleting_the_coordinator_row_does_not_reopen_self_registration(db, people, labelled):
    db.execute("PRAGMA foreign_keys = OFF")
    db.execute("DELETE FROM people WHERE name = 'carol'")
    with pytest.raises(UserError, match="coordinator's passphrase"):
        register(db, "mallory", "coordinator", PASSPHRASE)
    assert any(k == "deleted" and "people row" in m for k, m in problems(db))


# ---- appended forged event ---------------------------------------------------------------

def _forged_event(db, victim_id: int, code_id: int) -> dict:
    last = db.execute("SELECT id, hash FROM label_events ORDER BY id DESC LIMIT 1").fetchone()
    row = {"id": last[0] + 1, "case_id": code_id, "person_id": victim_id, "session_id": None,
           "field": "gold_shift", "value": "shifted", "supersedes_id": None, "undoes_id": None,
           "time_on_item_ms": 900, "app_version": "paw 0.1.0", "codebook_version": "x",
           "created_at": utcnow(), "prev_hash": last[1]}
    row["hash"] = event_hash(row)  # a perfectly chained event: the plain chain cannot tell
    db.execute(f"INSERT INTO label_events ({', '.join([*HASHED_COLUMNS, 'hash'])}) VALUES "
               f"({', '.join('?' * (len(HASHED_COLUMNS) + 1))})",
               [row[c] for c in [*HASHED_COLUMNS, "hash"]])
    return row


def test_an_appended_forged_event_is_detected(db, people, labelled):
    bob, alice = people["bob"], people["alice"]
    case_id = db.execute("SELECT id FROM annotation_cases WHERE code = ?",
                         [labelled]).fetchone()[0]
    forged = _forged_event(db, bob.id, case_id)
    assert verify_record(db).labels.ok  # the unkeyed hash chain is fooled …
    assert ("unrecorded", f"label event {forged['id']}: not in the signed record (inserted "
            "outside PAW, or its entry is invalid)") in problems(db)  # … the record is not
    # alice signs an entry for it with her own key: attributed to bob, signed by alice.
    content = record.row_content(db, "label_events", forged["id"])
    _forge_entry(db, "label", "label_events", forged["id"], content, alice.id,
                 alice.signing_key)
    assert any(k == "forged" and "an event of bob signed by alice" in m
               for k, m in problems(db))


def test_a_forged_event_claiming_bobs_signature_does_not_verify(db, people, labelled):
    bob, alice = people["bob"], people["alice"]
    case_id = db.execute("SELECT id FROM annotation_cases WHERE code = ?",
                         [labelled]).fetchone()[0]
    forged = _forged_event(db, bob.id, case_id)
    content = record.row_content(db, "label_events", forged["id"])
    _forge_entry(db, "label", "label_events", forged["id"], content, bob.id, alice.signing_key)
    assert any(k == "forged" and "signature does not verify under bob's recorded key" in m
               for k, m in problems(db))


def test_a_rebuilt_record_breaks_every_later_signature(db, people, labelled):
    # Edit an early label, then rebuild both chains with recomputed hashes.
    db.execute("UPDATE label_events SET value = 'shifted' WHERE id = 1")
    previous = "0" * 64
    for row in record.rows(db, "SELECT * FROM label_events ORDER BY id"):
        row["prev_hash"] = previous
        previous = event_hash(row)
        db.execute("UPDATE label_events SET prev_hash = ?, hash = ? WHERE id = ?",
                   [row["prev_hash"], previous, row["id"]])
    previous = "0" * 64
    for entry in record.rows(db, "SELECT * FROM record_log ORDER BY id"):
        if entry["ref_table"] == "label_events":
            entry["content_json"] = dumps(record.row_content(db, "label_events",
                                                             entry["ref_id"]))
        entry["prev_hash"] = previous
        previous = record.entry_hash(entry)
        db.execute("UPDATE record_log SET content_json = ?, prev_hash = ?, hash = ? "
                   "WHERE id = ?", [entry["content_json"], entry["prev_hash"], previous,
                                    entry["id"]])
    report = verify_record(db)
    assert report.labels.ok  # the plain chain was rebuilt consistently
    forged = [p for p in report.problems if p.kind == "forged"]
    assert forged and all("signature does not verify" in p.message for p in forged)


# ---- edited adjudication, people row, variant text ---------------------------------------

def test_an_edited_adjudication_is_detected_and_blocks_the_export(db, people, labelled):
    db.execute("UPDATE adjudications SET value = 'invalid'")
    assert any(k == "altered" and "adjudication 1: differs from its signed record entry "
               "(value: 'valid' → 'invalid')" in m for k, m in problems(db))
    with pytest.raises(UserError, match="does not verify .*nothing exported"):
        export_verified(db, people["carol"], "s")
    db.execute("DELETE FROM adjudications")
    assert ("deleted", "adjudications row 1: deleted (record entry "
            f"{record.entries(db, 'adjudications', 1)[0]['id']} attests it)") in problems(db)


def test_an_edited_people_row_is_refused_at_sign_in_and_detected(db, people, labelled):
    db.execute("UPDATE people SET role = 'coordinator' WHERE name = 'alice'")
    with pytest.raises(UserError, match="differs from the record"):
        authenticate(db, "alice", PASSPHRASE)
    assert any(k == "altered" and "person alice: differs from the record (role: 'rater' → "
               "'coordinator')" in m for k, m in problems(db))


def test_replacing_a_raters_key_with_the_attackers_own_is_detected(db, people, labelled):
    # Take over bob: overwrite his passphrase tag, sealed key and public key with alice's.
    alice_row = record.rows(db, "SELECT * FROM people WHERE name = 'alice'")[0]
    db.execute("UPDATE people SET pass_salt = ?, pass_hash = ?, kdf_json = ?, public_key = ?, "
               "wrapped_key = ? WHERE name = 'bob'",
               [alice_row[c] for c in ("pass_salt", "pass_hash", "kdf_json", "public_key",
                                       "wrapped_key")])
    with pytest.raises(UserError, match="does not open"):
        authenticate(db, "bob", PASSPHRASE)  # alice's sealed key is bound to her name
    assert any(k == "altered" and "person bob: differs from the record (public_key" in m
               for k, m in problems(db))


def test_an_edited_variant_text_is_detected(db, people, labelled):
    variant = db.execute("SELECT variant_id FROM annotation_cases WHERE code = ?",
                         [labelled]).fetchone()[0]
    db.execute("UPDATE variants SET text = 'A different question entirely.' WHERE id = ?",
               [variant])
    assert ("altered", f"set s, case {labelled}: a text shown to raters (question, edit, "
            "options, gold, answers or chain) changed after the set was sealed") in problems(db)
    with pytest.raises(UserError, match="nothing exported"):
        export_verified(db, people["carol"], "s")


def test_a_case_swapped_to_another_variant_is_detected(db, people, labelled):
    other = db.execute("SELECT id FROM variants WHERE id NOT IN (SELECT variant_id FROM "
                       "annotation_cases) LIMIT 1").fetchone()[0]
    db.execute("UPDATE annotation_cases SET variant_id = ? WHERE code = ?", [other, labelled])
    assert any(k == "altered" and f"case {labelled}: variant_id" in m for k, m in problems(db))


def test_deleting_the_whole_record_is_detected_and_never_resealed_as_legacy(db, people,
                                                                           labelled):
    db.execute("DELETE FROM record_log")
    db.execute("UPDATE label_events SET value = 'shifted'")  # the edit it was meant to hide
    assert any(k == "unrecorded" for k, _ in problems(db))
    with pytest.raises(UserError, match="signed record is missing"):
        authenticate(db, "carol", PASSPHRASE)
    alice = people["alice"]  # already signed in before the deletion
    session = start_session(db, alice, "s")
    with pytest.raises(UserError, match="signed record is missing"):
        record_label(db, alice, session, labelled, "validity", "valid")
    assert db.execute("SELECT COUNT(*) FROM record_log").fetchone()[0] == 0
