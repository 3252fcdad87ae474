"""Progress events the runner reports: small frozen dataclasses for a CLI bar or a Textual UI."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class RunSummary:
    """What a run did, over all its requests (stored earlier or now).

    `accuracy` counts requests whose gold is known; `parse_rate` is the share of
    requests with parse status 'ok'; `tokens_per_s` is output tokens generated in
    this run per second of generation time.
    """

    total: int
    skipped: int
    generated: int
    errors: int
    parsed_ok: int
    correct: int
    with_gold: int
    tokens_in: int
    tokens_out: int
    elapsed_s: float
    stopped: bool
    status_counts: dict[str, int] = field(default_factory=dict)
    keys: tuple[str, ...] = ()

    @property
    def accuracy(self) -> float | None:
        """Correct / requests with a known gold (None when there are none)."""
        return self.correct / self.with_gold if self.with_gold else None

    @property
    def parse_rate(self) -> float | None:
        """Requests parsed 'ok' / requests stored (None when nothing is stored)."""
        stored = sum(self.status_counts.values())
        return self.parsed_ok / stored if stored else None

    @property
    def tokens_per_s(self) -> float | None:
        """Generated output tokens per second in this run."""
        return self.tokens_out / self.elapsed_s if self.elapsed_s > 0 else None


@dataclass(frozen=True)
class RunStarted:
    """A run began: `total` requests, `skipped` of them already stored."""

    total: int
    skipped: int

    @property
    def to_generate(self) -> int:
        """Requests that need the model."""
        return self.total - self.skipped


@dataclass(frozen=True)
class ModelLoaded:
    """The backend finished loading the model (only emitted when something is generated).

    `threads`: the cores it uses (`--threads`, or the idle cores when it loaded).
    """

    name: str
    seconds: float
    threads: int | None = None


@dataclass(frozen=True)
class BatchingChecked:
    """The batching verdict for a freshly loaded model (reported once per runner).

    `identical` False means the self-check found batched decoding changed bits, or could
    not compare some width, so the runner decodes one sequence at a time; `detail` says
    what differed. `stored_at` is when a stored verdict was measured (None: just now).
    """

    name: str
    identical: bool
    n_seq: int
    detail: str
    seconds: float
    decoders: int = 1
    threads: int | None = None
    stored_at: str | None = None
    cpu_seconds: float = 0.0

    @property
    def message(self) -> str:
        """One line for a progress display."""
        cpu = f", {self.cpu_seconds:.1f} CPU-s" if self.cpu_seconds else ""
        when = f"self-check of {self.stored_at} reused" if self.stored_at else \
            f"self-check {self.seconds:.1f} s{cpu}"
        if self.identical:
            on = f" on {self.decoders} decoders" if self.decoders > 1 else ""
            threads = f" of {self.threads} thread{'s' * (self.threads != 1)}" \
                if self.threads else ""
            return (f"batched decoding on: {self.n_seq} sequences per batch{on}{threads} "
                    f"(bit-identical to one at a time; {when})")
        return (f"batched decoding off for {self.name}: the self-check found batched results "
                f"differ from one-at-a-time decoding, or could not compare them "
                f"({self.detail}); decoding one at a time ({when})")


@dataclass(frozen=True)
class BatchingProgress:
    """The batching self-check is running: `done` of `total` probes of `phase` ('batched':
    on the decoders, first; 'reference': one at a time, compared step by step)."""

    name: str
    phase: str
    done: int
    total: int

    @property
    def message(self) -> str:
        """One line for a progress display."""
        what = "one at a time, compared" if self.phase == "reference" else "batched"
        return (f"batching self-check of {self.name}: {what} {self.done}/{self.total} probes "
                "(stops at the first difference)")


@dataclass(frozen=True)
class GenerationFinished:
    """One generation was stored: `done` of `total` to generate in this run."""

    done: int
    total: int
    key: str
    tokens_in: int
    tokens_out: int
    latency_s: float
    answer: str | None
    parse_status: str
    correct: bool | None = None


@dataclass(frozen=True)
class RunFinished:
    """The run ended (finished, or stopped early when `summary.stopped`)."""

    summary: RunSummary


@dataclass(frozen=True)
class PoolNotice:
    """A server pool's endpoint was dropped, came back or cannot join (one line to show)."""

    message: str


@dataclass(frozen=True)
class WidthChosen:
    """The batch width was chosen by measuring (`workbench.models.width`): the choice and
    its rates, in `message` (reported once per runner, before the self-check)."""

    name: str
    message: str


RunnerEvent = (RunStarted | ModelLoaded | BatchingChecked | BatchingProgress
               | GenerationFinished | RunFinished | PoolNotice | WidthChosen)
"""Anything `Runner.run` passes to `on_event`."""
