"""Migration m013: each generation records the engine that made it, so one audit's engines
can be checked (a resume on another engine is refused) and counted in its reports."""

from __future__ import annotations

import sqlite_utils


def m013_generation_engine(db: sqlite_utils.Database) -> None:
    """`generations.engine`: what decoded the row (e.g. `in-process llama-cpp-python
    0.3.36`, `llama-server b1-0c1e570 serial`); NULL for rows stored before this
    migration (their engine was not recorded)."""
    db.execute("ALTER TABLE generations ADD COLUMN engine TEXT")
