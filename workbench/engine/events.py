"""Progress events of an audit run: small frozen dataclasses a CLI line or a Textual UI consumes.

The runner's own events (`RunStarted`, `ModelLoaded`, `GenerationFinished`, `RunFinished`)
are passed through as well, wrapped in `RunnerProgress` so a consumer knows which stage and
model they belong to.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from workbench.models import RunnerEvent


@dataclass(frozen=True)
class AuditPlanned:
    """The plan is stored: jobs to run per block (not-fired jobs excluded) and already done."""

    audit: str
    arms: tuple[str, ...]
    items: int
    totals: dict[str, int] = field(default_factory=dict)
    done: dict[str, int] = field(default_factory=dict)
    not_fired: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class StageStarted:
    """A stage began for one model: 'stage 1', 'stage 2' (F-block) or 'judge'."""

    stage: str
    model: str
    to_generate: int


@dataclass(frozen=True)
class BlockProgress:
    """A job finished (or was planned): `done` of `total` jobs of `block` are done.

    Attributes:
        block: 'baseline', 'direct', 'M', 'F', 'shuffle' or 'judge'.
        done: jobs of the block with their generation stored.
        total: jobs of the block that need a generation (not-fired ones excluded).
    """

    block: str
    done: int
    total: int


@dataclass(frozen=True)
class RunnerProgress:
    """A runner event during `stage` for `model`."""

    stage: str
    model: str
    event: RunnerEvent


@dataclass(frozen=True)
class JudgeFinished:
    """The chain-registration judge stored `stored` new verdicts (of `subjects`)."""

    method: str
    subjects: int
    stored: int
    yes: int
    no: int


@dataclass(frozen=True)
class AuditFinished:
    """The audit ran to the end (or stopped): generations made now and job counts."""

    audit: str
    generated: int
    job_counts: dict[str, int]
    elapsed_s: float
    stopped: bool = False


@dataclass(frozen=True)
class RunWarning:
    """Something the user must know before the run goes on (one line to show), e.g.
    another live process already running the same run on this store."""

    message: str


AuditEvent = (AuditPlanned | StageStarted | BlockProgress | RunnerProgress | JudgeFinished
              | AuditFinished | RunWarning)
"""Anything `run_audit` passes to `on_event`."""
