"""`?` / F1: every key of the screen underneath, with what it does; escape closes it.

Built from the screen's live bindings (`Screen.active_bindings`: the screen's own, its
focused widget's and the app's), so a key added to a screen is listed without editing a
help text, and a screen may add a few lines of its own through `help_notes()`.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.table import Table
from rich.text import Text
from textual.actions import parse as parse_action
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

HELP_KEYS = Binding("question_mark,f1", "app.help", "help", key_display="?", show=False)
"""`?` and F1 on a modal screen: a modal stops the app's bindings (Textual's modal binding
chain), so each modal of the rater's and coordinator's apps lists this one."""

HIDDEN_ACTIONS = frozenset({"app.help", "help", "app.focus_next", "app.focus_previous"})
"""Actions not worth a line (the help key itself, tab focus)."""


def _words(screen: Screen, binding: Binding) -> str:
    """What a key does, in words: the binding's tooltip (the help's own wording), else its
    footer description, else the first line of the action method's docstring."""
    if binding.tooltip or binding.description:
        return binding.tooltip or binding.description
    _, name, _ = parse_action(binding.action)
    method = getattr(screen, f"action_{name}", None)
    doc = (getattr(method, "__doc__", None) or "").strip().splitlines()
    return doc[0].rstrip(".") if doc else name.replace("_", " ")


def _enabled(screen: Screen, action: str) -> bool:
    """Whether `action` (with its parameters, as the binding names them) acts now on
    `screen`; an action of another namespace (`app.quit`) always does."""
    namespace, name, parameters = parse_action(action)
    if namespace:
        return True
    return screen.check_action(name, parameters) is True


def key_rows(screen: Screen) -> list[tuple[str, str]]:
    """(key as shown, what it does) for every key of `screen`: its own first (also those it
    hides from the footer while they do nothing, marked "not now"; a hidden key of an action
    already listed, such as the digits after `1…`, is not repeated), then rows the screen
    adds through `help_rows()` (keys it reads itself, such as option letters), then the
    app's and the focused widget's (cursor keys)."""
    rows: list[tuple[str, str]] = []
    seen: set[str] = set()
    actions: set[str] = set()
    for cls in type(screen).__mro__:
        if cls in (Screen, ModalScreen):
            break
        for binding in getattr(cls, "BINDINGS", None) or ():
            if not isinstance(binding, Binding) or binding.action in HIDDEN_ACTIONS:
                continue
            shown = binding.key_display or screen.app.get_key_display(binding)
            name = parse_action(binding.action)[1]
            if shown in seen:
                continue
            seen.add(shown)  # a repeated key is not listed again below, as the app's
            if not (binding.show or binding.description or binding.tooltip) \
                    and name in actions:
                continue  # e.g. the digits after `1…`, `↓` after `↑↓`
            actions.add(name)
            what = _words(screen, binding)
            rows.append((shown, what if _enabled(screen, binding.action)
                         else f"{what} (not now)"))
    extra = getattr(screen, "help_rows", None)
    for shown, what in extra() if extra is not None else ():
        if shown not in seen:
            seen.add(shown)
            rows.append((shown, what))
    for _, active in screen.active_bindings.items():
        binding = active.binding
        if binding.action in HIDDEN_ACTIONS or binding.system:
            continue
        shown = binding.key_display or screen.app.get_key_display(binding)
        if shown in seen:  # the screen's meaning of a key wins over a widget's
            continue
        seen.add(shown)
        rows.append((shown, binding.tooltip or binding.description or binding.action))
    return rows


class HelpModal(ModalScreen[None]):
    """The keys of one screen (and the app), and any notes the screen gives."""

    BINDINGS = [Binding("escape,q,question_mark,f1", "close", "close")]

    DEFAULT_CSS = """
    HelpModal { align: center middle; }
    HelpModal > VerticalScroll {
        width: 90%; max-width: 96; height: auto; max-height: 90%; border: thick $primary;
        background: $surface; padding: 0 1;
    }
    """

    def __init__(self, title: str, rows: Iterable[tuple[str, str]],
                 notes: Iterable[str] = ()) -> None:
        super().__init__()
        self.title_text = title
        self.rows = list(rows)
        """(key, what it does), as listed."""
        self.notes = list(notes)

    def compose(self) -> ComposeResult:
        table = Table(show_header=True, header_style="bold", box=None, expand=True,
                      padding=(0, 1))
        table.add_column("key", no_wrap=True, style="bold")
        table.add_column("does", ratio=1)
        for key, what in self.rows:
            table.add_row(Text(key), Text(what))
        with VerticalScroll():
            yield Static(Text(f"Keys · {self.title_text}", style="bold"))
            yield Static(table)
            for note in self.notes:
                yield Static(Text(note, style="dim"))
            yield Static(Text("escape closes this help", style="dim"))

    def action_close(self) -> None:
        """Close the help."""
        self.dismiss(None)
