"""Shared fixtures: a fresh migrated store per test (in memory or on disk)."""

from __future__ import annotations

import os

import pytest
import sqlite_utils

from store import open_db

# Passphrase hashing at scrypt N = 2**10 instead of 2**17 (0.4 s per hash): the documented
# test-only setting (annotate/trust/keys.py). Each hash stores its cost, so nothing is verified
# at a cost other than the one it was made with; tests of the real cost unset it.
os.environ.setdefault("PAW_SCRYPT_LOG2N", "10")


@pytest.fixture
def db() -> sqlite_utils.Database:
    """A migrated in-memory store."""
    return open_db(memory=True)


@pytest.fixture
def db_path(tmp_path) -> str:
    """Path of a migrated on-disk store (WAL) in a temporary folder."""
    path = tmp_path / "paw.db"
    open_db(path).conn.close()
    return str(path)


@pytest.fixture
def demo_db(db: sqlite_utils.Database) -> sqlite_utils.Database:
    """The in-memory store with the demo set imported (dataset 'demo')."""
    from workbench.datasets.demo import import_demo

    import_demo(db)
    return db


@pytest.fixture
def fake_model(db: sqlite_utils.Database):
    """A registered model record run by the fake backend (plain chat template)."""
    from tests.fakes import fake_model_record

    return fake_model_record(db)
