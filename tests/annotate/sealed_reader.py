"""Child process for the sealing tests: sign in as one person, report what opens.

Usage: python -m tests.annotate.sealed_reader DB NAME SET
Prints one JSON object: which event ids this person's process can open, the values of
those, and what computing agreement for SET did (the passphrase comes from PAW_TEST_PW).
A fresh process holds only the keys of whoever signed in there, as a real session does.
"""

from __future__ import annotations

import json
import os
import sys

from annotate.agreement.tables import all_agreements
from annotate.trust.people import authenticate
from annotate.trust.sealing import held, open_row
from store import open_db
from store.errors import UserError


def main(db_path: str, name: str, set_name: str) -> None:
    """Sign in as `name`, open what can be opened, try agreement; print the outcome."""
    db = open_db(db_path)
    person = authenticate(db, name, os.environ["PAW_TEST_PW"])
    opened, closed = {}, []
    for row in db.query("SELECT * FROM label_events ORDER BY id"):
        found = open_row(row)
        if found is None:
            closed.append(row["id"])
        else:
            opened[row["id"]] = [row["person_id"], *found]
    try:
        agreement = {a.label: a.n for a in all_agreements(db, set_name)}
        error = None
    except UserError as exc:
        agreement, error = None, str(exc)
    print(json.dumps({"held": sorted(held()), "me": person.id, "opened": opened,
                      "closed": closed, "agreement": agreement, "error": error}))


if __name__ == "__main__":
    main(*sys.argv[1:4])
