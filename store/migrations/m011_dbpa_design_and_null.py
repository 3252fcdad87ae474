"""Migration m011: DBPA tests record their re-split design, the permutation-null level of ω
and the version of the test that computed them."""

from __future__ import annotations

import sqlite_utils


def m011_dbpa_design_and_null(db: sqlite_utils.Database) -> None:
    """`dbpa_tests`: `design`, `null_mean`, `null_sd`, `test_version`.

    `design` is how the outputs were re-split (`unpaired`: the pool permuted, as the paper;
    `paired`: swaps within shared-seed pairs); `null_mean` / `null_sd` are ω's mean and
    standard deviation over the B re-splits (what ω is when nothing differs, which falls
    with k); `test_version` names the computation (`analysis.dbpa.definitions.TEST_VERSION`).
    Rows written before this migration have NULL in all four: `paw dbpa` recomputes them
    on its next run (their ties were decided on float sums).
    """
    db.executescript(
        """
        ALTER TABLE dbpa_tests ADD COLUMN design TEXT;
        ALTER TABLE dbpa_tests ADD COLUMN null_mean REAL;
        ALTER TABLE dbpa_tests ADD COLUMN null_sd REAL;
        ALTER TABLE dbpa_tests ADD COLUMN test_version INTEGER;
        """
    )
