"""Keeping a `paw power --study` simulation in the store (`power_runs`, m012), so the study's
report — `paw report --study` and the Statistics screen of `paw ui` — shows its power
curves (Appendix F). The report reads the latest row (`analysis.counterfactual.power`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import numpy as np
import pandas as pd
import sqlite_utils

from store.db import utcnow


def store_power_run(db: sqlite_utils.Database, audit_id: int, meta: dict,
                    conditions: Mapping[str, np.ndarray], grid: pd.DataFrame) -> int:
    """Insert one simulation of study `audit_id`; returns its row id (one transaction)."""
    with db.conn:
        cursor = db.conn.execute(
            "INSERT INTO power_runs (audit_id, created_at, meta_json, conditions_json, "
            "grid_json) VALUES (?, ?, ?, ?, ?)",
            [audit_id, utcnow(), json.dumps(meta),
             json.dumps({name: [float(v) for v in np.asarray(z)]
                         for name, z in conditions.items()}),
             json.dumps(grid.to_dict("records"))])
    assert cursor.lastrowid is not None  # set by every INSERT
    return int(cursor.lastrowid)
