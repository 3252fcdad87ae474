"""The confusion matrix of one field: rows one rater, columns the other, with totals."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import Static

from workbench.tui.widgets import agreement_format as fmt

if TYPE_CHECKING:
    from annotate.agreement.kappa import Agreement


def matrix_lines(agreement: Agreement) -> list[str]:
    """Plain-text table: header of rater B's categories, one row per rater A category."""
    cats = list(agreement.categories)
    width = max(6, *(len(c) for c in cats), len(agreement.rater_a) + 2) + 1
    cell = max(5, *(len(c) for c in cats)) + 1
    head = f"{agreement.rater_a + ' ↓':<{width}}" + "".join(f"{c:>{cell}}" for c in cats)
    lines = [f"{'':<{width}}{agreement.rater_b + ' →':>{cell * len(cats)}}",
             head + f"{'total':>{cell}}"]
    for i, cat in enumerate(cats):
        row = agreement.confusion[i] if agreement.confusion else (0,) * len(cats)
        lines.append(f"{cat:<{width}}" + "".join(f"{v:>{cell}}" for v in row)
                     + f"{sum(row):>{cell}}")
    columns = [sum(agreement.confusion[i][j] for i in range(len(cats)))
               for j in range(len(cats))] if agreement.confusion else [0] * len(cats)
    lines.append(f"{'total':<{width}}" + "".join(f"{v:>{cell}}" for v in columns)
                 + f"{agreement.n:>{cell}}")
    return lines


class ConfusionMatrix(Static):
    """Shows the matrix and the summary line of the agreement row highlighted above."""

    DEFAULT_CSS = """
    ConfusionMatrix {
        height: auto;
        border: round $primary 50%;
        border-title-color: $text-primary;
        padding: 0 1;
    }
    """

    def show(self, agreement: Agreement | None) -> None:
        """Draw `agreement` (None: nothing computed yet)."""
        if agreement is None:
            self.border_title = "Confusion matrix"
            self.update("waiting for the first recomputation…")
            return
        self.border_title = f"Confusion: {agreement.field} ({fmt.form(agreement)})"
        style = "bold $text-warning" if agreement.kappa is None else "bold"
        self.update(Content.assemble(
            "\n".join(matrix_lines(agreement)), "\n", (fmt.summary(agreement), style)))
