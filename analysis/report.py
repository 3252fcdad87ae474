"""Audit report: a list of `Section`s rendered as Markdown, HTML or JSON, plus the FCS plane PNG."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Section:
    """One titled table of a report.

    Other packages (e.g. `annotate.stats`) build `Section`s too, and the CLI appends them to
    the audit's own sections before rendering, so every table reaches every format.

    Attributes:
        title: heading, e.g. "Table 3: per-arm summary".
        frame: the table; its index is rendered as the first column(s).
        note: one paragraph under the table (definitions, exclusions, n).
        key: machine name used as the JSON key (default: derived from the title).
    """

    title: str
    frame: pd.DataFrame
    note: str = ""
    key: str = ""

    @property
    def json_key(self) -> str:
        """`key` if set, else the title lower-cased with non-alphanumerics as '_'."""
        if self.key:
            return self.key
        import re

        return re.sub(r"[^a-z0-9]+", "_", self.title.lower()).strip("_")
