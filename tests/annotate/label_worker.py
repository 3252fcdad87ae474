"""Child process for the durability tests: label a set as one rater, printing each commit.

Usage: python -m tests.annotate.label_worker DB RATER SET N
Prints "EVENT <id> <code> <value>" after each `record_label` has returned (i.e. committed),
then "DONE <n>". The passphrase comes from PAW_TEST_PW.
"""

from __future__ import annotations

import os
import sys

from annotate.events import record_label, start_session
from annotate.sets.annotation_set import rater_queue
from annotate.trust.people import authenticate
from store import open_db


def main(db_path: str, rater: str, set_name: str, n: int) -> None:
    """Label up to `n` cases (gold_shift cycling through its three values)."""
    db = open_db(db_path)
    person = authenticate(db, rater, os.environ["PAW_TEST_PW"])
    session = start_session(db, person, set_name, app="label-worker")
    values = ("no_shift", "ambiguous", "shifted")
    done = 0
    for i, view in enumerate(rater_queue(db, set_name, person)[:n]):
        event = record_label(db, person, session, view.code, "gold_shift", values[i % 3], i)
        print(f"EVENT {event.id} {event.code} {event.value}", flush=True)
        done += 1
    print(f"DONE {done}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
