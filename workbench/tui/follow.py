"""Lists that follow the data: what the Flips and Statistics screens compare, on a timer, to
see that a run they show moved on (the Runs screen re-reads on `PRAGMA data_version`).

A *stamp* is a small tuple read in a thread worker on the screen's own connection: the run's
id, status and jobs done. The screen keeps the stamp of what it drew (read just before it
listed, so a change during the listing is seen next time) and re-lists when the stamp read
now differs: a run finishing (running → finished), a resumed run adding answers, a run
started elsewhere becoming the latest. Each screen's status line says when it last read
the store ("refreshed 00:12:34").
"""

from __future__ import annotations

import time
from typing import Any

FOLLOW_SECONDS = 2.0
"""How often a shown screen compares its stamp with the store."""


def run_stamp(db: Any, audit_id: int | None, done: bool = True) -> tuple:
    """(run id, status[, jobs done]) of a run (None: the latest, as `find_run` picks it);
    () when there is none. `done=False` leaves the count out: the Statistics screen
    rebuilds its report when the run's status changes, not on every answer."""
    from store.errors import NotFound
    from store.runs import find_run

    try:
        run = find_run(db, audit_id)
    except NotFound:
        return ()
    return (run.id, run.status, run.jobs_done) if done else (run.id, run.status)


def store_stamp(db: Any) -> tuple:
    """The stamp of every run in the store (the flip inspector's "all runs")."""
    from store.runs import list_runs

    return tuple((run.id, run.status, run.jobs_done) for run in list_runs(db))


def refreshed_text(at: float | None = None) -> str:
    """'refreshed HH:MM:SS' (local time) for a status line."""
    return f"refreshed {time.strftime('%H:%M:%S', time.localtime(at))}"
