"""What the labelling screen labels through: the shared store or a rater's own file.

`Labelling` is the one interface `workbench/tui/screens/annotate.py` uses — start a
session, the rater's queue of blinded `CaseView`s, one case, record a label (committed
before it returns), undo — so the screen, its keys and its guarantees are the same
whether the rater works on the shared `paw.db` (`StoreLabelling`) or offline on the file
`paw annotate pack` wrote for them (`annotate.raterfile.labelling.FileLabelling`).
"""

from __future__ import annotations

from typing import Any, Protocol

from annotate.sets.cases import CaseView
from annotate.trust.identity import Person


class Recorded(Protocol):
    """A stored label event, as the screen needs it (read-only: the events are frozen)."""

    @property
    def id(self) -> int: ...

    @property
    def code(self) -> str: ...

    @property
    def field(self) -> str: ...

    @property
    def value(self) -> str | None: ...


class Labelling(Protocol):
    """A rater's labelling session on one set (see the module docstring)."""

    person: Person
    """The signed-in rater."""

    def start(self) -> None:
        """Open a session (durable at once)."""
        ...

    def queue(self) -> list[CaseView]:
        """Every case in the rater's own order, with their own labels."""
        ...

    def view(self, code: str) -> CaseView:
        """One case, with the rater's current labels."""
        ...

    def record(self, code: str, field: str, value: str | None,
               time_on_item_ms: int | None = None, companion: str | None = None) -> Recorded:
        """Validate and store one label (with its companion's value where the field has
        one: `annotate.labels.COMPANIONS`), committed before this returns."""
        ...

    def undo(self) -> Recorded | None:
        """Undo the session's latest label (a new event); None when nothing is left."""
        ...


class StoreLabelling:
    """Labelling on the shared store (`annotate.events`, `annotate.sets.annotation_set`).

    Args:
        db: the store.
        person: the signed-in rater.
        set_name: the set.
        app: app name stamped on the session.
    """

    def __init__(self, db: Any, person: Person, set_name: str, app: str) -> None:
        self.db, self.person, self.set_name, self.app = db, person, set_name, app
        self.session: Any = None

    def start(self) -> None:
        """Open a labelling session in the store."""
        from annotate.events import start_session

        self.session = start_session(self.db, self.person, self.set_name, app=self.app)

    def queue(self) -> list[CaseView]:
        """The rater's queue (`annotate.sets.annotation_set.rater_queue`)."""
        from annotate.sets.annotation_set import rater_queue

        return rater_queue(self.db, self.set_name, self.person)

    def view(self, code: str) -> CaseView:
        """One case (`annotate.sets.cases.get_case_view`)."""
        from annotate.sets.cases import get_case_view

        return get_case_view(self.db, code, self.person)

    def record(self, code: str, field: str, value: str | None,
               time_on_item_ms: int | None = None, companion: str | None = None) -> Recorded:
        """`annotate.events.record_label` in this session."""
        from annotate.events import record_label

        return record_label(self.db, self.person, self.session, code, field, value,
                            time_on_item_ms=time_on_item_ms, companion=companion)

    def undo(self) -> Recorded | None:
        """`annotate.events.undo_last` in this session."""
        from annotate.events import undo_last

        return undo_last(self.db, self.person, self.session)
