"""Backend settings that need no model: the default thread count and extra buffer types."""

from __future__ import annotations

import os

from workbench.models import backend


def test_default_threads_leaves_busy_cores(monkeypatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    monkeypatch.setattr(backend, "_busy_cores", lambda cores: 2.7)
    assert backend.default_threads() == 6  # 8 cores - 2 fully busy
    monkeypatch.setattr(backend, "_busy_cores", lambda cores: 0.6)
    assert backend.default_threads() == 8  # a partly busy core is still used
    monkeypatch.setattr(backend, "_busy_cores", lambda cores: 9.5)
    assert backend.default_threads() == 1  # never fewer than one


def test_busy_fraction_from_proc_stat_samples() -> None:
    # user nice system idle iowait irq softirq steal; between the samples 100 ticks pass,
    # of which idle 60 + iowait 15 = 75 idle -> busy 25/100 = 0.25.
    before = [100, 0, 50, 1000, 10, 0, 0, 0]
    after = [115, 0, 60, 1060, 25, 0, 0, 0]
    assert backend.cpu_busy_fraction(before, after) == 0.25
    assert backend.cpu_busy_fraction(before, before) == 0.0  # no time passed


def test_busy_cores_falls_back_to_load_average(monkeypatch) -> None:
    def no_proc() -> list[int]:
        raise OSError("no /proc/stat")

    monkeypatch.setattr(backend, "_read_cpu_counters", no_proc)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.5, 0.0, 0.0))
    assert backend._busy_cores(2, window_s=0) == 1.5

    def no_load() -> tuple[float, float, float]:
        raise OSError("no load average")

    monkeypatch.setattr(os, "getloadavg", no_load)
    assert backend._busy_cores(2, window_s=0) == 0.0


def test_extra_buffers_env_override(monkeypatch) -> None:
    monkeypatch.setenv("PAW_LLAMA_EXTRA_BUFFERS", "0")
    assert backend.use_extra_buffers() is False
    monkeypatch.setenv("PAW_LLAMA_EXTRA_BUFFERS", "1")
    assert backend.use_extra_buffers() is True
    monkeypatch.delenv("PAW_LLAMA_EXTRA_BUFFERS")
    monkeypatch.setattr(backend, "_cpu_has_amx", lambda: True)
    assert backend.use_extra_buffers() is False
