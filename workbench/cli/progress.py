"""Progress of long work on the terminal: rich bars per block with done/total, rate and ETA.

One reporter for every command that generates (`paw run`, `paw audit`, `paw demo`, the
studies) and for large imports. It consumes the engine's events (`AuditPlanned`,
`StageStarted`, `BlockProgress`, `RunnerProgress`, `JudgeFinished`, `AuditFinished`) and the
runner's own (`RunStarted`, `ModelLoaded`, `GenerationFinished`, `RunFinished`).

On a terminal it draws one `rich.progress` bar per block (done/total, jobs/s, ETA) and a
status line with the current stage, model and generations/s. On a pipe or in CI it prints
one plain line per stage and the block counts when a stage ends, so logs stay short.
"""

from __future__ import annotations

import sys
import time
from typing import Any


def _plain_eta(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


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
        self.generated = 0
        self.tokens = 0
        self._stage_started = time.perf_counter()
        self._stage = ""
        self._model = ""
        self._progress: Any = None
        self._tasks: dict[str, Any] = {}
        self._status_task: Any = None

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
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            console = Console(file=self.stream, force_terminal=True)
            self._progress = Progress(
                TextColumn("{task.description:<12}"), BarColumn(bar_width=30),
                MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
                TextColumn("ETA"), TimeRemainingColumn(),
                console=console, transient=False, refresh_per_second=5)
            self._progress.start()
        return self._progress

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

    def _update_block(self, block: str, done: int, total: int) -> None:
        self.blocks[block] = (done, total)
        if not self.live:
            return
        progress = self._bars()
        task = self._tasks.get(block)
        if task is None:
            task = progress.add_task(block, total=max(total, 1), completed=done, rate="")
            self._tasks[block] = task
        progress.update(task, total=max(total, 1), completed=done)
        speed = progress.tasks[task].speed if task < len(progress.tasks) else None
        progress.update(task, rate=f"{speed:5.2f} jobs/s" if speed else "")

    def _update_status(self) -> None:
        if not self.live:
            return
        elapsed = max(time.perf_counter() - self._stage_started, 1e-9)
        text = (f"{self._stage} [{self._model}] {self.generated} gen "
                f"{self.generated / elapsed:.2f} gen/s {self.tokens / elapsed:.1f} tok/s")
        progress = self._bars()
        if self._status_task is None:
            self._status_task = progress.add_task("now", total=None, rate="")
        progress.update(self._status_task, description="now", rate=text)

    # ------------------------------------------------------------ events

    def __call__(self, event: Any) -> None:  # noqa: C901 - one branch per event type
        from workbench.audit.events import (
            AuditFinished,
            AuditPlanned,
            BlockProgress,
            JudgeFinished,
            RunnerProgress,
            StageStarted,
        )
        from workbench.models.events import (
            GenerationFinished,
            ModelLoaded,
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
            for block, total in event.totals.items():
                self._update_block(block, event.done.get(block, 0), total)
        elif isinstance(event, StageStarted):
            if self.blocks and not self.live:
                self.say(self._block_line())
            self._stage, self._model = event.stage, event.model
            self._stage_started = time.perf_counter()
            self.generated = self.tokens = 0
            self.say(f"{event.stage} [{event.model}]: {event.to_generate} to generate")
            self._update_status()
        elif isinstance(event, BlockProgress):
            self._update_block(event.block, event.done, event.total)
        elif isinstance(event, RunStarted):  # a bare runner (`paw run`)
            self._stage, self._stage_started = "run", time.perf_counter()
            self.say(f"{event.total} generations: {event.skipped} already stored, "
                     f"{event.to_generate} to run")
            if event.to_generate:
                self._update_block("generations", 0, event.to_generate)
            self._plain_every = max(1, event.to_generate // 20)
        elif isinstance(event, ModelLoaded):
            threads = f", {event.threads} threads" if event.threads else ""
            self.say(f"model {event.name} loaded in {event.seconds:.1f} s{threads}")
            self._model = event.name
            self._stage_started = time.perf_counter()
        elif isinstance(event, GenerationFinished):
            self.generated += 1
            self.tokens += event.tokens_out
            if self._stage == "run":
                self._update_block("generations", event.done, event.total)
                if not self.live and (event.done % getattr(self, "_plain_every", 1) == 0
                                      or event.done == event.total):
                    elapsed = max(time.perf_counter() - self._stage_started, 1e-9)
                    rate = event.done / elapsed
                    eta = (event.total - event.done) / rate if rate > 0 else 0.0
                    self.say(f"generations {event.done}/{event.total}  {rate:.2f} gen/s  "
                             f"{self.tokens / elapsed:.1f} tok/s  ETA {_plain_eta(eta)}")
            self._update_status()
        elif isinstance(event, JudgeFinished):
            self.say(f"judge {event.method}: {event.subjects} chains judged "
                     f"({event.yes} yes, {event.no} no; {event.stored} new)")
        elif isinstance(event, AuditFinished):
            if not self.live and self.blocks:
                self.say(self._block_line())
            counts = ", ".join(f"{n} {s}" for s, n in sorted(event.job_counts.items()))
            state = "stopped" if event.stopped else "finished"
            self.say(f"{state} in {event.elapsed_s:.0f} s: {event.generated} new "
                     f"generation(s); jobs: {counts}")
            self.close()
        elif isinstance(event, RunFinished):
            self.close()
