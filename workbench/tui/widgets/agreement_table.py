"""Agreement of the two raters per label field: three-way (or four-way) and binary rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.widgets import DataTable

from workbench.tui.widgets import agreement_format as fmt

if TYPE_CHECKING:
    from annotate.agreement.kappa import Agreement

COLUMNS: tuple[tuple[str, str], ...] = (
    ("field", "field"), ("form", "form"), ("n", "N"), ("kappa", "κ"), ("ac1", "AC1"),
    ("ci", "95% CI"), ("raw", "raw agr."), ("lk", "Landis–Koch"), ("note", "note"),
)
"""(key, heading) of every column, in order: κ and AC1 next to each other, within the
first 80 columns once numbers arrive (after the CI they were scrolled off at 80)."""


def row_key(agreement: Agreement) -> str:
    """Stable key of a row: '<field>|full' or '<field>|binary'."""
    return f"{agreement.field}|{'binary' if agreement.binary else 'full'}"


def cells(agreement: Agreement) -> list[str]:
    """The row's cells, in `COLUMNS` order."""
    return [agreement.field, fmt.form(agreement), str(agreement.n), fmt.kappa(agreement),
            fmt.number(agreement.ac1), fmt.ci(agreement), fmt.percent(agreement.raw_agreement),
            agreement.interpretation,
            fmt.flags(agreement) if agreement.kappa is not None else ""]


class AgreementTable(DataTable):
    """One row per (field, form); the highlighted row drives the confusion matrix below.

    Rows are updated in place, so the cursor stays on the row the coordinator chose while
    labels keep arriving.
    """

    # The table scrolls sideways inside its own width (the screen's body only scrolls up and
    # down, so a wider table was cut: AC1, the band and the note at 80 columns); field and
    # form stay put, and the confusion panel below repeats the highlighted row in full.
    DEFAULT_CSS = """
    AgreementTable {
        width: 100%;
        overflow-x: auto;
        height: auto;
        max-height: 13;
        border: round $primary 50%;
        border-title-color: $text-primary;
    }
    """

    def on_mount(self) -> None:
        self.border_title = "Agreement (all cases)"
        self.cursor_type = "row"
        self.zebra_stripes = True
        self.fixed_columns = 2
        for key, heading in COLUMNS:
            self.add_column(heading, key=key)

    def show(self, agreements: Sequence[Agreement]) -> None:
        """Add or update one row per agreement."""
        for agreement in agreements:
            key = row_key(agreement)
            values = cells(agreement)
            if key in self.rows:
                for (column, _), value in zip(COLUMNS, values, strict=True):
                    self.update_cell(key, column, value, update_width=True)
            else:
                self.add_row(*values, key=key)
