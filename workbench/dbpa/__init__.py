"""DBPA (seed 001): k free-text samples per condition, embeddings, permutation tests."""

from workbench.dbpa.execute import DbpaOutcome, run_dbpa
from workbench.dbpa.spec import DbpaSpec, resolve_dbpa_operators

__all__ = ["DbpaOutcome", "DbpaSpec", "resolve_dbpa_operators", "run_dbpa"]
