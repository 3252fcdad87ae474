"""What the signed annotation record costs: scrypt sign-in, a signed label, sealing a set,
verifying the whole record. Run by hand: `.venv/bin/python bench/annotation_record.py`.

Builds a real WAL store in a temporary folder (the annotation tests' fixture audit, 60
items × 2 arms), two raters label every case of a set on two fields through the real API
(each label one BEGIN IMMEDIATE … COMMIT with `synchronous = FULL`, its event signed), then
`verify_record` replays and checks everything. Passphrase hashing runs once at the real
cost (N = 2**17) for the sign-in figure; the people are registered at the test cost.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ["PAW_SCRYPT_LOG2N"] = "10"  # registrations below; the real cost is timed apart

from annotate.events import record_label, start_session  # noqa: E402
from annotate.sets.annotation_set import rater_queue  # noqa: E402
from annotate.sets.audit import create_set  # noqa: E402
from annotate.trust import keys  # noqa: E402
from annotate.trust.people import register  # noqa: E402
from annotate.verification.verify import verify_record  # noqa: E402
from store import open_db  # noqa: E402
from tests.annotate.conftest import PASSPHRASE, make_audit  # noqa: E402


def main() -> None:
    salt = keys.new_salt()
    started = time.perf_counter()
    keys.stretch(PASSPHRASE, salt, {"alg": "scrypt", "n": 2**17, "r": 8, "p": 1})
    print(f"scrypt N=2**17 (one sign-in): {time.perf_counter() - started:.2f} s")
    db = open_db(Path(tempfile.mkdtemp()) / "bench.db")
    audit = make_audit(db, 60)
    alice, bob = (register(db, n, "rater", PASSPHRASE) for n in ("alice", "bob"))
    carol = register(db, "carol", "coordinator", PASSPHRASE)
    started = time.perf_counter()
    the_set = create_set(db, audit.audit_id, 400, per_family=None, name="s",
                         raters=("alice", "bob"), coordinator=carol)
    print(f"sealing a {the_set.size}-case set: {time.perf_counter() - started:.3f} s")
    n, started = 0, time.perf_counter()
    for person in (alice, bob):
        session = start_session(db, person, "s")
        for view in rater_queue(db, "s", person):
            for field, value in (("gold_shift", "no_shift"), ("validity", "valid")):
                record_label(db, person, session, view.code, field, value)
                n += 1
    per_label = (time.perf_counter() - started) / n * 1000
    print(f"{n} signed labels: {per_label:.1f} ms each (commit with fsync included)")
    started = time.perf_counter()
    report = verify_record(db)
    print(f"verify_record: {report.n_entries} entries, ok={report.ok}, "
          f"{time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main()
