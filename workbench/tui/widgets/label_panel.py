"""The rater's label fields for the current case: keys, current values, the active field."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from textual.content import Content
from textual.widgets import Static

from annotate.codebook import FIELDS

_TITLE_WIDTH = 19
_VALUE_WIDTH = 12


def _value_text(field: str, value: str | None) -> str:
    if value is None:
        return "·"
    if field == "note":
        return value if len(value) <= _VALUE_WIDTH else value[: _VALUE_WIDTH - 1] + "…"
    return value


def field_keys(field: str) -> Content:
    """The key legend of one field, e.g. `1 valid  2 borderline  3 invalid`."""
    spec = FIELDS[field]
    if spec.kind == "option_letter":
        return Content.assemble(("1", "bold $text-accent"), " choose the new option letter")
    if spec.kind == "text":
        return Content.assemble(("n", "bold $text-accent"), " write a note (optional)")
    parts: list[str | tuple[str, str]] = []
    for value in spec.values:
        parts += [(value.key, "bold $text-accent"), f" {value.value}  "]
    return Content.assemble(*parts)


class LabelPanel(Static):
    """One line per applicable field: title, keys, current value; the active field is marked.

    This panel is also the on-screen key legend for the label values (the footer holds
    the navigation keys), so it is always visible below the case.
    """

    DEFAULT_CSS = """
    LabelPanel { height: auto; border: round $accent; padding: 0 1; }
    """

    def on_mount(self) -> None:
        self.border_title = "Labels"

    def show(self, fields: Sequence[str], labels: Mapping[str, str], active: str | None) -> None:
        """Redraw for a case.

        Args:
            fields: applicable fields in order (from the codebook, given the labels).
            labels: this rater's current labels for the case.
            active: the field the digit keys set now (None: all set).
        """
        lines: list[Content] = []
        if active is not None:
            lines.append(Content.assemble((FIELDS[active].question, "italic")))
        else:
            lines.append(Content.assemble(("All fields set · ] next case · ↑↓ pick a field "
                                           "to change", "italic $text-success")))
        for name in fields:
            spec = FIELDS[name]
            marker = ("▸ ", "bold $text-accent") if name == active else ("  ", "")
            title = (spec.title.ljust(_TITLE_WIDTH), "bold" if name == active else "")
            value = labels.get(name)
            shown = _value_text(name, value)
            value_style = "bold $text-success" if value is not None else "$text-muted"
            line = Content.assemble(marker, title, (f"= {shown}".ljust(_VALUE_WIDTH + 3),
                                                    value_style))
            if name == active or name == "note":
                line = line + field_keys(name)
            lines.append(line)
        self.update(Content("\n").join(lines))
