"""Issue 34, criterion 7: time on item is bounded (a day) wherever a label event is made:
`record_label`, a rater file's labelling and its merge (`paw label --time-ms` is bounded by
its option type: tests/cli/test_messages.py)."""

from __future__ import annotations

import pytest

from annotate.codebook import MAX_TIME_ON_ITEM_MS
from annotate.events import record_label, start_session
from annotate.raterfile.file import pack
from annotate.sets.annotation_set import rater_queue
from annotate.sets.audit import create_set
from store.errors import UserError
from tests.annotate.conftest import named
from tests.annotate.test_rater_files import open_as_alice


def test_the_api_refuses_an_absurd_time_on_item(db, audit, people):
    create_set(db, audit.audit_id, 4, per_family=None, seed=1, name="s", **named(people))
    code = rater_queue(db, "s", people["alice"])[0].code
    session = start_session(db, people["alice"], "s")
    with pytest.raises(UserError, match=r"time_on_item_ms: expected 0 to 86400000 ms"):
        record_label(db, people["alice"], session, code, "validity", "valid",
                     MAX_TIME_ON_ITEM_MS + 1)
    record_label(db, people["alice"], session, code, "validity", "valid", MAX_TIME_ON_ITEM_MS)


def test_a_rater_file_refuses_an_absurd_time_on_item(db, audit, people, tmp_path):
    create_set(db, audit.audit_id, 4, per_family=None, seed=1, name="s", **named(people))
    path = pack(db, "s", "alice", tmp_path / "alice.paw-rater", people["carol"]).path
    alice = open_as_alice(path)
    code = alice.queue()[0].code
    with pytest.raises(UserError, match=r"time_on_item_ms: expected 0 to 86400000 ms"):
        alice.record(code, "validity", "valid", 2**63 - 1)
    alice.record(code, "validity", "valid", 1200)
