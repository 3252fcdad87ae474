"""Tamper evidence: events altered, deleted or rebuilt with raw SQL are caught by `paw verify`;
only a coordinator sees which; heads are accepted in any case and as unique prefixes."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest

from annotate.events import record_label, start_session
from annotate.sets.annotation_set import rater_queue
from annotate.sets.audit import create_set
from annotate.verification.verify import record_head, resolve_head, verify_chain, verify_record
from store import open_db
from store.errors import UserError
from tests.annotate.conftest import child_env, named, save_to_file

COORDINATOR = ("--coordinator", "carol", "--passphrase-env", "PAW_TEST_PW")


@pytest.fixture
def chain_file(db, audit, people, tmp_path) -> str:
    """A store file with 6 events by alice and bob (ids 1..6)."""
    create_set(db, audit.audit_id, 40, per_family=None, name="s", **named(people))
    for name in ("alice", "bob", "alice"):
        person = people[name]
        session = start_session(db, person, "s")
        for view in rater_queue(db, "s", person)[:2]:
            record_label(db, person, session, view.code, "validity", "valid")
    return save_to_file(db, tmp_path / "paw.db")


def paw_verify(path: str, *args: str) -> subprocess.CompletedProcess:
    env = child_env()
    return subprocess.run([sys.executable, "-m", "workbench", "verify", "--db", path, *args],
                          capture_output=True, text=True, env=env, cwd=env["PYTHONPATH"])


def raw_sql(path: str, *statements: str) -> None:
    conn = sqlite3.connect(path)
    for sql in statements:
        conn.execute(sql)
    conn.commit()
    conn.close()


def test_intact_record_verifies(chain_file):
    result = paw_verify(chain_file)
    assert result.returncode == 0, result.stderr
    # 3 people + 1 set + 6 label events, all signed.
    assert "annotation record ok: 10 entries, 6 label events" in result.stdout


def test_an_altered_event_is_named_to_the_coordinator_only(chain_file):
    raw_sql(chain_file, "UPDATE label_events SET value = 'invalid' WHERE id = 3")
    plain = paw_verify(chain_file)
    assert plain.returncode == 1
    assert "altered" in plain.stdout and "event 3" not in plain.stdout
    assert "--details --coordinator" in plain.stdout
    result = paw_verify(chain_file, "--details", *COORDINATOR)
    assert result.returncode == 1
    assert "TAMPERED: event 3: content altered" in result.stdout
    # The row holds its value sealed (value NULL): the edit shows as NULL -> 'invalid'.
    assert "label event 3: differs from its signed record entry (value: None → " \
           "'invalid')" in result.stdout
    assert "event 4" not in result.stdout  # its link to event 3's stored hash still holds


def test_details_need_a_coordinator(chain_file):
    result = paw_verify(chain_file, "--details")
    assert result.returncode == 1 and "coordinator" in result.stderr
    result = paw_verify(chain_file, "--details", "--coordinator", "alice",
                        "--passphrase-env", "PAW_TEST_PW")
    assert result.returncode == 1 and "coordinator role" in result.stderr


def test_a_deleted_event_is_named(chain_file):
    raw_sql(chain_file, "DELETE FROM label_events WHERE id = 4")
    result = paw_verify(chain_file, "--details", *COORDINATOR)
    assert result.returncode == 1
    assert "event 4 deleted" in result.stdout
    assert "label_events row 4: deleted" in result.stdout


def test_the_newest_event_deleted_is_caught_by_its_record_entry(chain_file):
    # Deleting the newest event leaves a valid shorter label chain; its signed entry remains.
    raw_sql(chain_file, "DELETE FROM label_events WHERE id = 6")
    assert verify_chain(open_db(chain_file)).ok
    result = paw_verify(chain_file, "--details", *COORDINATOR)
    assert result.returncode == 1 and "label_events row 6: deleted" in result.stdout


def test_a_truncated_record_is_caught_by_the_anchored_head_in_any_case_and_prefix(chain_file):
    head = record_head(open_db(chain_file))[1]
    assert paw_verify(chain_file, "--head", head.upper()).returncode == 0
    assert paw_verify(chain_file, "--head", head[:12]).returncode == 0
    # Deleting the newest event and its entry leaves everything consistent but shorter.
    raw_sql(chain_file, "DELETE FROM label_events WHERE id = 6",
            "DELETE FROM record_log WHERE id = (SELECT MAX(id) FROM record_log)")
    assert paw_verify(chain_file).returncode == 0
    result = paw_verify(chain_file, "--head", head.upper(), "--details", *COORDINATOR)
    assert result.returncode == 1
    assert f"anchored record head {head[:16]}" in result.stdout


def test_head_prefixes_must_be_hex_long_enough_and_unique(db, chain_file):
    store = open_db(chain_file)
    head = record_head(store)[1]
    assert resolve_head(store, head[:8].upper()) == head
    with pytest.raises(UserError, match="at least 8"):
        resolve_head(store, head[:5])
    with pytest.raises(UserError, match="hexadecimal"):
        resolve_head(store, "not-a-hash")
    hashes = [r[0] for r in store.execute("SELECT hash FROM record_log")]
    # Find two hashes sharing a first digit and ask for that digit padded: ambiguity is
    # only possible with 8+ digits by chance, so build one: a prefix of 8 shared digits.
    store.execute("UPDATE record_log SET hash = ? WHERE id = 1", [head[:8] + "0" * 56])
    with pytest.raises(UserError, match="matches 2 hashes"):
        resolve_head(store, head[:8])
    assert len(set(hashes)) == len(hashes)


def test_a_person_sees_only_problems_with_their_own_entries(chain_file):
    raw_sql(chain_file, "UPDATE label_events SET value = 'invalid' WHERE person_id = 2")
    result = paw_verify(chain_file, "--person", "alice", "--passphrase-env", "PAW_TEST_PW")
    assert result.returncode == 1
    assert "TAMPERED" not in result.stdout  # bob's events were edited, not alice's
    # alice signed her own registration (before the coordinator existed) and 4 labels.
    assert "alice: the record's key" in result.stdout and "5 entries you signed" in \
        result.stdout
    result = paw_verify(chain_file, "--person", "bob", "--passphrase-env", "PAW_TEST_PW")
    assert result.stdout.count("TAMPERED: label event") == 2


def test_a_forged_replacement_with_a_valid_own_hash_breaks_the_next_link(db, audit, people):
    from annotate.events import event_hash

    create_set(db, audit.audit_id, 10, name="s", **named(people))
    alice = people["alice"]
    session = start_session(db, alice, "s")
    for view in rater_queue(db, "s", alice)[:3]:
        record_label(db, alice, session, view.code, "gold_shift", "no_shift")
    row = dict(next(iter(db.query("SELECT * FROM label_events WHERE id = 2"))))
    row["value"] = "shifted"
    forged_hash = event_hash(row)
    db.execute("UPDATE label_events SET value = 'shifted', hash = ? WHERE id = 2", [forged_hash])
    report = verify_chain(db)
    assert [(p.event_id, p.kind) for p in report.problems] == [(3, "relinked")]
    # The signed record names the edit itself, whatever the hash says.
    record = verify_record(db)
    assert [p.kind for p in record.problems] == ["altered"]
    assert "label event 2" in record.problems[0].message
