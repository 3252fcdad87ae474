"""Past-tense messages the screens post (small dataclasses, as in toolong and harlequin)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message


@dataclass
class LabelRecorded(Message):
    """A label event was committed for the current rater (value None: cleared)."""

    code: str
    field: str
    value: str | None
    event_id: int


@dataclass
class LabelUndone(Message):
    """The rater's latest label of this session was undone by a new event."""

    code: str
    field: str
    restored: str | None
    event_id: int


@dataclass
class CaseShown(Message):
    """A case came on screen (position is 1-based in the rater's own order)."""

    code: str
    position: int


@dataclass
class AgreementComputed(Message):
    """The coordinator's agreement and progress figures were recomputed in a worker."""

    report: Any
    """What the core returned (see `annotate.agreement.tables`)."""

    def can_replace(self, message: Message) -> bool:
        # Only the newest recomputation matters; drop older ones still queued.
        return isinstance(message, AgreementComputed)


@dataclass
class RunsListed(Message):
    """The Runs screen's worker re-read the runs in the store."""

    runs: Any
    """`store.runs.RunInfo` rows, oldest first."""
    details: Any
    """Per run id, [(block, done, total)]."""
    unparsed: Any = None
    """Per run id, `store.runs.ArmAnswers` of each arm (the unparsed share)."""

    def can_replace(self, message: Message) -> bool:
        # Only the newest listing matters.
        return isinstance(message, RunsListed)


@dataclass
class ReportBuilt(Message):
    """The statistics screen's worker built a run's report."""

    report: Any
    """`analysis.common.document.Report`."""
    runs: Any
    """Ids of every run in the store (to step between them)."""
    plots: Any = None
    """Figure index -> `PlotData` of each figure that has one (computed in the worker)."""
    requested: int | None = None
    """The run the worker was asked for (None: the latest), so the screen can drop a report
    for a run it has since stepped away from."""

    def can_replace(self, message: Message) -> bool:
        # Only a newer report of the same request: one for another run must not push out
        # the report the screen is waiting for.
        return isinstance(message, ReportBuilt) and message.requested == self.requested


@dataclass
class StoreListed(Message):
    """The Models & data screen's worker re-read the registered models and datasets."""

    models: Any
    datasets: Any


@dataclass
class FlipsListed(Message):
    """The flip inspector's worker listed one page for filter request `request`."""

    request: int
    page: Any
    """`analysis.flips.listing.FlipPage`, or None with nothing to list (`error` says why)."""
    values: Any
    """What the filters can take (arms, families, intents, datasets), when asked for."""
    error: str

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, FlipsListed)


@dataclass
class FilterValuesRead(Message):
    """The flip inspector's worker read what each filter can take."""

    values: Any
    """{'arms': [...], 'families': [...], 'intents': [...], 'operators': [...],
    'datasets': [...]}"""


@dataclass
class SignedIn(Message):
    """The workbench's coordinator sign-in finished (person None: refused, `error` says why)."""

    person: Any
    set_name: str
    error: str
    rater: bool = False
    """A rater signed in with the right passphrase (refused, but not a wrong guess)."""
