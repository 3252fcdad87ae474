"""Shared fixtures: a fresh migrated store per test (in memory or on disk)."""

from __future__ import annotations

import pytest
import sqlite_utils

from store import open_db


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
