"""Issue 34, criterion 2: no allowed sequence of packs and merges breaks the record.

The review's sequence: a rater's file packed twice, labelled in both, the newer merged
first and the older second, had been accepted and left `paw verify` failing for good with
the rater's older decision as her current label. Now a second file needs `--supersede`,
the superseded file adds nothing more (in either merge order), and an event stamped before
the rater's latest label in the store is refused, naming the file and the event. After
every sequence `verify_record` is clean and the current label is the newest decision.
"""

from __future__ import annotations

import pytest

from annotate.events import record_label, start_session
from annotate.labels import current_labels
from annotate.raterfile.file import pack
from annotate.raterfile.merge import merge
from annotate.sets.audit import create_set
from annotate.verification.verify import verify_record
from store.errors import UserError
from tests.annotate.conftest import named
from tests.annotate.test_rater_files import open_as_alice


@pytest.fixture
def first(db, audit, people, tmp_path) -> str:
    create_set(db, audit.audit_id, 8, per_family=None, seed=4, name="s", **named(people))
    return pack(db, "s", "alice", tmp_path / "alice-1.paw-rater", people["carol"]).path


def alice_label(db, people, code: str) -> str | None:
    return current_labels(db, people["alice"], code).get("validity")


def test_a_second_file_for_the_same_rater_and_set_needs_supersede(db, people, first,
                                                                  tmp_path):
    with pytest.raises(UserError, match=r"alice already has a file of set 's' .*--supersede"):
        pack(db, "s", "alice", tmp_path / "alice-2.paw-rater", people["carol"])
    assert not (tmp_path / "alice-2.paw-rater").exists()
    # bob has no file yet: his first is packed as before.
    pack(db, "s", "bob", tmp_path / "bob.paw-rater", people["carol"])


@pytest.mark.parametrize("newer_first", [True, False], ids=["newer-first", "older-first"])
def test_packed_twice_labelled_in_both_merged_in_either_order(db, people, first, tmp_path,
                                                              newer_first):
    older = open_as_alice(first)
    code = older.queue()[0].code
    older.record(code, "validity", "valid")
    older.conn.close()
    second = pack(db, "s", "alice", tmp_path / "alice-2.paw-rater", people["carol"],
                  supersede=True).path
    newer = open_as_alice(second)
    newer.record(code, "validity", "invalid")  # her newer decision
    newer.conn.close()
    carol = people["carol"]
    if newer_first:
        assert merge(db, second, carol).imported == 1
    with pytest.raises(UserError) as refused:
        merge(db, first, carol)
    message = str(refused.value)
    assert message.startswith(f"{first}: event 1 ") and "superseded by file" in message
    if not newer_first:
        assert merge(db, second, carol).imported == 1
    report = verify_record(db)
    assert report.ok, [p.message for p in report.problems]
    assert alice_label(db, people, code) == "invalid"


def test_a_file_packed_labelled_and_merged_twice_stays_clean(db, people, first, tmp_path):
    carol = people["carol"]
    alice = open_as_alice(first)
    codes = [v.code for v in alice.queue()]
    alice.record(codes[0], "validity", "valid")
    assert merge(db, first, carol).imported == 1
    alice.record(codes[0], "validity", "invalid")
    alice.record(codes[1], "validity", "valid")
    assert merge(db, first, carol).imported == 2
    alice.conn.close()
    # A new file after everything was merged: the older one is superseded, nothing lost.
    second = pack(db, "s", "alice", tmp_path / "alice-2.paw-rater", carol, supersede=True)
    again = open_as_alice(second.path)
    again.record(codes[0], "validity", "valid")
    again.conn.close()
    assert merge(db, second.path, carol).imported == 1
    assert merge(db, first, carol).imported == 0  # nothing new in it: adds nothing, no error
    report = verify_record(db)
    assert report.ok, [p.message for p in report.problems]
    assert alice_label(db, people, codes[0]) == "valid"
    assert alice_label(db, people, codes[1]) == "valid"


def test_an_event_older_than_the_raters_latest_label_is_refused(db, people, first):
    alice = open_as_alice(first)
    code = alice.queue()[0].code
    alice.record(code, "validity", "valid")  # in her file, not merged yet
    alice.conn.close()
    session = start_session(db, people["alice"], "s")  # then in the shared store
    record_label(db, people["alice"], session, code, "validity", "invalid")
    with pytest.raises(UserError, match=rf"^{first}: event 1 \(case {code}, validity\) is "
                                        r"stamped .*before the rater's latest label"):
        merge(db, first, people["carol"])
    report = verify_record(db)
    assert report.ok, [p.message for p in report.problems]
    assert alice_label(db, people, code) == "invalid"
