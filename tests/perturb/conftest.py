"""Fixtures for the operator tests."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_user_operators(monkeypatch, tmp_path):
    """Keep the developer's own rules files (env var, ~/.config) out of the tests."""
    monkeypatch.delenv("PAW_OPERATORS", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
