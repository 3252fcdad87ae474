"""Backend settings that need no model: the default thread count and extra buffer types."""

from __future__ import annotations

import os

from workbench.models import backend


def test_default_threads_leaves_busy_cores(monkeypatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    monkeypatch.setattr(os, "getloadavg", lambda: (2.7, 0.0, 0.0))
    assert backend.default_threads() == 6  # 8 cores - 2 fully busy
    monkeypatch.setattr(os, "getloadavg", lambda: (0.6, 0.0, 0.0))
    assert backend.default_threads() == 8  # a partly busy core is still used
    monkeypatch.setattr(os, "getloadavg", lambda: (9.5, 0.0, 0.0))
    assert backend.default_threads() == 1  # never fewer than one

    def no_load() -> tuple[float, float, float]:
        raise OSError("no load average")

    monkeypatch.setattr(os, "getloadavg", no_load)
    assert backend.default_threads() == 8


def test_extra_buffers_env_override(monkeypatch) -> None:
    monkeypatch.setenv("PAW_LLAMA_EXTRA_BUFFERS", "0")
    assert backend.use_extra_buffers() is False
    monkeypatch.setenv("PAW_LLAMA_EXTRA_BUFFERS", "1")
    assert backend.use_extra_buffers() is True
    monkeypatch.delenv("PAW_LLAMA_EXTRA_BUFFERS")
    monkeypatch.setattr(backend, "_cpu_has_amx", lambda: True)
    assert backend.use_extra_buffers() is False
