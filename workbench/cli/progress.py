"""Progress of long work on the terminal: rich bars per block with done/total, rate and ETA.

One reporter for every command that generates (`paw run`, `paw audit`, `paw demo`, the
studies) and for large imports. It consumes the engine's events (`AuditPlanned`,
`StageStarted`, `BlockProgress`, `RunnerProgress`, `JudgeFinished`, `AuditFinished`) and the
runner's own (`RunStarted`, `ModelLoaded`, `GenerationFinished`, `RunFinished`).

On a terminal it draws a status line for the current stage (model, generations done of the
stage's total, generations/s, tokens/s, ETA) above one `rich.progress` bar per block
(done/total, jobs/s, ETA). The blocks' rates and ETAs are `workbench.present.progress`'s
model, the one the Runs screen draws too (averages since the stage began, jobs an earlier
run stored not counted; recomputed at every redraw). On a pipe or in CI it prints plain
lines instead: one when a stage starts, one when it ends (with its rate), and a few for a
bare `paw run`, so logs stay short.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from workbench.present.progress import (
    BlockView,
    ProgressModel,
    clock,
    now,
    per_second,
    time_left,
)


class _Stage:
    """The stage being worked on: counts and the time it started."""

    def __init__(self, name: str = "", model: str = "", total: int = 0,
                 time_source: Callable[[], float] = now) -> None:
        self.name, self.model, self.total = name, model, total
        self.generated = 0
        self.tokens = 0
        self.time_source = time_source
        self.started = time_source()
        self.step = False  # a step of other work (`ProgressReporter.begin`), not generation

    def elapsed(self) -> float:
        return self.time_source() - self.started

    def summary(self) -> str:
        """What the stage did, with its rate (the plain line when it ends)."""
        elapsed = self.elapsed()
        rate = per_second(self.generated, elapsed) or 0.0
        tokens = per_second(self.tokens, elapsed) or 0.0
        return (f"{self.name} [{self.model}]: {self.generated} generated in {clock(elapsed)} "
                f"({rate:.2f} gen/s, {tokens:.1f} tok/s)")

    def status(self) -> str:
        """The live status line."""
        elapsed = self.elapsed()
        head = f"{self.name} [{self.model}]" if self.model else self.name
        if self.step:
            return f"{head}  elapsed {clock(elapsed)}"
        if not self.generated:
            return f"{head}  {self.total} to generate  elapsed {clock(elapsed)}"
        rate = per_second(self.generated, elapsed)
        left = max(self.total - self.generated, 0)
        eta = clock(time_left(left, rate)) if rate and left else "0:00:00"
        return (f"{head}  {self.generated}/{self.total} gen  {rate or 0.0:.2f} gen/s  "
                f"{per_second(self.tokens, elapsed) or 0.0:.1f} tok/s  ETA {eta}  "
                f"elapsed {clock(elapsed)}")


def _live_progress(stream: Any, status: Callable[[], str],
                   view: Callable[[str], BlockView]) -> Any:
    """A `rich.progress.Progress` with the stage status line above its bars; each bar's
    rate and ETA are `view(block)` of the progress model."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn
    from rich.text import Text

    class RateColumn(ProgressColumn):
        """Units per second (average)."""

        def render(self, task: Any) -> Text:
            return Text(view(task.description).rate_text(task.fields.get("unit", "jobs")),
                        style="progress.data.speed")

    class EtaColumn(ProgressColumn):
        """Time left at the average rate, or how long the block took."""

        def render(self, task: Any) -> Text:
            shown = view(task.description)
            return Text(shown.eta_text(), style="progress.elapsed" if shown.took_s is not None
                        else "progress.remaining")

    class StagedProgress(Progress):
        def get_renderables(self) -> Any:
            line = status()
            if line:  # it may name a run: shown escaped, as everything paw prints
                yield Text(escape_controls(line), style="bold")
            yield self.make_tasks_table(self.tasks)

    from workbench.present.controls import escape_controls, raw_stream

    # Bars move the cursor (PAW's own sequences): drawn on the terminal itself, not through
    # main's escaping stream; the texts in them are PAW's (stages, counts, times).
    console = Console(file=raw_stream(stream), force_terminal=True, emoji=False,
                      highlight=False)
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

    def __init__(self, stream: Any = None, live: bool | None = None,
                 time_source: Callable[[], float] = now) -> None:
        self.stream = stream or sys.stderr
        self.live = bool(getattr(self.stream, "isatty", lambda: False)()) \
            if live is None else live
        self.model = ProgressModel()
        """Every block's done/total, rate and ETA (the Runs screen draws the same model)."""
        self.stage: _Stage | None = None
        self.time_source = time_source
        self._model = ""
        self._progress: Any = None
        self._tasks: dict[str, Any] = {}
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
            self._progress = _live_progress(
                self.stream, self._status,
                lambda block: self.model.view(block, self.time_source()))
            self._progress.start()
        return self._progress

    def _status(self) -> str:
        return self.stage.status() if self.stage is not None else ""

    def _new_stage(self, name: str, model: str = "", total: int = 0) -> _Stage:
        """The stage that starts now; blocks with nothing done yet count from it."""
        self.stage = _Stage(name, model, total, self.time_source)
        self.model.start_stage(self.stage.started)
        return self.stage

    # ------------------------------------------------------------ output

    def say(self, text: str) -> None:
        """One line above the bars (or on its own line when not live)."""
        if self.live:
            self._bars().console.print(text, markup=False, highlight=False)
        else:
            self.stream.write(text + "\n")
            self.stream.flush()

    def _block_line(self) -> str:
        return "  ".join(f"{b} {d}/{t}" for b, (d, t) in self.model.counts().items())

    def _update_block(self, block: str, done: int, total: int, unit: str = "jobs") -> None:
        self.model.update(block, done, total, self.time_source())
        if not self.live:
            return
        progress = self._bars()
        task = self._tasks.get(block)
        if task is None:
            task = self._tasks[block] = progress.add_task(block, total=max(total, 1),
                                                          completed=done, unit=unit)
        progress.update(task, total=max(total, 1), completed=done)

    def _end_stage(self) -> None:
        """The line of a stage that ended, with its rate (on a pipe also the block counts,
        which a terminal shows in its bars)."""
        if self.stage is not None:
            if self.model.counts() and not self.live:
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
        self._new_stage(title, "", total).step = True
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
            RunWarning,
            StageStarted,
        )
        from workbench.models.events import (
            BatchingChecked,
            BatchingProgress,
            GenerationFinished,
            ModelLoaded,
            PoolNotice,
            RunFinished,
            RunStarted,
            WidthChosen,
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
            self._new_stage(event.stage, event.model, event.to_generate)
            if not self.live:
                self.say(f"{event.stage} [{event.model}]: {event.to_generate} to generate")
            else:
                self._bars()  # the status line shows from the stage's start
        elif isinstance(event, BlockProgress):
            self._update_block(event.block, event.done, event.total)
        elif isinstance(event, RunStarted):  # a bare runner (`paw run`)
            self._new_stage("run", self._model, event.to_generate)
            self.say(f"{event.total} generations: {event.skipped} already stored, "
                     f"{event.to_generate} to run")
            if event.to_generate and self.live:
                self._update_block("generations", 0, event.to_generate, unit="gen")
            self._plain_every = max(1, event.to_generate // 20)
        elif isinstance(event, BatchingProgress):
            # The self-check can take minutes on a big model: a line as it starts, at each
            # quarter of each phase and as each phase ends.
            quarter = max(1, -(-event.total // 4))
            if event.done == 1 or event.done == event.total or event.done % quarter == 0:
                self.say(event.message)
        elif isinstance(event, (BatchingChecked, WidthChosen, PoolNotice, RunWarning)):
            self.say(event.message if isinstance(event, (BatchingChecked, WidthChosen))
                     else f"paw: {'warning: ' if isinstance(event, RunWarning) else ''}"
                          f"{event.message}")
        elif isinstance(event, ModelLoaded):
            threads = f", {event.threads} threads" if event.threads else ""
            self.say(f"model {event.name} loaded in {event.seconds:.1f} s{threads}")
            self._model = event.name
            loaded = self.time_source()
            if self.stage is not None:
                self.stage.model = event.name
                self.stage.started = loaded  # rates from the first token on
            self.model.start_stage(loaded)  # the idle blocks' too
        elif isinstance(event, GenerationFinished):
            stage = self.stage or self._new_stage("run", self._model, event.total)
            stage.generated += 1
            stage.tokens += event.tokens_out
            if stage.name == "run":
                self._update_block("generations", event.done, event.total, unit="gen")
                if not self.live and (event.done % self._plain_every == 0
                                      or event.done == event.total):
                    elapsed = stage.elapsed()
                    rate = per_second(event.done, elapsed)
                    eta = time_left(event.total - event.done, rate) or 0.0
                    self.say(f"generations {event.done}/{event.total}  {rate or 0.0:.2f} gen/s"
                             f"  {per_second(stage.tokens, elapsed) or 0.0:.1f} tok/s  "
                             f"ETA {clock(eta)}")
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
