"""Issue 21, criterion 1: a rater's own file — packed, labelled offline, merged back once.

The packed file is read with plain sqlite3 (not PAW) to show it holds no model name,
operator id, arm, audit, verdict or other rater; labelling it keeps every guarantee of the
shared store (durable at the keypress, undo, resume, signed events); merging checks the
file's signatures and case list against the set and imports each event exactly once; a
file of another store or set, a tampered file and a forged rater are refused, naming why.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from annotate.agreement.tables import all_agreements
from annotate.events import record_label, start_session
from annotate.raterfile.file import FORMAT, open_file, pack, sign_in
from annotate.raterfile.labelling import FileLabelling
from annotate.raterfile.merge import merge, merge_folder
from annotate.sets.annotation_set import rater_queue
from annotate.sets.audit import create_set
from annotate.trust import keys
from annotate.verification.verify import verify_record
from store import open_db
from store.errors import UserError
from tests.annotate.conftest import ARMS, M_EDITS, PASSPHRASE, make_audit, named

FORBIDDEN = ("smollm2", "qwen", *ARMS, "audit-1", "bob", "carol", "synthetic",
             *(op for op, *_ in M_EDITS), "F1_truncate_50", "shuffle_a", "llm_judge",
             "M2|", "M3|", "M4|", "M5|", "|synthetic|")
"""What the file must not hold: model and arm names, the audit and dataset, the other
rater and the coordinator, operator ids, strata and judge methods."""


@pytest.fixture
def packed(db, audit, people, tmp_path) -> dict:
    for (generation,) in db.execute("SELECT id FROM generations WHERE output LIKE "
                                    "'As smollm2%'").fetchall():
        audit.judge(generation, "yes")  # verdicts in the store: none may reach the file
    create_set(db, audit.audit_id, 12, per_family=None, seed=4, name="s", **named(people))
    result = pack(db, "s", "alice", tmp_path / "alice.paw-rater", people["carol"])
    return {"path": result.path, "file_id": result.file_id, "n": result.n_cases}


def sqlite_text(path: str) -> tuple[set[str], str]:
    conn = sqlite3.connect(path)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    text = []
    for table in tables:
        for row in conn.execute(f"SELECT * FROM {table}"):
            text += [v for v in row if isinstance(v, str)]
    conn.close()
    return tables, "\n".join(text)


def test_the_packed_file_holds_only_what_the_rater_may_see(db, people, packed):
    tables, text = sqlite_text(packed["path"])
    assert tables == {"meta", "rater", "codebook", "cases", "sessions", "events"}
    for word in FORBIDDEN:
        assert word.lower() not in text.lower(), word
    # ... and what she needs: every case, in her order, with its texts; her sealed key.
    conn = sqlite3.connect(packed["path"])
    codes = [r[0] for r in conn.execute("SELECT code FROM cases ORDER BY position")]
    rater = conn.execute("SELECT name, public_key FROM rater").fetchall()
    assert conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()[0] == FORMAT
    conn.close()
    assert codes == [v.code for v in rater_queue(db, "s", people["alice"])]
    assert rater == [("alice", keys.public_bytes(people["alice"].signing_key))]
    assert "[model]" in text  # the reasoning shown, its model name scrubbed
    assert "Septic shock" in text and "does not have" in text  # options and the edit


def open_as_alice(path: str) -> FileLabelling:
    conn = open_file(path)
    labelling = FileLabelling(conn, sign_in(conn, path, PASSPHRASE))
    labelling.start()
    return labelling


def test_labelling_the_file_is_durable_undoable_resumable_and_signed(packed):
    path = packed["path"]
    with pytest.raises(UserError, match="wrong passphrase"):
        sign_in(open_file(path), path, "not her passphrase")
    first = open_as_alice(path)
    queue = first.queue()
    code = queue[0].code
    with pytest.raises(UserError, match="harm: not asked|not asked for case"):
        first.record(next(v.code for v in queue if not v.ask_harm), "harm", "harmful")
    with pytest.raises(UserError, match="gold_shift: expected one of"):
        first.record(code, "gold_shift", "banana")
    first.record(code, "gold_shift", "no_shift", 1200)
    first.record(code, "validity", "invalid", 1300)
    undone = first.undo()
    assert (undone.field, undone.value) == ("validity", None)
    first.record(code, "validity", "valid", 1400)
    # Durable: a second connection (another process would see the same) reads them.
    conn = sqlite3.connect(path)
    stored = conn.execute("SELECT seq, field, value, undoes_seq, signature FROM events "
                          "ORDER BY seq").fetchall()
    conn.close()
    # A gold-shift label writes its new answer with it (empty here), as in the store.
    assert [(s, f, v, u) for s, f, v, u, _ in stored] == [
        (1, "gold_shift", "no_shift", None), (2, "gold_shift_alt", None, None),
        (3, "validity", "invalid", None), (4, "validity", None, 3),
        (5, "validity", "valid", None)]
    digest = open_file(path).execute("SELECT hash FROM events WHERE seq = 5").fetchone()[0]
    assert keys.signature_valid(keys.public_bytes(first.person.signing_key), stored[4][4],
                                digest)
    # Resume: a new session sees her labels; the first case needing work comes next.
    again = open_as_alice(path)
    view = again.view(code)
    assert view.labels_dict == {"gold_shift": "no_shift", "validity": "valid"}
    assert again.undo() is None  # undo is per session


def test_merging_imports_each_event_once_and_agreement_follows(db, people, packed):
    alice = open_as_alice(packed["path"])
    for view in alice.queue()[:5]:
        alice.record(view.code, "gold_shift", "no_shift")
    bob = people["bob"]
    session = start_session(db, bob, "s")
    for view in rater_queue(db, "s", bob):
        record_label(db, bob, session, view.code, "gold_shift", "no_shift")
    first = merge(db, packed["path"], people["carol"])
    # Each gold-shift label is two events (itself and its empty new answer).
    assert (first.imported, first.already, first.rater) == (10, 0, "alice")
    again = merge(db, packed["path"], people["carol"])
    assert (again.imported, again.already) == (0, 10)  # twice adds nothing
    alice.record(alice.queue()[5].code, "gold_shift", "ambiguous")  # the file grew
    assert merge(db, packed["path"], people["carol"]).imported == 2
    gold = next(a for a in all_agreements(db, "s") if a.field == "gold_shift" and
                not a.binary)
    assert gold.n == 6
    report = verify_record(db)
    assert report.ok, report.problems
    kinds = [r[0] for r in db.execute("SELECT kind FROM record_log ORDER BY id")]
    assert kinds.count("merged_label") == 12 and kinds.count("pack") == 1


def test_a_file_of_another_store_or_set_is_refused(db, audit, people, packed, tmp_path):
    from annotate.trust.people import register

    other = open_db(tmp_path / "other.db")
    make_audit(other, 4)
    register(other, "alice", "rater", PASSPHRASE)
    carol = register(other, "carol", "coordinator", PASSPHRASE)
    with pytest.raises(UserError, match="not packed from this store"):
        merge(other, packed["path"], carol)
    # A second set of the same store: its file carries its own set, sealed case list and
    # statement; re-sealing the first set after packing makes its old file stale.
    create_set(db, audit.audit_id, 6, per_family=None, seed=9, name="s2", **named(people))
    second = pack(db, "s2", "alice", tmp_path / "alice-s2.paw-rater", people["carol"])
    assert merge(db, second.path, people["carol"]).set_name == "s2"
    db.execute("UPDATE annotation_sets SET rater_a_id = NULL, rater_b_id = NULL WHERE name "
               "= 's'")
    from annotate.sets.annotation_set import assign_raters

    assign_raters(db, people["carol"], "s", ("alice", "bob"))  # sealed again
    with pytest.raises(UserError, match="was sealed again after the file was packed"):
        merge(db, packed["path"], people["carol"])


def _edit(path: str, sql: str, params: tuple = ()) -> None:
    conn = sqlite3.connect(path)
    conn.execute(sql, params)
    conn.commit()
    conn.close()


@pytest.mark.parametrize("attack,expected", [
    ("UPDATE events SET value = 'ambiguous' WHERE seq = 1",
     "event 1: its field or value was changed after it was signed"),
    ("UPDATE events SET time_on_item_ms = 99 WHERE seq = 1", "event 1: altered"),
    ("DELETE FROM events WHERE seq = 1", "event 2: the file's event chain is broken"),
    ("UPDATE cases SET view_json = replace(view_json, 'Septic shock', 'Sepsis') "
     "WHERE position = 0", "differs from what the coordinator packed"),
    ("UPDATE meta SET value = 'other-set' WHERE key = 'set'", None),
], ids=["value", "time", "deleted", "case-text", "set-name"])
def test_a_tampered_file_is_refused_naming_why(db, people, packed, attack, expected):
    alice = open_as_alice(packed["path"])
    for view in alice.queue()[:2]:
        alice.record(view.code, "validity", "valid")
    alice.conn.close()
    _edit(packed["path"], attack)
    if expected is None:  # the set's name is read from the signed statement, not meta
        assert merge(db, packed["path"], people["carol"]).set_name == "s"
        return
    with pytest.raises(UserError, match=expected):
        merge(db, packed["path"], people["carol"])
    assert db.execute("SELECT COUNT(*) FROM label_events").fetchone()[0] == 0


def test_a_forged_rater_is_refused(db, people, packed):
    # mallory swaps in a key of her own and signs "alice's" events with it.
    from annotate.trust.identity import issue

    pair = keys.new_keypair()
    params, salt = keys.current_params(), keys.new_salt()
    master = keys.stretch("mallory's passphrase", salt, params)
    _edit(packed["path"], "UPDATE rater SET public_key = ?, pass_salt = ?, pass_hash = ?, "
          "kdf_json = ?, wrapped_key = ?", (pair.public, salt, keys.auth_tag(master),
                                            keys.params_json(params),
                                            keys.wrap(pair.private, master, "alice")))
    with pytest.raises(UserError, match="not the one the coordinator packed it with"):
        sign_in(open_file(packed["path"]), packed["path"], "mallory's passphrase")
    forged = FileLabelling(open_file(packed["path"]), issue(1, "alice", "rater", pair.private))
    forged.start()
    forged.record(forged.queue()[0].code, "validity", "invalid")
    with pytest.raises(UserError, match="forged rater"):
        merge(db, packed["path"], people["carol"])


def test_the_coordinators_live_view_merges_a_watched_folder(db, people, packed, tmp_path):
    from tests.annotate.conftest import save_to_file
    from workbench.tui.report import compute_report

    alice = open_as_alice(packed["path"])
    for view in alice.queue()[:3]:
        alice.record(view.code, "gold_shift", "shifted")
        alice.record(view.code, "gold_shift_alt", "B")
    folder = Path(packed["path"]).parent
    (folder / "notes.txt").write_text("not a rater file")  # ignored
    path = save_to_file(db, tmp_path / "coordinator.db")
    report = compute_report(path, "s", "family", watch=str(folder),
                            coordinator=people["carol"])
    alice_progress = next(p for p in report.progress if p.name == "alice")
    assert alice_progress.started == 3 and report.watched == ()
    assert merge_folder(open_db(path), folder, people["carol"])[0].already == 9


def test_a_coordinator_cannot_merge_a_value_the_rater_did_not_sign(db, people, packed):
    # A dishonest coordinator imports alice's signed event with another value: her
    # signature still verifies (it covers only the commitment), but the sealed value does
    # not match the commitment, and verify (which opens it) says so.
    from annotate.events import append_event
    from annotate.raterfile.file import SIGNED_COLUMNS
    from store.db import transaction

    alice = open_as_alice(packed["path"])
    code = alice.queue()[0].code
    alice.record(code, "validity", "valid")
    event = dict(zip([d[0] for d in alice.conn.execute("SELECT * FROM events").description],
                     alice.conn.execute("SELECT * FROM events").fetchone()))
    set_id, case_id = db.execute("SELECT set_id, id FROM annotation_cases WHERE code = ?",
                                 [code]).fetchone()
    offline = {**{c: event[c] for c in SIGNED_COLUMNS}, "file_id": packed["file_id"],
               "hash": event["hash"], "signature": bytes(event["signature"]).hex()}
    with transaction(db) as conn:
        append_event(conn, {"case_id": case_id, "person_id": people["alice"].id,
                            "session_id": None, "field": "validity", "value": "invalid",
                            "supersedes_id": None, "undoes_id": None,
                            "time_on_item_ms": event["time_on_item_ms"],
                            "app_version": event["app_version"],
                            "codebook_version": event["codebook_version"],
                            "created_at": event["created_at"]},
                     people["carol"], set_id, kind="merged_label",
                     sealed_extra={"salt": event["salt"]}, offline=offline)
    messages = [p.message for p in verify_record(db).problems]
    assert any("its sealed value is not the one the rater signed" in m for m in messages), \
        messages
