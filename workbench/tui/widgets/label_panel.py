"""The rater's label fields for the current case: keys, current values, the active field."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from textual.content import Content
from textual.widgets import Static

from annotate.codebook import EVIDENCE, FIELDS, FieldKind

_TITLE_WIDTH = 19
_VALUE_WIDTH = 12

PANEL_NAMES: dict[str, str] = {"question": "the edited question", "options": "the options",
                               "answers": "the model's answers",
                               "chain": "the model's reasoning"}
"""Short names of the evidence panels, for 'read … first' hints."""

ALL_SET = "Case complete — enter/] next case · n add a note · ↑↓ change a field"
"""The panel's first line once every field of the case is labelled (the case stays on
screen until the rater moves on, so a note can follow the last label)."""


def _value_text(field: str, value: str | None) -> str:
    if value is None:
        return "·"
    if field == "note":
        return value if len(value) <= _VALUE_WIDTH else value[: _VALUE_WIDTH - 1] + "…"
    return value


def field_keys(field: str, option_keys: Mapping[str, str] | None = None,
               gap: str = "  ") -> Content:
    """The key legend of one field, e.g. `1 valid  2 borderline  3 invalid`.

    Args:
        field: the field.
        option_keys: key -> option label, for the option field (every option but the gold).
        gap: space between two keys (one space when two would wrap the line).
    """
    spec = FIELDS[field]
    parts: list[str | tuple[str, str]] = []
    if spec.kind == FieldKind.OPTION_LETTER:
        for key, label in (option_keys or {}).items():
            parts += [(key, "bold $text-accent"), f" {label}{gap}" if key.upper() != label
                      else gap]
        return Content.assemble(*parts).rstrip() if parts else Content("choose the option")
    if spec.kind == FieldKind.TEXT:
        return Content.assemble(("n", "bold $text-accent"), " write a note (optional)")
    for value in spec.values:
        parts += [(value.key, "bold $text-accent"), f" {value.value}{gap}"]
    return Content.assemble(*parts).rstrip()


def waiting_text(unseen: Sequence[str], keys: Mapping[str, str]) -> str:
    """'read the model's answers (a) first' for evidence not yet on screen."""
    names = [f"{PANEL_NAMES.get(name, EVIDENCE.get(name, name))} ({keys.get(name, 'tab')})"
             for name in unseen]
    return f"read {' and '.join(names)} first"


class LabelPanel(Static):
    """One line per applicable field: title, keys, current value; the active field is marked.

    This panel is also the on-screen key legend for the label values (the footer holds
    the navigation keys), so it is always visible below the case.
    """

    DEFAULT_CSS = """
    LabelPanel {
        height: auto;
        border-top: round $accent;
        border-title-color: $text-accent;
        padding: 0 1;
    }
    """

    def on_mount(self) -> None:
        self.border_title = "Labels"

    def show(self, fields: Sequence[str], labels: Mapping[str, str], active: str | None, *,
             option_keys: Mapping[str, str] | None = None, unseen: Sequence[str] = (),
             panel_keys: Mapping[str, str] | None = None) -> None:
        """Redraw for a case.

        Args:
            fields: applicable fields in order (from the codebook, given the labels).
            labels: this rater's current labels for the case.
            active: the field the keys set now (None: all set).
            option_keys: key -> option label offered for the new-answer field.
            unseen: evidence the active field needs that has not been on screen yet.
            panel_keys: evidence name -> the key that shows it.
        """
        # The 'read … first' hint goes in the title rule, so the panel never changes height
        # (a taller panel would shrink the case pane under the rater's eyes).
        self.border_title = (
            f"Labels · [b $text-warning]{waiting_text(unseen, panel_keys or {})}[/]"
            if active is not None and unseen else "Labels")
        width = max(self.size.width - 2, 40)
        lines: list[Content] = []
        if active is not None:
            lines.append(Content.assemble((FIELDS[active].question, "italic")))
        else:
            lines.append(Content.assemble((ALL_SET, "italic $text-success")))
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
                keys = field_keys(name, option_keys)
                if line.cell_length + keys.cell_length > width:
                    keys = field_keys(name, option_keys, gap=" ")
                line = line + keys
            lines.append(line)
        self.update(Content("\n").join(lines))
