"""The launch form: dataset, models, templates, operators (or the full battery), which items
(the first N, only the yes/no or multiple-choice questions, or ids), seed.

It starts small (`SMALL_DEFAULTS`: two items, three operator families, 256 tokens — a
minute or two on the embedded model) rather than the whole battery. Each field is checked
in place as it is typed, by the CLI's own rules (`resolve_operators`, whole numbers), with
the reason under the field; the whole form again on launch (`AuditSpec`). Only the Launch
button, ctrl+enter or ctrl+s launch: enter in a field moves to the next one. Models and
templates show `[x]` / `[ ]`, not a colour. Under the operators a note says when the battery
can never give FCS (`perturb.battery.fcs_gap`: the small default has no preserving chain
edit), and under the items how many the choice takes.
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.strip import Strip
from textual.widgets import Button, Input, Label, Select, SelectionList, Static

from workbench.engine.plans import ITEM_KINDS
from workbench.tui.components.form_screen import FOCUS_NOW

SMALL_DEFAULTS: dict[str, str] = {"operators": "M4,F1,shuffle", "limit": "2", "seed": "0",
                                  "max-tokens": "256"}
"""Where the form starts: the M4 negations, the F1 truncations and the option shuffle on two
items (about 20 generations), 256 tokens per answer. `all` is the full battery (30
operators on every item)."""

DEFAULT_OPERATORS = SMALL_DEFAULTS["operators"]


class TickList(SelectionList):
    """A `SelectionList` whose boxes read `[x]` / `[ ]`, so a tick does not hang on colour."""

    def render_line(self, y: int) -> Strip:
        line = super().render_line(y)
        segments = list(line)
        index = self.scroll_offset[1] + y
        if len(segments) < 3 or index >= self.option_count:
            return line
        ticked = self.get_option_at_index(index).value in self.selected
        plain = segments[3].style if len(segments) > 3 else None
        marks = ("[", "x" if ticked else " ", "]")
        for n, mark in enumerate(marks):
            segments[n] = segments[n].__class__(mark, plain if n != 1 else segments[1].style)
        return Strip(segments, line.cell_length)


def field_problem(field: str, value: str) -> str:
    """Why a typed field is not valid ("" when it is), by the CLI's rules."""
    from store.errors import UserError

    text = value.strip()
    if field == "operators":
        from workbench.perturb import resolve_operators

        if not text:
            return "--operators: expected all, F, M, shuffle, families or ids, got nothing"
        try:
            resolve_operators(text)
        except UserError as exc:
            message = str(exc)
            return message if len(message) <= 200 else message[:199] + "…"
        return ""
    name = field.replace("-", " ")
    if field in ("limit", "seed", "max-tokens"):
        if not text:
            return "" if field == "limit" else f"{name}: expected a whole number, got nothing"
        if not text.isdigit():
            return f"{name}: expected a whole number, got {text!r}"
        if field in ("limit", "max-tokens") and int(text) < 1:
            return f"{name}: expected at least 1, got {text}"
        if int(text) > 2**63 - 1:
            return f"{name}: expected at most 2^63-1"
    return ""


def fcs_note(operators: str) -> str:
    """The note under the operators: why this battery cannot give FCS ("" when it can, or
    while the field is invalid: its error is shown instead)."""
    from store.errors import UserError
    from workbench.perturb import resolve_operators
    from workbench.perturb.battery import fcs_gap

    try:
        chosen = resolve_operators(operators) if operators.strip() else ()
    except UserError:
        return ""
    return fcs_gap(chosen) if chosen else ""


class LaunchModal(ModalScreen[Any]):
    """Returns an `AuditSpec` to run, or None when cancelled.

    Args:
        db_path: the store (datasets, models are listed from it).
    """

    BINDINGS = [Binding("escape", "cancel", "cancel"),
                Binding("ctrl+enter,ctrl+s", "launch", "launch", key_display="^⏎/^s"),
                *FOCUS_NOW,
                # Enter in a text field moves on at once too (`FOCUS_NOW`): typed quickly,
                # "M4<enter>5" put "M45" in the operators (the issue's `M4_negation_a1`).
                Binding("enter", "next_field", "next field", show=False, priority=True)]

    DEFAULT_CSS = """
    LaunchModal { align: center middle; }
    LaunchModal > VerticalScroll {
        width: 96%; max-width: 110; height: auto; max-height: 96%; border: thick $primary;
        background: $surface; padding: 0 1;
    }
    LaunchModal .row { height: auto; }
    LaunchModal .row > Label { width: 14; padding: 0 1 0 0; }
    LaunchModal .row > Input, LaunchModal .row > Select, LaunchModal .row > SelectionList {
        width: 1fr;
    }
    LaunchModal Input, LaunchModal Input:focus, LaunchModal Input.-invalid {
        border: none; height: 1; padding: 0 1; background: $boost;
    }
    LaunchModal Input:focus { background: $primary 30%; }
    LaunchModal SelectionList { height: auto; max-height: 4; border: none; padding: 0; }
    LaunchModal SelectionList:focus { background: $primary 15%; }
    LaunchModal Select { height: 1; }
    LaunchModal SelectCurrent { border: none; height: 1; padding: 0 1; }
    LaunchModal .gap { height: 1; width: 2; }
    LaunchModal #launch-error { color: $text-error; height: auto; }
    LaunchModal .field-error { color: $text-error; height: auto; padding: 0 0 0 14; }
    LaunchModal .field-note { color: $text-warning; height: auto; padding: 0 0 0 14; }
    LaunchModal #items-note { color: $text-muted; }
    LaunchModal #launch-title { text-style: bold; }
    """

    def __init__(self, db_path: str) -> None:
        super().__init__()
        self.db_path = db_path

    def compose(self) -> ComposeResult:
        from store.datasets import list_datasets
        from store.db import open_db
        from workbench.models import TEMPLATES, default_model
        from store.models import list_models

        db = open_db(self.db_path)
        try:
            default_model(db)  # the embedded model is always offered
            datasets = list_datasets(db)
            models = list_models(db)
        finally:
            db.conn.close()
        cot = [t for t in TEMPLATES.values() if t.mode == "cot"]
        with VerticalScroll():
            yield Static("New seed-002 audit", id="launch-title")
            yield Static("tab/enter next field · space ticks a model/template · ctrl+enter "
                         "or ctrl+s launch · escape cancel · starts small: 2 items, M4,F1,"
                         "shuffle, 256 tokens ('all' = the full battery)", classes="hint")
            with Horizontal(classes="row"):
                yield Label("Dataset")
                yield Select([(f"{d.name} ({d.n_items} items)", d.name) for d in datasets],
                             id="dataset", allow_blank=not datasets, compact=True,
                             value=datasets[0].name if datasets else Select.BLANK)
            with Horizontal(classes="row"):
                yield Label("Models")
                yield TickList(
                    *[(m.name, m.name, m.name == "default") for m in models], id="models")
            with Horizontal(classes="row"):
                yield Label("Templates")
                yield TickList(
                    *[(t.id, t.id, t.id == "neutral_cot@1") for t in cot], id="templates")
            with Horizontal(classes="row"):
                yield Label("Operators")
                yield Input(SMALL_DEFAULTS["operators"], id="operators",
                            placeholder="all | F | M | shuffle | F1,M2 | ids")
            yield Static("", id="operators-error", classes="field-error", markup=False)
            yield Static(fcs_note(SMALL_DEFAULTS["operators"]), id="operators-note",
                         classes="field-note", markup=False)
            with Horizontal(classes="row"):
                yield Label("Limit")
                yield Input(SMALL_DEFAULTS["limit"], id="limit", placeholder="empty: all items")
            yield Static("", id="limit-error", classes="field-error", markup=False)
            with Horizontal(classes="row"):
                yield Label("Seed")
                yield Input(SMALL_DEFAULTS["seed"], id="seed")
            yield Static("", id="seed-error", classes="field-error", markup=False)
            with Horizontal(classes="row"):
                yield Label("Max tokens")
                yield Input(SMALL_DEFAULTS["max-tokens"], id="max-tokens")
            yield Static("", id="max-tokens-error", classes="field-error", markup=False)
            with Horizontal(classes="row"):
                yield Label("Items")
                yield Select([(label, key) for key, label in ITEM_KINDS.items()],
                             id="item-kind", allow_blank=False, compact=True, value="any")
            with Horizontal(classes="row"):
                yield Label("Item ids")
                yield Input("", id="item-ids",
                            placeholder="optional: e.g. triage-001,triage-002 (then no Limit)")
            yield Static("", id="items-note", classes="field-note", markup=False)
            yield Static("", id="launch-error")
            with Horizontal(classes="row"):
                yield Button("Launch", id="launch", variant="primary", compact=True)
                yield Static(" ", classes="gap")
                yield Button("Cancel", id="cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one("#dataset", Select).focus()
        self._note_items()

    def chosen_items(self, dataset: str, check_ids: bool = False
                     ) -> tuple[tuple[str, ...] | None, int | None]:
        """(item ids, limit) the item fields choose: typed ids (no limit), the first
        `Limit` of one kind, or (None, Limit) for the dataset's first items.

        Raises:
            UserError: an invalid limit, no item of the chosen kind, or (`check_ids`) a
                typed id not in the dataset.
        """
        from store.db import open_db
        from workbench.engine.plans import items_of_kind

        problem = field_problem("limit", self.query_one("#limit", Input).value)
        if problem:
            from store.errors import UserError

            raise UserError(problem)
        limit_text = self.query_one("#limit", Input).value.strip()
        limit = int(limit_text) if limit_text else None
        typed = tuple(w.strip() for w in self.query_one("#item-ids", Input).value.split(",")
                      if w.strip())
        if typed:
            if check_ids:  # as the planner will: refused here, before anything is launched
                from types import SimpleNamespace

                from workbench.engine.plans import select_items

                db = open_db(self.db_path)
                try:
                    select_items(db, SimpleNamespace(dataset=dataset, limit=None,
                                                     item_ids=typed))
                finally:
                    db.conn.close()
            return typed, None
        kind = str(self.query_one("#item-kind", Select).value)
        if kind == "any":
            return None, limit
        db = open_db(self.db_path)
        try:
            return items_of_kind(db, dataset, kind, limit), None
        finally:
            db.conn.close()

    def _note_items(self) -> None:
        """Say which items the choice takes (the count of a kind, or that ids win)."""
        from store.errors import UserError

        note = self.query_one("#items-note", Static)
        dataset = self.query_one("#dataset", Select).value
        if dataset is Select.BLANK or not dataset:
            note.update("")
            return
        try:
            ids, limit = self.chosen_items(str(dataset))
        except UserError as exc:
            note.update(str(exc))
            return
        if self.query_one("#item-ids", Input).value.strip():
            note.update(f"{len(ids or ())} item(s) by id, in that order (Limit is not used)")
        elif ids is not None:
            kind = ITEM_KINDS[str(self.query_one("#item-kind", Select).value)]
            note.update(f"{len(ids)} {kind} of {dataset}: {', '.join(ids[:3])}"
                        f"{', …' if len(ids) > 3 else ''}")
        else:
            note.update(f"the first {limit} item(s) of {dataset}" if limit
                        else f"every item of {dataset}")

    def build_spec(self) -> Any:
        """The `AuditSpec` the form describes.

        Raises:
            UserError: a field is invalid (the message names it).
        """
        from store.errors import UserError
        from workbench.audit import AuditSpec
        from workbench.engine import resolve_templates
        from workbench.perturb import resolve_operators

        dataset = self.query_one("#dataset", Select).value
        if dataset is Select.BLANK or not dataset:
            raise UserError("dataset: choose one (import one with `paw import` or the "
                            "Models & data screen)")
        models = tuple(self.query_one("#models", SelectionList).selected)
        templates = tuple(self.query_one("#templates", SelectionList).selected)
        for field in ("operators", "limit", "seed", "max-tokens"):
            problem = field_problem(field, self.query_one(f"#{field}", Input).value)
            if problem:
                raise UserError(problem)
        item_ids, limit = self.chosen_items(str(dataset), check_ids=True)
        seed = int(self.query_one("#seed", Input).value.strip())
        max_tokens = int(self.query_one("#max-tokens", Input).value.strip())
        return AuditSpec(dataset=str(dataset), models=models,
                         templates=resolve_templates(",".join(templates)) if templates else (),
                         operators=resolve_operators(self.query_one("#operators", Input).value),
                         seed=seed, limit=limit, item_ids=item_ids, max_tokens=max_tokens)

    def action_launch(self) -> None:
        """Validate and return the spec (errors stay on the form)."""
        from store.errors import UserError

        try:
            spec = self.build_spec()
        except UserError as exc:
            shown = self.query_one("#launch-error", Static)
            shown.update(f"error: {exc}")
            self.call_after_refresh(shown.scroll_visible, animate=False)
            return
        self.dismiss(spec)

    def action_cancel(self) -> None:
        """Close without launching."""
        self.dismiss(None)

    @on(Button.Pressed, "#launch")
    def _launch_pressed(self) -> None:
        self.action_launch()

    @on(Button.Pressed, "#cancel")
    def _cancel_pressed(self) -> None:
        self.action_cancel()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "next_field":
            return isinstance(self.focused, Input)  # elsewhere Enter is the widget's own
        return True

    def action_next_field(self) -> None:
        """Enter in a text field: the next field (launching is the button's, ctrl+enter's
        or ctrl+s's)."""
        self.focus_next()

    @on(Input.Changed)
    def _check_field(self, event: Input.Changed) -> None:
        field = event.input.id or ""
        if field in ("operators", "limit", "seed", "max-tokens"):
            problem = field_problem(field, event.value)
            self.query_one(f"#{field}-error", Static).update(problem)
        if field == "operators":
            self.query_one("#operators-note", Static).update(fcs_note(event.value))
        if field in ("limit", "item-ids"):
            self._note_items()

    @on(Select.Changed, "#dataset, #item-kind")
    def _items_changed(self) -> None:
        self._note_items()
