"""One progress model of long work, drawn by the CLI's bars (`workbench/cli/progress.py`) and
the Runs screen (`workbench/tui/live.py`) alike: per block done/total, rate and ETA, and one
clock format (H:MM:SS).

A block's rate counts only the jobs done since counting began (jobs an earlier run stored
are not counted, so a resumed run's ETA is not too short), over the time since the stage it
runs in began (or since the block first appeared, outside a stage) to now, or to when the
block finished. A block with nothing done yet restarts its count when a stage starts or a
model finishes loading, so an F-block planned at the end of stage 1 counts from stage 2 and
no block's rate includes a model load. ETAs are recomputed from these averages at each draw,
so one slow generation does not make them jump.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

UNKNOWN_ETA = "ETA -:--:--"
"""What an ETA reads before anything was counted."""


def now() -> float:
    """The clock every time here is read from (monotonic seconds)."""
    return time.monotonic()


def clock(seconds: float | None) -> str:
    """H:MM:SS ('–' when unknown)."""
    if seconds is None:
        return "–"
    whole = max(0, round(seconds))  # to the nearest second: 29.9999 s of float noise is 0:00:30
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


def per_second(count: float, seconds: float) -> float | None:
    """`count` per second; None until something was counted over a positive time."""
    return count / seconds if seconds > 0 and count > 0 else None


def time_left(left: float, rate: float | None) -> float | None:
    """Seconds to do `left` more at `rate` per second (None without a rate)."""
    if rate is None:
        return None
    return max(left, 0) / rate


def text_bar(done: int, total: int, width: int = 20) -> str:
    """A text progress bar of `width` cells ('█' done, '░' to go)."""
    filled = 0 if total <= 0 else min(width, round(width * done / total))
    return "█" * filled + "░" * (width - filled)


def rate_text(rate: float | None, unit: str = "jobs") -> str:
    """'   2.50 jobs/s' (no decimals from 100/s on); '' without a rate."""
    if rate is None:
        return ""
    number = f"{rate:7,.0f}" if rate >= 100 else f"{rate:7.2f}"
    return f"{number} {unit}/s"


@dataclass(frozen=True)
class BlockView:
    """One block as drawn.

    Attributes:
        block: its name ('baseline', 'M', 'F', …, 'generations', an import's rows).
        done, total: units done and planned.
        counted: units done since counting began (the rate's numerator).
        rate: units per second, None until one was counted.
        eta_s: seconds to go at that rate (None: unknown or finished).
        took_s: once finished, the seconds it took (None while running).
    """

    block: str
    done: int
    total: int
    counted: int
    rate: float | None
    eta_s: float | None
    took_s: float | None

    def rate_text(self, unit: str = "jobs") -> str:
        """The rate as drawn ('' without one)."""
        return rate_text(self.rate, unit)

    def eta_text(self) -> str:
        """'ETA 0:01:30', 'ETA -:--:--', or once finished 'done in 0:00:42' ('done' when
        this session did none of it)."""
        if self.took_s is not None:
            return f"done in {clock(self.took_s)}" if self.counted > 0 else "done"
        return UNKNOWN_ETA if self.eta_s is None else f"ETA {clock(self.eta_s)}"


@dataclass
class _Tally:
    done: int
    total: int
    base: int
    """Done when counting began (not counted in the rate)."""
    started: float
    finished: float | None = None


class ProgressModel:
    """Per-block progress fed by the engine's events (`apply`) or by hand (`update`).

    Not locked: a consumer that feeds it from one thread and reads it from another (the
    Runs screen) holds its own lock around both.
    """

    def __init__(self) -> None:
        self._blocks: dict[str, _Tally] = {}
        self._stage_started: float | None = None

    def start_stage(self, at: float) -> None:
        """A stage started (or its model finished loading) at `at`: blocks with nothing
        counted yet count from here."""
        self._stage_started = at
        for tally in self._blocks.values():
            if tally.done == tally.base and tally.finished is None:
                tally.started = at

    def update(self, block: str, done: int, total: int, at: float) -> None:
        """`done` of `total` units of `block` are done at `at`."""
        tally = self._blocks.get(block)
        if tally is None:
            start = self._stage_started if self._stage_started is not None else at
            tally = self._blocks[block] = _Tally(done, total, base=done, started=start)
        tally.done, tally.total = done, total
        if done >= total:
            tally.finished = tally.finished if tally.finished is not None else at
        else:
            tally.finished = None  # more units were planned into it

    def apply(self, event: Any, at: float) -> None:
        """Take one engine event: a stage start, a model load or a block's progress (a
        runner event wrapped in `RunnerProgress` is unwrapped; others are ignored)."""
        from workbench.engine.events import BlockProgress, RunnerProgress, StageStarted
        from workbench.models.events import ModelLoaded

        if isinstance(event, RunnerProgress):
            event = event.event
        if isinstance(event, (StageStarted, ModelLoaded)):
            self.start_stage(at)
        elif isinstance(event, BlockProgress):
            self.update(event.block, event.done, event.total, at)

    def __contains__(self, block: str) -> bool:
        return block in self._blocks

    def view(self, block: str, at: float) -> BlockView:
        """One block as drawn at time `at`."""
        tally = self._blocks[block]
        counted = tally.done - tally.base
        end = tally.finished if tally.finished is not None else at
        rate = per_second(counted, end - tally.started)
        finished = tally.finished is not None
        return BlockView(block, tally.done, tally.total, counted, rate,
                         None if finished else time_left(tally.total - tally.done, rate),
                         end - tally.started if finished else None)

    def views(self, at: float) -> tuple[BlockView, ...]:
        """Every block as drawn at time `at`, in the order they first reported."""
        return tuple(self.view(block, at) for block in list(self._blocks))

    def counts(self) -> dict[str, tuple[int, int]]:
        """(done, total) of every block."""
        return {block: (t.done, t.total) for block, t in self._blocks.items()}
