"""Migration m012: `paw power --study` keeps its simulation, so the study's report (and the
Statistics screen) shows its power curves."""

from __future__ import annotations

import sqlite_utils


def m012_power_runs(db: sqlite_utils.Database) -> None:
    """`power_runs`: one row per `paw power --study` run.

    `audit_id` is the study whose original logits z were simulated from; `meta_json` the
    settings (σ, σ_pert, simulations, B, α, sides, originals, seed, seconds);
    `conditions_json` each condition's logits z (model · task → list); `grid_json` the
    power of every (condition, σ, σ_pert, test) cell (`analysis.counterfactual.power`).
    The study report shows the latest row's curves; older rows stay (a rerun with other
    settings is a new row).
    """
    db.executescript(
        """
        CREATE TABLE power_runs (
            id INTEGER PRIMARY KEY,
            audit_id INTEGER NOT NULL REFERENCES audits(id),
            created_at TEXT NOT NULL,
            meta_json TEXT NOT NULL,
            conditions_json TEXT NOT NULL,
            grid_json TEXT NOT NULL
        );
        CREATE INDEX power_runs_audit ON power_runs (audit_id, id);
        """
    )
