"""`ListTable`: the DataTable the workbench's lists use, redrawn once its columns are measured.

Textual's DataTable (8.2) measures column widths when it is next idle, after `add_row`, but
keys the lines it caches on a counter that measuring does not change: lines drawn between
`add_row` and that idle keep the old widths. So a list re-filled with a wider cell (a newly
imported dataset's long name, a run's row at 80 columns) stayed cut until a key press redrew
it (issue 38, item 7). A change of the table's virtual size (what measuring sets) drops
those cached lines here, through the widget's public `notify_style_update`.
"""

from __future__ import annotations

from textual.geometry import Size
from textual.widgets import DataTable


class ListTable(DataTable):
    """A DataTable whose cached lines are dropped when its measured size changes."""

    def watch_virtual_size(self, old: Size, new: Size) -> None:
        if old != new:
            self.notify_style_update()  # clears the render caches and refreshes
