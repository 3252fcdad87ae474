"""Progress of each rater through the set: labelled / total, started, last label time."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.widgets import DataTable

if TYPE_CHECKING:
    from annotate.agreement.tables import RaterProgress

BAR_WIDTH = 12


def bar(done: int, total: int, width: int = BAR_WIDTH) -> str:
    """A text progress bar, e.g. '█████░░░░░' for half done."""
    filled = 0 if total <= 0 else round(width * done / total)
    return "█" * filled + "░" * (width - filled)


def time_text(iso_utc: str | None) -> str:
    """'YYYY-MM-DD HH:MM:SS' of an ISO-8601 UTC time, '—' for none (tests pin it)."""
    return "—" if iso_utc is None else iso_utc[:19].replace("T", " ")


class RaterProgressTable(DataTable):
    """One row per rater (coordinator screen only: raters never see each other's progress)."""

    DEFAULT_CSS = """
    RaterProgressTable {
        height: auto;
        max-height: 8;
        border: round $primary 50%;
        border-title-color: $text-primary;
    }
    """

    def on_mount(self) -> None:
        self.border_title = "Progress"
        self.cursor_type = "none"
        for heading in ("rater", "labelled", "", "started"):
            self.add_column(heading)
        # The time's own width, set: measured from the cells, it came out 6 wider in about
        # one render of six (a snapshot race under load); 'YYYY-MM-DD HH:MM:SS' is 19 wide.
        self.add_column("last label UTC", width=19)

    def show(self, progress: Sequence[RaterProgress]) -> None:
        """Replace the rows."""
        self.clear()
        if not progress:
            self.add_row("no rater has opened this set yet", "", "", "", "")
        for p in progress:
            self.add_row(p.name, f"{p.done} / {p.total}", bar(p.done, p.total),
                         str(p.started), time_text(p.last_label_at))
