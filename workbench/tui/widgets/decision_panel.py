"""The adjudication decision: the disputed field, both raters' labels and notes, the allowed
values as keys, the reason, and any refusal shown in place."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, Static

from annotate.codebook import FIELDS, FieldKind

if TYPE_CHECKING:
    from annotate.adjudicate import RaterLabels


def value_keys(field: str, option_keys: Mapping[str, str]) -> dict[str, str]:
    """key -> value the coordinator may choose for `field` (digits, or the option keys)."""
    spec = FIELDS[field]
    if spec.kind == FieldKind.OPTION_LETTER:
        return dict(option_keys)
    return {v.key: v.value for v in spec.values}


def _rater_line(rater: RaterLabels, field: str, width: int) -> Content:
    others = [f"{FIELDS[name].title.lower()} {value}" for name, value in rater.labels.items()
              if name not in (field, "note") and name in FIELDS]
    note = rater.labels.get("note")
    parts: list[str | tuple[str, str]] = [
        (rater.name.ljust(width), "bold"), "  ",
        (rater.labels.get(field, "·"), "bold $text-warning"),
    ]
    if others:
        parts += ["   ", (f"({', '.join(others)})", "$text-muted")]
    parts += ["\n", " " * (width + 2), ("note: ", "$text-muted"),
              (note, "italic") if note else ("—", "$text-muted")]
    return Content.assemble(*parts)


class DecisionPanel(Vertical):
    """What is disputed and the coordinator's decision; the reason is typed in its input."""

    DEFAULT_CSS = """
    DecisionPanel {
        height: auto;
        border-top: round $accent;
        border-title-color: $text-accent;
        padding: 0 1;
    }
    DecisionPanel > #message { height: auto; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="dispute")
        yield Input(placeholder="reason (required): why this value", id="reason",
                    max_length=2000)
        yield Static(id="message")

    def show(self, *, title: str, field: str, raters: Sequence[RaterLabels],
             keys: Mapping[str, str], chosen: str | None) -> None:
        """Draw one decision.

        Args:
            title: the border title (position in the queue, stratum, kappa).
            field: the field to decide.
            raters: both raters' labels of the case (note included).
            keys: key -> allowed value.
            chosen: the value chosen so far (None: not yet).
        """
        self.border_title = title
        width = max((len(r.name) for r in raters), default=5)
        choices: list[str | tuple[str, str]] = [("final".ljust(width), "bold"), "  "]
        for key, value in keys.items():
            style = "bold reverse $text-accent" if value == chosen else "bold $text-accent"
            # An option letter is its own key: 'C', not 'c C'.
            choices += [(value, style), "  "] if key.upper() == value else \
                [(key, style), f" {value}  "]
        choices += ["→ ", (chosen, "bold $text-success") if chosen else
                    ("press a key", "$text-muted")]
        lines = [Content.assemble((FIELDS[field].question, "italic")),
                 *(_rater_line(r, field, width) for r in raters),
                 Content.assemble(*choices)]
        self.query_one("#dispute", Static).update(Content("\n").join(lines))

    def say(self, text: str, *, error: bool = False) -> None:
        """Show a message under the reason (a refusal in red, never a dialog)."""
        style = "bold $text-error" if error else "$text-success"
        self.query_one("#message", Static).update(Content.assemble((text, style)))

    @property
    def reason(self) -> Input:
        """The reason input."""
        return self.query_one("#reason", Input)
