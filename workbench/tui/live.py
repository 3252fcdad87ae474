"""The state of a run launched from the UI, fed by the engine's events (no textual here).

The worker thread that runs an audit passes every event to `LiveRun.apply`; the Runs screen
reads a `LiveRun.snapshot()` on a timer and draws it. Rates and ETAs are measured from this
session's own progress (jobs done since the block's first event here / seconds since).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class BlockState:
    """One block's progress as drawn: done/total, jobs per second and seconds to go."""

    block: str
    done: int
    total: int
    rate: float | None
    eta_s: float | None


@dataclass(frozen=True)
class LiveSnapshot:
    """What the Runs screen draws for the run in progress."""

    name: str
    stage: str
    model: str
    blocks: tuple[BlockState, ...]
    generated: int
    gen_rate: float | None
    elapsed_s: float
    state: str
    """'starting', 'running', 'stopping', 'finished', 'stopped' or 'failed'."""
    message: str = ""


def bar(done: int, total: int, width: int = 20) -> str:
    """A text progress bar of `width` cells ('█' done, '░' to go)."""
    filled = 0 if total <= 0 else min(width, round(width * done / total))
    return "█" * filled + "░" * (width - filled)


def clock(seconds: float | None) -> str:
    """'m:ss' or 'h:mm:ss' ('–' when unknown)."""
    if seconds is None:
        return "–"
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else \
        f"{rest // 60}:{rest % 60:02d}"


@dataclass
class LiveRun:
    """Progress of one run launched from the UI (thread-safe: the worker writes, the UI reads).

    Attributes:
        name: the run's name (known once planned).
        stop: set to ask the worker to stop after the generation in flight.
    """

    name: str = ""
    stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _blocks: dict[str, tuple[int, int]] = field(default_factory=dict)
    _first: dict[str, tuple[float, int]] = field(default_factory=dict)
    _last: dict[str, float] = field(default_factory=dict)
    _stage: str = ""
    _model: str = ""
    _generated: int = 0
    _started: float = field(default_factory=time.monotonic)
    _gen_started: float | None = None
    _state: str = "starting"
    _message: str = ""
    _ended: float | None = None
    _phase: str = ""

    def apply(self, event: Any) -> None:
        """Take one engine event (called from the worker thread)."""
        from workbench.engine.events import (
            AuditFinished,
            AuditPlanned,
            BlockProgress,
            RunnerProgress,
            StageStarted,
        )
        from workbench.models.events import BatchingChecked, GenerationFinished, ModelLoaded

        now = time.monotonic()
        with self._lock:
            if isinstance(event, RunnerProgress):
                self._model = event.model
                event = event.event
            if isinstance(event, AuditPlanned):
                self.name = event.audit
                self._state = "running"
                for block, total in event.totals.items():
                    self._blocks[block] = (event.done.get(block, 0), total)
            elif isinstance(event, StageStarted):
                self._stage, self._model = event.stage, event.model
                # Until the first generation of the stage: loading the model and its
                # batching self-check (tens of seconds on a CPU), said in words.
                self._phase = f"loading {event.model} and running its batching self-check…"
            elif isinstance(event, BlockProgress):
                self._blocks[event.block] = (event.done, event.total)
                self._first.setdefault(event.block, (now, event.done))
                self._last[event.block] = now
            elif isinstance(event, ModelLoaded):
                self._model = event.name
                self._phase = (f"{event.name} loaded in {event.seconds:.1f} s; batching "
                               "self-check…")
            elif isinstance(event, BatchingChecked):
                self._phase = f"{event.message}; generating…"
            elif isinstance(event, GenerationFinished):
                self._generated += 1
                self._phase = ""
                if self._gen_started is None:
                    self._gen_started = now - max(event.latency_s, 0.0)
            elif isinstance(event, AuditFinished):
                self._state = "stopped" if event.stopped else "finished"
                self._ended, self._phase = now, ""
                self._message = (f"{self._state} in {clock(event.elapsed_s)}: "
                                 f"{event.generated} new generation(s)")

    def request_stop(self) -> None:
        """Ask the worker to stop after the generation in flight (what finished is stored)."""
        self.stop.set()
        with self._lock:
            if self._state in ("starting", "running"):
                self._state = "stopping"

    def fail(self, message: str) -> None:
        """The worker ended with an error."""
        with self._lock:
            self._state = "failed"
            self._message = message
            self._ended, self._phase = time.monotonic(), ""

    @property
    def active(self) -> bool:
        """True while the worker is (or should be) working."""
        with self._lock:
            return self._state in ("starting", "running", "stopping")

    def snapshot(self) -> LiveSnapshot:
        """A consistent copy for drawing."""
        now = time.monotonic()
        with self._lock:
            blocks = []
            for block, (done, total) in self._blocks.items():
                rate = eta = None
                if block in self._first:
                    t0, d0 = self._first[block]
                    span = self._last.get(block, t0) - t0
                    if span > 0 and done > d0:
                        rate = (done - d0) / span
                        eta = (total - done) / rate if total > done else 0.0
                blocks.append(BlockState(block, done, total, rate, eta))
            gen_rate = None
            if self._gen_started is not None and self._generated:
                gen_rate = self._generated / max(now - self._gen_started, 1e-9)
            end = self._ended if self._ended is not None else now  # the clock stops
            if self._gen_started is not None and self._generated:
                gen_rate = self._generated / max(end - self._gen_started, 1e-9)
            return LiveSnapshot(self.name, self._stage, self._model, tuple(blocks),
                                self._generated, gen_rate, end - self._started, self._state,
                                self._message or self._phase)
