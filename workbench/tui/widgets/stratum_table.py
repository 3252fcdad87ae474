"""Agreement on one field per stratum value (operator family, dataset or model)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.widgets import DataTable

from workbench.tui.widgets import agreement_format as fmt

if TYPE_CHECKING:
    from annotate.agreement.kappa import Agreement


class StratumTable(DataTable):
    """Rows: one stratum value each; columns: N, raw agreement, kappa, CI, AC1, wording."""

    DEFAULT_CSS = """
    StratumTable {
        height: auto;
        max-height: 16;
        border: round $primary 50%;
        border-title-color: $text-primary;
    }
    """

    def on_mount(self) -> None:
        self.cursor_type = "none"
        self.zebra_stripes = True
        for heading in ("stratum", "N", "raw agr.", "κ", "95% CI", "AC1",
                        "Landis–Koch", "note"):
            self.add_column(heading)

    def show(self, dimension: str, field_label: str, agreements: Sequence[Agreement]) -> None:
        """Replace the rows with one per stratum value of `dimension`."""
        self.border_title = f"By {dimension}: {field_label}"
        self.clear()
        for agreement in agreements:
            value = (agreement.stratum or "").partition("=")[2] or "all"
            self.add_row(value, str(agreement.n), fmt.percent(agreement.raw_agreement),
                         fmt.kappa(agreement), fmt.ci(agreement), fmt.number(agreement.ac1),
                         agreement.interpretation,
                         fmt.flags(agreement) if agreement.kappa is not None else "")
