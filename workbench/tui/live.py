"""The state of a run launched from the UI, fed by the engine's events (no textual here).

The worker thread that runs an audit passes every event to `LiveRun.apply`; the Runs screen
reads a `LiveRun.snapshot()` on a timer and draws it. Blocks' rates and ETAs are
`workbench.present.progress`'s model, the one the CLI's bars draw too (this session's own
progress: jobs an earlier run stored are not counted).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from workbench.present.progress import BlockView, ProgressModel, clock, now, per_second


@dataclass(frozen=True)
class LiveSnapshot:
    """What the Runs screen draws for the run in progress."""

    name: str
    stage: str
    model: str
    blocks: tuple[BlockView, ...]
    generated: int
    gen_rate: float | None
    elapsed_s: float
    state: str
    """'starting', 'running', 'stopping', 'finished', 'stopped' or 'failed'."""
    message: str = ""


@dataclass
class LiveRun:
    """Progress of one run launched from the UI (thread-safe: the worker writes, the UI reads).

    Attributes:
        name: the run's name (known once planned).
        stop: set to ask the worker to stop after the generation in flight.
        time_source: the clock (monotonic seconds; a test passes its own).
    """

    name: str = ""
    stop: threading.Event = field(default_factory=threading.Event)
    time_source: Callable[[], float] = now
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _progress: ProgressModel = field(default_factory=ProgressModel)
    _stage: str = ""
    _model: str = ""
    _generated: int = 0
    _started: float = 0.0
    _gen_started: float | None = None
    _state: str = "starting"
    _message: str = ""
    _ended: float | None = None
    _phase: str = ""

    def __post_init__(self) -> None:
        self._started = self.time_source()

    def apply(self, event: Any) -> None:
        """Take one engine event (called from the worker thread)."""
        from workbench.engine.events import (
            AuditFinished,
            AuditPlanned,
            RunnerProgress,
            StageStarted,
        )
        from workbench.models.events import (
            BatchingChecked,
            BatchingProgress,
            GenerationFinished,
            ModelLoaded,
        )

        at = self.time_source()
        with self._lock:
            self._progress.apply(event, at)
            if isinstance(event, RunnerProgress):
                self._model = event.model
                event = event.event
            if isinstance(event, AuditPlanned):
                self.name = event.audit
                self._state = "running"
            elif isinstance(event, StageStarted):
                self._stage, self._model = event.stage, event.model
                # Until the first generation of the stage: loading the model and its
                # batching self-check (tens of seconds on a CPU), said in words.
                self._phase = f"loading {event.model} and running its batching self-check…"
            elif isinstance(event, ModelLoaded):
                self._model = event.name
                self._phase = (f"{event.name} loaded in {event.seconds:.1f} s; batching "
                               "self-check…")
            elif isinstance(event, BatchingProgress):
                self._phase = f"{event.message}…"
            elif isinstance(event, BatchingChecked):
                self._phase = f"{event.message}; generating…"
            elif isinstance(event, GenerationFinished):
                self._generated += 1
                self._phase = ""
                if self._gen_started is None:
                    self._gen_started = at - max(event.latency_s, 0.0)
            elif isinstance(event, AuditFinished):
                self._state = "stopped" if event.stopped else "finished"
                self._ended, self._phase = at, ""
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
            self._ended, self._phase = self.time_source(), ""

    @property
    def active(self) -> bool:
        """True while the worker is (or should be) working."""
        with self._lock:
            return self._state in ("starting", "running", "stopping")

    def snapshot(self) -> LiveSnapshot:
        """A consistent copy for drawing."""
        with self._lock:
            end = self._ended if self._ended is not None else self.time_source()  # stops
            gen_rate = None
            if self._gen_started is not None:
                gen_rate = per_second(self._generated, max(end - self._gen_started, 1e-9))
            return LiveSnapshot(self.name, self._stage, self._model, self._progress.views(end),
                                self._generated, gen_rate, end - self._started, self._state,
                                self._message or self._phase)
