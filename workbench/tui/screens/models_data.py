"""The Models & data screen: registered models (file, size, hash, quantisation, chat template,
batching verdict) and imported datasets with counts; add a model, import a dataset.

Adding and importing go through the CLI's own functions (`register_model`, `import_file`),
so validation and the one-line errors are the same; an error is shown in a modal and
nothing already stored is touched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Input, Label, Select, Static

from workbench.tui.components.form_screen import FOCUS_NOW
from workbench.tui.host import WorkbenchHost
from workbench.tui.widgets.list_table import ListTable
from workbench.tui.messages import StoreListed


def model_rows(db: Any) -> list[tuple[str, ...]]:
    """One display row per registered model (the embedded default included)."""
    from store.models import list_models
    from workbench.models.registry import batch_verdict, default_model

    default_model(db)
    rows: list[tuple[str, ...]] = []
    for model in list_models(db):
        size = f"{(model.size_bytes or 0) / 2**20:,.0f} MiB"
        verdict = batch_verdict(db, model)
        batching = "unchecked" if verdict is None else \
            f"{verdict['n_seq']}: {'identical' if verdict['identical'] else 'differs'}"
        rows.append((model.name, model.architecture or "?", model.quantization or "?", size,
                     model.sha256[:12], "yes" if model.chat_template else "no", batching,
                     Path(model.path).name))
    return rows


def dataset_rows(db: Any) -> list[tuple[str, ...]]:
    """One display row per dataset with its item counts."""
    from store.datasets import list_datasets

    return [(d.name, d.format, str(d.n_items), str(d.n_mcq), str(d.n_binary),
             Path(d.source_path).name if d.source_path else "") for d in list_datasets(db)]


class ModelsDataScreen(Screen[None]):
    """Two tables; `a` adds a model by path, `i` imports a dataset file."""

    last_import: tuple | None = None
    """The last import's (format, path, name, skip-bad, map): the form starts from it."""

    DEFAULT_CSS = """
    ModelsDataScreen #models-table { height: auto; max-height: 10; }
    ModelsDataScreen #datasets-table { height: 1fr; }
    ModelsDataScreen .title { background: $boost; padding: 0 1; }
    """

    progress_seen: list[str] = []
    """The progress lines of the latest model registration, in order."""

    BINDINGS = [
        Binding("a", "add_model", "add model"),
        Binding("i", "import_dataset", "import data"),
        Binding("r", "refresh", "refresh"),
        Binding("q", "app.quit", "quit"),
    ]

    @property
    def paw(self) -> WorkbenchHost:
        """The app, as the `WorkbenchHost` it provides."""
        return cast(WorkbenchHost, self.app)

    def compose(self) -> ComposeResult:
        yield Static("models and datasets in the store", id="status", markup=False)
        yield Static("Models", classes="title")
        models: DataTable = ListTable(id="models-table", cursor_type="row")
        models.add_columns("name", "arch", "quant", "size", "sha256", "chat tmpl", "batching",
                           "file")
        yield models
        yield Static("Datasets", classes="title")
        datasets: DataTable = ListTable(id="datasets-table", cursor_type="row")
        datasets.add_columns("name", "format", "items", "mcq", "yes/no", "source")
        yield datasets
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#models-table", DataTable).focus()
        self.action_refresh()

    @work(thread=True, exclusive=True, exit_on_error=False, group="store-list",
          name="listing models and datasets")
    def action_refresh(self) -> None:
        """Re-read models and datasets (own connection)."""
        from store.db import open_db

        db = open_db(self.paw.db_path)
        try:
            message = StoreListed(model_rows(db), dataset_rows(db))
        finally:
            db.conn.close()
        self.post_message(message)

    @on(StoreListed)
    def _draw(self, message: StoreListed) -> None:
        for table_id, rows in (("#models-table", message.models),
                               ("#datasets-table", message.datasets)):
            table = self.query_one(table_id, DataTable)
            table.clear()
            for row in rows:
                table.add_row(*(Text(cell) for cell in row))
        self.query_one("#status", Static).update(
            f"{len(message.models)} model(s) · {len(message.datasets)} dataset(s) · "
            f"{self.paw.db_name}")

    def action_add_model(self) -> None:
        """Ask for a GGUF path (and a name) and register it."""
        self.app.push_screen(AddModelModal(), self._add_model)

    def _add_model(self, answer: tuple[str, str] | None) -> None:
        if answer:
            self.progress_seen = []
            self._progress(f"registering {answer[0]}…")
            self._do(lambda db: _register(db, *answer, progress=self._from_worker),
                     "Could not register the model")

    def _progress(self, text: str) -> None:
        """Show a long step's progress in the status line (and keep it for tests)."""
        self.progress_seen.append(text)
        self.query_one("#status", Static).update(text)

    def _from_worker(self, text: str) -> None:
        self.app.call_from_thread(self._progress, text)

    def action_import_dataset(self) -> None:
        """Ask for a format, a file, a name, --skip-bad and --map, and import it."""
        self.app.push_screen(ImportModal(self.last_import), self._import)

    def _import(self, answer: tuple[str, str, str, bool, str] | None) -> None:
        if answer:
            self.last_import = answer  # the next import starts from these choices
            self._do(lambda db: _import_file(db, *answer), "Could not import the file")

    @work(thread=True, exclusive=False, exit_on_error=False, group="store-write",
          name="store write")
    def _do(self, action: Any, title: str) -> None:
        from store.db import open_db
        from store.errors import UserError

        db = open_db(self.paw.db_path)
        try:
            done = action(db)
        except UserError as exc:
            self.app.call_from_thread(self.paw.show_error, title, exc)
            return
        finally:
            db.conn.close()
        self.app.call_from_thread(self.notify, done, timeout=5)
        self.app.call_from_thread(self.action_refresh)


    def palette_commands(self) -> list[SystemCommand]:
        """Commands in the palette (ctrl+p)."""
        return [SystemCommand("Add model", "Register a GGUF file by path", self.action_add_model),
                SystemCommand("Import dataset", "Import a MedQA/MedMCQA/PubMedQA/MMLU/JSONL/CSV "
                              "file", self.action_import_dataset)]


def _register(db: Any, path: str, name: str, progress: Any = None) -> str:
    from workbench.models.registry import register_model

    model = register_model(db, path, name or None, progress=progress)
    return f"registered {model.name} ({model.quantization}, sha256 {model.sha256[:12]})"


def _import_file(db: Any, format_name: str, path: str, name: str, skip_bad: bool = False,
                 map_json: str = "") -> str:
    from workbench.datasets.importers import import_file
    from workbench.datasets.mapping import parse_mapping

    mapping = parse_mapping(map_json, "--map") if map_json.strip() else None
    report = import_file(db, format_name, path, name=name or None, skip_bad=skip_bad,
                         mapping=mapping)
    return " · ".join(report.lines()[:3])


class _FormModal(ModalScreen[Any]):
    DEFAULT_CSS = """
    _FormModal { align: center middle; }
    _FormModal > Vertical { width: 80%; max-width: 90; height: auto; border: thick $primary;
                            background: $surface; padding: 0 1; }
    """
    BINDINGS = [Binding("escape", "cancel", "cancel"), *FOCUS_NOW]

    def action_cancel(self) -> None:
        """Close without doing anything."""
        self.dismiss(None)


class AddModelModal(_FormModal):
    """Path and optional name of a GGUF file."""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("GGUF file path (enter to register, escape to cancel)")
            yield Input(id="path", placeholder="~/models/model.Q4_K_M.gguf")
            yield Label("Name (default: the file name)")
            yield Input(id="name")

    @on(Input.Submitted)
    def _submit(self) -> None:
        path = self.query_one("#path", Input).value.strip()
        if not path:
            self.query_one("#path", Input).focus()
            return
        self.dismiss((path, self.query_one("#name", Input).value.strip()))


class ImportModal(_FormModal):
    """Format, file path, dataset name, --skip-bad and --map of an import (as `paw import`).

    Args:
        last: the previous import's answer; the form starts from its format, skip-bad and
            mapping (not from medqa each time).
    """

    def __init__(self, last: tuple | None = None) -> None:
        super().__init__()
        self.last = last

    def compose(self) -> ComposeResult:
        from textual.widgets import Checkbox

        from workbench.datasets.opening import FORMATS

        fmt, _, _, skip, mapping = self.last or ("medqa", "", "", False, "")
        with Vertical():
            yield Label("Format (tab/shift+tab between fields)")
            yield Select([(name, name) for name in FORMATS], id="format", value=fmt,
                         allow_blank=False)
            yield Label("File path (enter to import, escape to cancel)")
            yield Input(id="path", placeholder="data/medqa_test.jsonl")
            yield Label("Dataset name (default: the file's stem)")
            yield Input(id="name")
            yield Checkbox("--skip-bad: import the valid rows, report the bad ones",
                           value=skip, id="skip-bad")
            yield Label("--map (jsonl/parquet/csv): field mapping as JSON, empty for PAW's "
                        "own fields")
            yield Input(mapping, id="map",
                        placeholder='{"id": "qid", "question": "stem", "answer": "correct"}')

    def on_mount(self) -> None:
        self.query_one("#path", Input).focus()

    @on(Input.Submitted)
    def _submit(self) -> None:
        path = self.query_one("#path", Input).value.strip()
        if not path:
            self.query_one("#path", Input).focus()
            return
        from textual.widgets import Checkbox

        self.dismiss((str(self.query_one("#format", Select).value), path,
                      self.query_one("#name", Input).value.strip(),
                      self.query_one("#skip-bad", Checkbox).value,
                      self.query_one("#map", Input).value.strip()))
