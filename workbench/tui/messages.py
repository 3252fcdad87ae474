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
    """What the core returned (see `annotate.agreement`)."""

    def can_replace(self, message: Message) -> bool:
        # Only the newest recomputation matters; drop older ones still queued.
        return isinstance(message, AgreementComputed)
