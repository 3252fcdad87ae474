"""The launch form: dataset, models, templates, operators (or the full battery), limit, seed.

Validation is the CLI's own (`AuditSpec`, `resolve_operators`, `resolve_templates`): a
mistake is shown in one line under the form, which stays open. Enter (or ctrl+s) launches;
escape cancels.
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, SelectionList, Static

DEFAULT_OPERATORS = "all"
"""The full seed-002 battery."""


class LaunchModal(ModalScreen[Any]):
    """Returns an `AuditSpec` to run, or None when cancelled.

    Args:
        db_path: the store (datasets, models are listed from it).
    """

    BINDINGS = [Binding("escape", "cancel", "cancel"),
                Binding("ctrl+s", "launch", "launch")]

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
            yield Static("tab next field · space toggles a model/template · enter or "
                         "ctrl+s launch · escape cancel", classes="hint")
            with Horizontal(classes="row"):
                yield Label("Dataset")
                yield Select([(f"{d.name} ({d.n_items} items)", d.name) for d in datasets],
                             id="dataset", allow_blank=not datasets, compact=True,
                             value=datasets[0].name if datasets else Select.BLANK)
            with Horizontal(classes="row"):
                yield Label("Models")
                yield SelectionList[str](
                    *[(m.name, m.name, m.name == "default") for m in models], id="models")
            with Horizontal(classes="row"):
                yield Label("Templates")
                yield SelectionList[str](
                    *[(t.id, t.id, t.id == "neutral_cot@1") for t in cot], id="templates")
            with Horizontal(classes="row"):
                yield Label("Operators")
                yield Input(DEFAULT_OPERATORS, id="operators",
                            placeholder="all | F | M | shuffle | F1,M2 | ids")
            with Horizontal(classes="row"):
                yield Label("Limit")
                yield Input("", id="limit", type="integer", placeholder="all items")
            with Horizontal(classes="row"):
                yield Label("Seed")
                yield Input("0", id="seed", type="integer")
            with Horizontal(classes="row"):
                yield Label("Max tokens")
                yield Input("384", id="max-tokens", type="integer")
            yield Static("", id="launch-error")
            with Horizontal(classes="row"):
                yield Button("Launch", id="launch", variant="primary", compact=True)
                yield Static(" ", classes="gap")
                yield Button("Cancel", id="cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one("#dataset", Select).focus()

    def build_spec(self) -> Any:
        """The `AuditSpec` the form describes.

        Raises:
            UserError: a field is invalid (the message names it).
        """
        from store.errors import UserError
        from workbench.audit import AuditSpec, resolve_operators, resolve_templates

        dataset = self.query_one("#dataset", Select).value
        if dataset is Select.BLANK or not dataset:
            raise UserError("dataset: choose one (import one with `paw import` or the "
                            "Models & data screen)")
        models = tuple(self.query_one("#models", SelectionList).selected)
        templates = tuple(self.query_one("#templates", SelectionList).selected)
        limit_text = self.query_one("#limit", Input).value.strip()
        seed_text = self.query_one("#seed", Input).value.strip() or "0"
        tokens_text = self.query_one("#max-tokens", Input).value.strip() or "384"
        try:
            limit = int(limit_text) if limit_text else None
            seed = int(seed_text)
            max_tokens = int(tokens_text)
        except ValueError:
            raise UserError("limit, seed and max tokens: expected whole numbers") from None
        return AuditSpec(dataset=str(dataset), models=models,
                         templates=resolve_templates(",".join(templates)) if templates else (),
                         operators=resolve_operators(self.query_one("#operators", Input).value),
                         seed=seed, limit=limit, max_tokens=max_tokens)

    def action_launch(self) -> None:
        """Validate and return the spec (errors stay on the form)."""
        from store.errors import UserError

        try:
            spec = self.build_spec()
        except UserError as exc:
            self.query_one("#launch-error", Static).update(f"error: {exc}")
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

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self.action_launch()
