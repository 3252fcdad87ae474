"""Progress of long work on the terminal: rich bars per block with done/total, rate and ETA.

One reporter for every command that generates (`paw run`, `paw audit`, `paw demo`, the
studies) and for large imports. It consumes the engine's events (`AuditPlanned`,
`StageStarted`, `BlockProgress`, `RunnerProgress`, `JudgeFinished`, `AuditFinished`) and the
runner's own (`RunStarted`, `ModelLoaded`, `GenerationFinished`, `RunFinished`).

On a terminal it draws a status line for the current stage (model, generations done of the
stage's total, generations/s, tokens/s, ETA) above one `rich.progress` bar per block
(done/total, jobs/s, ETA). Rates are averages since the bar appeared (jobs already stored
by an earlier run are not counted), so an ETA does not jump with each slow generation; ETAs
are recomputed at every redraw. On a pipe or in CI it prints plain lines instead: one when a
stage starts, one when it ends (with its rate), and a few for a bare `paw run`, so logs
stay short.
"""

from __future__ import annotations

import sys
import time
from typing import Any


def clock(seconds: float) -> str:
    """H:MM:SS."""
    seconds = max(0, int(seconds))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


_plain_eta = clock  # the name other modules used before


def _rate(done: float, elapsed: float) -> float:
    return done / elapsed if elapsed > 0 and done > 0 else 0.0


class _Stage:
    """The stage being worked on: counts and the time it started."""

    def __init__(self, name: str = "", model: str = "", total: int = 0) -> None:
        self.name, self.model, self.total = name, model, total
        self.generated = 0
        self.tokens = 0
        self.started = time.perf_counter()
        self.step = False  # a step of other work (`ProgressReporter.begin`), not generation

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def summary(self) -> str:
        """What the stage did, with its rate (the plain line when it ends)."""
        elapsed = self.elapsed()
        rate = _rate(self.generated, elapsed)
        return (f"{self.name} [{self.model}]: {self.generated} generated in {clock(elapsed)} "
                f"({rate:.2f} gen/s, {_rate(self.tokens, elapsed):.1f} tok/s)")

    def status(self) -> str:
        """The live status line."""
        elapsed = self.elapsed()
        head = f"{self.name} [{self.model}]" if self.model else self.name
        if self.step:
            return f"{head}  elapsed {clock(elapsed)}"
        if not self.generated:
            return f"{head}  {self.total} to generate  elapsed {clock(elapsed)}"
        rate = _rate(self.generated, elapsed)
        left = max(self.total - self.generated, 0)
        eta = clock(left / rate) if rate and left else "0:00:00"
        return (f"{head}  {self.generated}/{self.total} gen  {rate:.2f} gen/s  "
                f"{_rate(self.tokens, elapsed):.1f} tok/s  ETA {eta}  elapsed {clock(elapsed)}")


def _live_progress(stream: Any, status: Any) -> Any:
    """A `rich.progress.Progress` with the stage status line above its bars."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn
    from rich.text import Text

    def task_rate(task: Any) -> float:
        # From when the block's stage started (a block may first report mid-stage) to now,
        # or to when it finished; jobs done before (`base`, a resumed run) do not count.
        end = task.fields.get("t1") or time.perf_counter()
        return _rate(task.completed - task.fields.get("base", 0), end - task.fields["t0"])

    class RateColumn(ProgressColumn):
        """Jobs per second (average)."""

        def render(self, task: Any) -> Text:
            rate = task_rate(task)
            number = f"{rate:7,.0f}" if rate >= 100 else f"{rate:7.2f}"
            return Text(f"{number} {task.fields.get('unit', 'jobs')}/s" if rate else "",
                        style="progress.data.speed")

    class EtaColumn(ProgressColumn):
        """Time left at the average rate, or how long the block took."""

        def render(self, task: Any) -> Text:
            if task.fields.get("t1"):
                took = task.fields["t1"] - task.fields["t0"]
                return Text(f"done in {clock(took)}" if task.completed > task.fields.get(
                    "base", 0) else "done", style="progress.elapsed")
            rate = task_rate(task)
            left = (task.total or 0) - task.completed
            text = f"ETA {clock(left / rate)}" if rate else "ETA -:--:--"
            return Text(text, style="progress.remaining")

    class StagedProgress(Progress):
        def get_renderables(self) -> Any:
            line = status()
            if line:
                yield Text(line, style="bold")
            yield self.make_tasks_table(self.tasks)

    console = Console(file=stream, force_terminal=True, emoji=False, highlight=False)
    return StagedProgress(
        TextColumn("  {task.description:<12}"), BarColumn(bar_width=30), MofNCompleteColumn(),
        RateColumn(), EtaColumn(), console=console, transient=False, refresh_per_second=4)


class ProgressReporter:
    """Callable event sink drawing progress on `stream` (default stderr).

    Use as a context manager so the live display is closed even on an error:

        with ProgressReporter() as progress:
            run_audit(..., on_event=progress)

    Args:
        stream: where to draw (a terminal gets bars, anything else plain lines).
        live: force bars (True) or plain lines (False); default: `stream.isatty()`.
    """

    def __init__(self, stream: Any = None, live: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.live = bool(getattr(self.stream, "isatty", lambda: False)()) \
            if live is None else live
        self.blocks: dict[str, tuple[int, int]] = {}
        self.stage: _Stage | None = None
        self._model = ""
        self._progress: Any = None
        self._tasks: dict[str, Any] = {}
        self._finished_at: dict[str, float] = {}
        self._base: dict[str, int] = {}
        self._plain_every = 1

    # ------------------------------------------------------------ lifecycle

    def __enter__(self) -> ProgressReporter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the live display (idempotent)."""
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def _bars(self) -> Any:
        if self._progress is None:
            self._progress = _live_progress(self.stream, self._status)
            self._progress.start()
        return self._progress

    def _status(self) -> str:
        return self.stage.status() if self.stage is not None else ""

    # ------------------------------------------------------------ output

    def say(self, text: str) -> None:
        """One line above the bars (or on its own line when not live)."""
        if self.live:
            self._bars().console.print(text, markup=False, highlight=False)
        else:
            self.stream.write(text + "\n")
            self.stream.flush()

    def _block_line(self) -> str:
        return "  ".join(f"{b} {d}/{t}" for b, (d, t) in self.blocks.items())

    def _update_block(self, block: str, done: int, total: int, unit: str = "jobs") -> None:
        self.blocks[block] = (done, total)
        if not self.live:
            return
        progress = self._bars()
        task = self._tasks.get(block)
        now = time.perf_counter()
        if task is None:
            # `base`: jobs already done when the bar appeared (a resumed run) are not
            # counted in its rate; `t0`: it counts from the start of the current stage.
            t0 = self.stage.started if self.stage is not None else now
            task = progress.add_task(block, total=max(total, 1), completed=done, base=done,
                                     unit=unit, t0=t0, t1=None)
            self._tasks[block] = task
            self._base[block] = done
        if done >= total:
            self._finished_at.setdefault(block, now)
        else:
            self._finished_at.pop(block, None)  # more jobs were planned into it
        progress.update(task, total=max(total, 1), completed=done,
                        t1=self._finished_at.get(block))

    def _restart_idle_blocks(self) -> None:
        """Blocks with no job done yet (the F-block, planned at the end of stage 1) count
        their rate from the stage that starts now, not from when they appeared."""
        progress = self._bars()
        start = self.stage.started if self.stage is not None else time.perf_counter()
        for block, task in self._tasks.items():
            done, _ = self.blocks.get(block, (0, 0))
            if done == self._base.get(block, 0) and block not in self._finished_at:
                progress.update(task, t0=start)

    def _end_stage(self) -> None:
        """The line of a stage that ended, with its rate (on a pipe also the block counts,
        which a terminal shows in its bars)."""
        if self.stage is not None:
            if self.blocks and not self.live:
                self.say(self._block_line())
            if self.stage.generated:
                self.say(self.stage.summary())
        self.stage = None

    # ------------------------------------------------------------ other long work

    def begin(self, title: str, block: str | None = None, total: int = 0,
              unit: str = "rows") -> None:
        """Start a step of work that is not generation (an import): a status line, and a
        bar for `block` (done/total, rate, ETA) when it has a total.

        Args:
            title: what the step does (one plain line on a pipe).
            block: the bar's name; None for a status line only.
            total: units of work the bar counts to.
            unit: what the rate counts ('rows', …).
        """
        self._end_stage()
        self.stage = _Stage(title, "", total)
        self.stage.step = True
        self.say(title) if not self.live else self._bars()
        if block is not None:
            self._update_block(block, 0, total, unit=unit)

    def advance(self, block: str, done: int, total: int) -> None:
        """`done` of `total` units of a step's bar are done."""
        self._update_block(block, min(done, total), total)

    def end(self, text: str) -> None:
        """Finish the step with a line saying what it did."""
        self.stage = None
        self.say(text)

    # ------------------------------------------------------------ events

    def __call__(self, event: Any) -> None:  # one branch per event type
        from workbench.engine.events import (
            AuditFinished,
            AuditPlanned,
            BlockProgress,
            JudgeFinished,
            RunnerProgress,
            StageStarted,
        )
        from workbench.models.events import (
            BatchingChecked,
            GenerationFinished,
            ModelLoaded,
            PoolNotice,
            RunFinished,
            RunStarted,
        )

        if isinstance(event, RunnerProgress):
            self._model = event.model
            event = event.event
            if isinstance(event, (RunStarted, RunFinished)):
                return  # the engine reports its own stage start and end
        if isinstance(event, AuditPlanned):
            skipped = sum(event.not_fired.values())
            self.say(f"{event.audit}: {event.items} items x {len(event.arms)} arm(s) "
                     f"({', '.join(event.arms)}); {skipped} edit(s) did not fire (excluded)")
            # The bars are made by the `BlockProgress` events that follow, which come in
            # the kind's block order (these totals are in table order).
        elif isinstance(event, StageStarted):
            self._end_stage()
            self.stage = _Stage(event.stage, event.model, event.to_generate)
            if not self.live:
                self.say(f"{event.stage} [{event.model}]: {event.to_generate} to generate")
            else:
                self._restart_idle_blocks()
        elif isinstance(event, BlockProgress):
            self._update_block(event.block, event.done, event.total)
        elif isinstance(event, RunStarted):  # a bare runner (`paw run`)
            self.stage = _Stage("run", self._model, event.to_generate)
            self.say(f"{event.total} generations: {event.skipped} already stored, "
                     f"{event.to_generate} to run")
            if event.to_generate and self.live:
                self._update_block("generations", 0, event.to_generate, unit="gen")
            self._plain_every = max(1, event.to_generate // 20)
        elif isinstance(event, (BatchingChecked, PoolNotice)):  # once per load / change
            self.say(event.message if isinstance(event, BatchingChecked)
                     else f"paw: {event.message}")
        elif isinstance(event, ModelLoaded):
            threads = f", {event.threads} threads" if event.threads else ""
            self.say(f"model {event.name} loaded in {event.seconds:.1f} s{threads}")
            self._model = event.name
            if self.stage is not None:
                self.stage.model = event.name
                self.stage.started = time.perf_counter()  # rates from the first token on
        elif isinstance(event, GenerationFinished):
            stage = self.stage or _Stage("run", self._model, event.total)
            self.stage = stage
            stage.generated += 1
            stage.tokens += event.tokens_out
            if stage.name == "run":
                self._update_block("generations", event.done, event.total, unit="gen")
                if not self.live and (event.done % self._plain_every == 0
                                      or event.done == event.total):
                    elapsed = stage.elapsed()
                    rate = _rate(event.done, elapsed)
                    eta = (event.total - event.done) / rate if rate > 0 else 0.0
                    self.say(f"generations {event.done}/{event.total}  {rate:.2f} gen/s  "
                             f"{_rate(stage.tokens, elapsed):.1f} tok/s  ETA {clock(eta)}")
        elif isinstance(event, JudgeFinished):
            self.say(f"judge {event.method}: {event.subjects} chains judged "
                     f"({event.yes} yes, {event.no} no; {event.stored} new)")
        elif isinstance(event, AuditFinished):
            self._end_stage()
            counts = ", ".join(f"{n} {s}" for s, n in sorted(event.job_counts.items()))
            state = "stopped" if event.stopped else "finished"
            self.say(f"{state} in {event.elapsed_s:.0f} s: {event.generated} new "
                     f"generation(s); jobs: {counts}")
            self.close()
        elif isinstance(event, RunFinished):
            self.stage = None
            self.close()
