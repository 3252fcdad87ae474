"""Issue 21, criterion 5: `paw verify` proves *what* was labelled, not only *who* signed it.

The attacker is alice, a rater who knows her own passphrase and can run any SQL, and PAW's
own code, on the shared file. She signs with her own key events that PAW's screens would
refuse; she launders the record; she claims a not-yet-upgraded person's key; she edits the
inputs of the clinician tables; she offers a label-chain head. Each attack is refused or
named by `verify_record`.
"""

from __future__ import annotations

import hashlib

import pytest

from annotate.adjudicate import adjudicate
from annotate.agreement.tables import all_agreements
from annotate.events import HASHED_COLUMNS, event_hash, record_label, start_session
from annotate.export import export_verified
from annotate.sets.annotation_set import rater_queue
from annotate.sets.audit import create_set
from annotate.trust import keys, record
from annotate.trust.people import authenticate, upgrade_legacy
from annotate.verification.verify import resolve_head, verify_record
from store.db import transaction, utcnow
from store.errors import UserError
from tests.annotate.conftest import PASSPHRASE, named


@pytest.fixture
def labelled(db, audit, people):
    """Set 's' (raters alice, bob; coordinator carol); alice and bob label 3 cases each."""
    create_set(db, audit.audit_id, 12, per_family=None, seed=0, name="s", **named(people))
    sessions = {}
    for name in ("alice", "bob"):
        sessions[name] = start_session(db, people[name], "s")
        for view in rater_queue(db, "s", people[name])[:3]:
            record_label(db, people[name], sessions[name], view.code, "gold_shift", "no_shift")
    assert verify_record(db).ok
    return sessions


def findings(db) -> list[tuple[str, str]]:
    report = verify_record(db)
    return [(p.kind, p.message) for p in [*report.labels.problems, *report.problems]]


def forge(db, rater, **values) -> int:
    """Append a label event alice writes herself: correctly chained, and signed in the
    record with her own key (what running PAW's code with her passphrase lets her do)."""
    case = db.execute("SELECT id FROM annotation_cases WHERE ask_harm = 0 ORDER BY id"
                      ).fetchone()[0]
    row = {"case_id": case, "person_id": rater.id, "session_id": None, "field": "validity",
           "value": "valid", "supersedes_id": None, "undoes_id": None,
           "time_on_item_ms": 1000, "app_version": "paw 0.1.0", "codebook_version":
           "paw-codebook-1", "created_at": utcnow(), **values}
    with transaction(db) as conn:
        last = conn.execute("SELECT id, hash FROM label_events ORDER BY id DESC LIMIT 1"
                            ).fetchone()
        row["id"], row["prev_hash"] = last[0] + 1, last[1]
        row["hash"] = event_hash(row)
        columns = [*HASHED_COLUMNS, "hash"]
        conn.execute(f"INSERT INTO label_events ({', '.join(columns)}) VALUES "
                     f"({', '.join('?' * len(columns))})", [row[c] for c in columns])
        record.append_row(conn, "label", "label_events", row["id"], rater)
    return row["id"]


@pytest.mark.parametrize("values,expected", [
    ({"value": "banana"}, "value 'banana' is not allowed"),
    ({"field": "favourite_colour", "value": "blue"}, "field 'favourite_colour' is not in "
                                                     "the codebook"),
    ({"field": "harm", "value": "harmful"}, "harm is not asked for this case"),
    ({"field": "gold_shift_alt", "value": "C"}, "gold_shift_alt is not asked for this case "
                                                "(gold_shift is not 'shifted')"),
    ({"created_at": "2020-01-01T00:00:00+00:00"}, "before its set was sealed"),
    ({"created_at": "2099-01-01T00:00:00+00:00"}, "in the future"),
    ({"time_on_item_ms": -5000}, "time on item -5000 ms is negative"),
    ({"supersedes_id": 1}, "supersedes event 1, but the rater's previous validity event is"),
    ({"undoes_id": 2}, "undoes event 2, which is not this rater's event"),
], ids=["banana", "unknown-field", "harm-not-asked", "alt-without-shift", "2020", "future",
        "negative-duration", "false-supersedes", "foreign-undo"])
def test_a_signed_event_paw_would_refuse_is_named(db, people, labelled, values, expected):
    event = forge(db, people["alice"], **values)
    found = findings(db)
    assert any(f"label event {event}" in m and expected in m for _, m in found), found
    assert all(k in ("content", "time") for k, _ in found)  # the signatures are all valid
    with pytest.raises(UserError, match="does not verify"):
        export_verified(db, people["carol"], "s")


def test_another_raters_session_is_named(db, people, labelled):
    event = forge(db, people["alice"], session_id=labelled["bob"].id)
    assert ("content", f"label event {event} (case "
            ) in [(k, m[:len(f"label event {event} (case ")]) for k, m in findings(db)]
    assert any(f"session {labelled['bob'].id} is not one of this rater's" in m
               for _, m in findings(db))


def test_banana_stops_agreement_with_a_message_that_points_to_verify(db, people, labelled):
    forge(db, people["alice"], field="gold_shift", value="banana",
          case_id=db.execute("SELECT c.id FROM annotation_cases c JOIN label_events e ON "
                             "e.case_id = c.id WHERE e.person_id = ? LIMIT 1",
                             [people["bob"].id]).fetchone()[0])
    with pytest.raises(UserError, match="paw verify --details"):
        all_agreements(db, "s")


def test_a_backward_clock_is_flagged_not_failed(db, people, labelled):
    from datetime import datetime, timedelta, timezone

    from annotate.verification.content_check import check_events

    now = datetime.now(timezone.utc)
    forge(db, people["alice"], created_at=(now + timedelta(minutes=30)).isoformat())
    # bob's next event is stamped 29 minutes before alice's, committed just before it
    # (checked half an hour on, so neither is in the future).
    forge(db, people["bob"], created_at=(now + timedelta(minutes=1)).isoformat())
    report = check_events(db, now=now + timedelta(minutes=31))
    assert [(f.kind, f.warning) for f in report.findings] == [("time", True)]
    assert "before the event committed just before it" in report.findings[0].message


def test_a_far_gap_from_the_raters_previous_event_is_flagged(db, people, labelled):
    from datetime import datetime, timedelta

    from annotate.verification.content_check import check_events

    last = db.execute("SELECT MAX(created_at) FROM label_events").fetchone()[0]
    later = datetime.fromisoformat(last) + timedelta(days=45)
    forge(db, people["bob"], created_at=later.isoformat())
    report = check_events(db, now=later + timedelta(hours=1))
    assert [(f.kind, f.warning) for f in report.findings] == [("time", True)]
    assert "45 days after the same rater's previous event" in report.findings[0].message


# ---- laundering -----------------------------------------------------------------------------

def _paw01_hash(db, name: str, passphrase: str) -> None:
    salt = hashlib.sha256(name.encode()).digest()[:16]
    db.execute("UPDATE people SET pass_salt = ?, pass_hash = ?, kdf_json = NULL, public_key "
               "= NULL, wrapped_key = NULL, registered_by = NULL WHERE name = ?",
               [salt, keys.legacy_tag(passphrase, salt), name])


def test_laundering_into_legacy_entries_never_verifies_ok(db, people, labelled):
    # The store was upgraded to the signed record well before anyone labelled.
    db.execute("UPDATE _migrations SET applied_at = '2025-01-01T00:00:00+00:00'")
    mine = "mallory's own passphrase"
    db.execute("DELETE FROM record_log")
    for name in ("alice", "bob", "carol"):
        _paw01_hash(db, name, mine)
    db.execute("UPDATE label_events SET value = 'shifted' WHERE person_id = ?",
               [people["bob"].id])  # what the laundering hides; the chain recomputed:
    previous = "0" * 64
    for row in record.rows(db, "SELECT * FROM label_events ORDER BY id"):
        row["prev_hash"] = previous
        previous = event_hash(row)
        db.execute("UPDATE label_events SET prev_hash = ?, hash = ? WHERE id = ?",
                   [row["prev_hash"], previous, row["id"]])
    # The first coordinator of a "PAW 0.1" store upgrades alone; the others cannot.
    carol = authenticate(db, "carol", mine)
    with pytest.raises(UserError, match="a coordinator makes it"):
        authenticate(db, "bob", mine)
    upgrade_legacy(db, "bob", mine, by=carol)
    report = verify_record(db)
    assert not report.ok and report.labels.ok
    legacy = [p for p in report.problems if p.kind == "legacy"]
    assert len(legacy) == 1 and "unsigned legacy entries" in legacy[0].message
    # Every label event it sealed as legacy was made after the signed record existed.
    forged = [p for p in report.problems if p.kind == "forged"]
    # (3 people and 12 label events — 6 gold-shift labels, each with its empty new answer —
    # all made after the signed record existed.)
    assert len(forged) == 15 and all("after the signed record was introduced" in p.message
                                    for p in forged)


def test_claiming_a_legacy_persons_key_with_a_self_signed_entry_is_forged(db):
    from tests.annotate.test_people import _paw01_person

    _paw01_person(db, "carol", "coordinator")
    _paw01_person(db, "bob", "rater")
    authenticate(db, "carol", PASSPHRASE)  # the first coordinator: bob sealed as legacy
    # mallory makes "bob's" key herself and signs his person_key entry with it.
    pair, mine = keys.new_keypair(), "mallory's own passphrase"
    params, salt = keys.current_params(), keys.new_salt()
    master = keys.stretch(mine, salt, params)
    db.execute("UPDATE people SET public_key = ?, kdf_json = ?, pass_salt = ?, pass_hash = ?, "
               "wrapped_key = ? WHERE name = 'bob'",
               [pair.public, keys.params_json(params), salt, keys.auth_tag(master),
                keys.wrap(pair.private, master, "bob")])
    row = record.rows(db, "SELECT * FROM people WHERE name = 'bob'")[0]
    last_id, last_hash = record.head(db)
    claim = {"id": last_id + 1, "kind": "person_key", "ref_table": "people",
             "ref_id": row["id"], "person_id": row["id"],
             "content_json": record.dumps(record.person_content(row)), "created_at": utcnow(),
             "prev_hash": last_hash}
    claim["hash"] = record.entry_hash(claim)
    db["record_log"].insert({**claim, "signature": keys.sign(pair.private, claim["hash"])})
    messages = [m for k, m in findings(db) if k == "forged"]
    assert any("signed by that person alone" in m for m in messages), messages
    with pytest.raises(UserError, match="refused: their record entry is not valid"):
        authenticate(db, "bob", mine)


# ---- the inputs of the clinician tables -------------------------------------------------------

def _first_case(db) -> dict:
    return record.rows(db, "SELECT * FROM annotation_cases ORDER BY id LIMIT 1")[0]


@pytest.mark.parametrize("sql,what", [
    ("UPDATE variants SET family = 'M5' WHERE id = {variant_id}", "family: 'M"),
    ("UPDATE variants SET intent = 'P' WHERE id = {variant_id}", "intent: 'D' → 'P'"),
    ("UPDATE variants SET new = 'other token' WHERE id = {variant_id}", "new: "),
    ("UPDATE variants SET old = 'x' WHERE id = {variant_id}", "old: "),
    ("UPDATE models SET name = 'renamed' WHERE id = (SELECT model_id FROM generations "
     "WHERE id = {perturbed_generation_id})", "perturbed_model: "),
    ("UPDATE generations SET model_id = (SELECT MAX(id) FROM models WHERE id != "
     "(SELECT model_id FROM generations WHERE id = {perturbed_generation_id})) "
     "WHERE id = {perturbed_generation_id}", "perturbed_model: "),
], ids=["family", "intent", "new-token", "old-token", "model-name", "model-of-generation"])
def test_an_edited_input_of_the_clinician_tables_is_named(db, people, labelled, sql, what):
    case = _first_case(db)
    db.execute(sql.format(**case))
    messages = [m for k, m in findings(db) if k == "altered"]
    assert any(f"case {case['code']}: an input of the clinician tables changed" in m
               and what in m for m in messages), messages


def test_an_edited_verdict_is_named(db, audit, people):
    # A chain-registration LLM-judge verdict on every M-block answer, before sealing.
    for (generation,) in db.execute("SELECT id FROM generations WHERE output LIKE "
                                    "'As smollm2%'").fetchall():
        audit.judge(generation, "yes")
    create_set(db, audit.audit_id, 12, per_family=None, seed=0, name="s", **named(people))
    code, generation = db.execute("SELECT code, perturbed_generation_id FROM "
                                  "annotation_cases ORDER BY id LIMIT 1").fetchone()
    assert verify_record(db).ok
    db.execute("UPDATE judgements SET verdict = 'no' WHERE subject_generation_id = ?",
               [generation])
    messages = [m for k, m in findings(db) if k == "altered"]
    assert any(f"case {code}" in m and "verdict chain_registration/" in m
               and "'yes' → 'no'" in m for m in messages), messages


# ---- heads ------------------------------------------------------------------------------------

def test_a_label_chain_head_is_refused_and_the_record_head_catches_a_deleted_adjudication(
        db, people, labelled):
    code = rater_queue(db, "s", people["alice"])[0].code
    adjudicate(db, people["carol"], code, "validity", "valid", "read the chart")
    chain_head = db.execute("SELECT hash FROM label_events ORDER BY id DESC LIMIT 1"
                            ).fetchone()[0]
    record_head = record.head(db)[1]
    # The trailing adjudication and its entry deleted: a consistent, shorter store.
    db.execute("DELETE FROM adjudications")
    db.execute("DELETE FROM record_log WHERE id = (SELECT MAX(id) FROM record_log)")
    assert verify_record(db).ok
    with pytest.raises(UserError, match="is a label-chain head"):
        resolve_head(db, chain_head)
    report = verify_record(db, head=resolve_head(db, record_head))
    assert [p.kind for p in report.problems] == ["anchor"]


def test_paw_verify_never_says_ok_for_a_store_with_legacy_entries(db, tmp_path):
    from tests.annotate.conftest import save_to_file
    from tests.annotate.test_people import _paw01_person
    from tests.annotate.test_verify import paw_verify

    _paw01_person(db, "carol", "coordinator")
    _paw01_person(db, "olga", "rater")
    upgrade_legacy(db, "olga", PASSPHRASE, by=authenticate(db, "carol", PASSPHRASE))
    result = paw_verify(save_to_file(db, tmp_path / "old.db"))
    assert result.returncode == 1
    assert "annotation record NOT PROVEN (unsigned legacy entries)" in result.stdout
    assert " ok" not in result.stdout.split("record head")[0]
