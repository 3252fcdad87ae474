"""Ready-made perturbed texts as a study's targets (`paw study --targets-file FILE`).

Seed 000's main experiment (§4.1) uses MedPerturb's own targeted texts — gender swapped,
gender removed, uncertain, colorful — rather than edits PAW computes. A targets file brings
such texts in: one row per (item, perturbation) with the perturbed question text.

    JSONL: {"item": "triage-001", "perturbation": "colorful", "text": "…", "direction": 1}
    CSV:   item,perturbation,text[,direction]   (header row required)

Column aliases: `item_id`/`id` for `item`, `name` for `perturbation`, `question` for `text`.
`direction` (optional, +1/−1) is §4.3's signed indicator of the regressions.

Each perturbation becomes the target `file:<name>`, stored as an ordinary targeted variant
(family `imported`, the text's sha256 in its key, so a changed file makes new variants), and
is then planned, asked k times and analysed exactly like a generated target; its
token-adjusted paraphrase is sized against the imported text with the audited model's
tokenizer. An item of the study with no row for a perturbation is that target's
'not fired' unit. A bad row is a one-line error naming the file, line and field; nothing
is stored before the whole file has been read.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import sqlite_utils

from store.errors import UserError
from store.records import Item
from workbench.engine.variants import (
    Variant,
    find_variant,
    never_applied,
    store_variant,
    variant_key,
)

PREFIX = "file:"
"""Target ids of imported perturbations: `file:<perturbation name>`."""

FAMILY = "imported"
"""The family stored on imported targets' variants."""

_ALIASES = {"item": ("item", "item_id", "id"), "perturbation": ("perturbation", "name"),
            "text": ("text", "question")}


@dataclass(frozen=True)
class ImportedText:
    """One row of a targets file."""

    item: str
    perturbation: str
    text: str
    direction: int | None
    line: int


@dataclass(frozen=True)
class TargetsFile:
    """A read targets file: its rows, names in file order, and the bytes' sha256."""

    path: str
    sha256: str
    rows: tuple[ImportedText, ...]
    index: dict[tuple[str, str], ImportedText] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", {(r.item, r.perturbation): r for r in self.rows})

    @property
    def names(self) -> tuple[str, ...]:
        """The perturbation names, in order of first appearance."""
        return tuple(dict.fromkeys(r.perturbation for r in self.rows))

    @property
    def target_ids(self) -> tuple[str, ...]:
        """The study target ids (`file:<name>`)."""
        return tuple(PREFIX + name for name in self.names)

    def text_of(self, item: str, perturbation: str) -> ImportedText | None:
        """The row for (item source id, perturbation name), if any."""
        return self.index.get((item, perturbation))


def _field(value: dict, name: str, where: str) -> str:
    for key in _ALIASES[name]:
        if key in value and value[key] is not None:
            text = str(value[key]).strip() if name != "text" else str(value[key])
            if not text.strip():
                raise UserError(f"{where}: {name}: expected text, got an empty value")
            return text
    raise UserError(f"{where}: {name}: expected a column {' / '.join(_ALIASES[name])}, "
                    f"got none (columns: {', '.join(map(str, value)) or 'none'})")


def _direction(value: dict, where: str) -> int | None:
    raw = value.get("direction")
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    try:
        number = float(raw)
    except (TypeError, ValueError):
        number = 0.0
    if number not in (1.0, -1.0):
        raise UserError(f"{where}: direction: expected 1 or -1 (or nothing), got {raw!r}")
    return int(number)


def read_targets_file(path: str | Path) -> TargetsFile:
    """Read and check a targets file (JSONL, or CSV with a header; by the suffix).

    Raises:
        UserError: the file is missing or unreadable, a row is malformed or lacks a field,
            a (item, perturbation) pair repeats, a name is not usable, or no row is given.
    """
    from workbench.datasets.readers import read_csv, read_jsonl

    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"--targets-file: cannot read {path}: {exc.strerror or exc}") from None
    suffix = path.suffix.lower()
    if suffix not in (".jsonl", ".csv"):
        raise UserError(f"--targets-file: expected a .jsonl or .csv file, got {path.name!r}")
    import io

    handle = io.BytesIO(data)
    raw = read_jsonl(handle) if suffix == ".jsonl" else read_csv(handle, header=True)
    rows: list[ImportedText] = []
    seen: dict[tuple[str, str], int] = {}
    for record in raw:
        where = f"{path}:{record.line}"
        if record.error is not None:
            raise UserError(f"{where}: {record.error}")
        value = record.value
        item = _field(value, "item", where)
        name = _field(value, "perturbation", where)
        if any(c.isspace() for c in name) or "," in name:
            raise UserError(f"{where}: perturbation: expected a name without spaces or "
                            f"commas, got {name!r}")
        text = _field(value, "text", where)
        key = (item, name)
        if key in seen:
            raise UserError(f"{where}: expected one text per item and perturbation, got a "
                            f"second for ({item!r}, {name!r}) (first on line {seen[key]})")
        seen[key] = record.line
        rows.append(ImportedText(item, name, text, _direction(value, where), record.line))
    if not rows:
        raise UserError(f"--targets-file: expected at least one row in {path}, got none")
    return TargetsFile(str(path), hashlib.sha256(data).hexdigest(), tuple(rows))


def check_items(targets: TargetsFile, known: set[str], dataset: str) -> None:
    """Every row must name an item of the dataset.

    Raises:
        UserError: naming the first row whose item the dataset does not have.
    """
    for row in targets.rows:
        if row.item not in known:
            raise UserError(f"{targets.path}:{row.line}: item: expected an item id of "
                            f"dataset {dataset!r}, got {row.item!r}")


def imported_variant(db: sqlite_utils.Database, target_id: str, item: Item,
                     targets: TargetsFile, seed: int) -> Variant:
    """The stored targeted variant of an imported perturbation on one item (not fired when
    the file has no text for the item)."""
    from workbench.perturb.base import Operator, PerturbResult

    name = target_id[len(PREFIX):]
    row = targets.text_of(item.source_id, name)
    digest = None if row is None else hashlib.sha256(row.text.encode()).hexdigest()
    extra = {"imported": digest, "direction": None if row is None else row.direction}
    existing = find_variant(db, variant_key(item.id or 0, target_id, seed, None, extra))
    if existing is not None:
        return existing
    op = Operator(target_id, FAMILY, name, f"imported: {name}", None, None, "question",
                  FAMILY, f"ready-made text from {Path(targets.path).name}", "",
                  never_applied, source=targets.path)
    if row is None:
        result = PerturbResult(target_id, False, None, None, None,
                               f"no text for this item in {Path(targets.path).name}")
    else:
        from workbench.perturb.tokenize import token_change_fraction

        details: dict = {"source_file": Path(targets.path).name, "source_line": row.line,
                         "text_sha256": digest}
        if row.direction is not None:
            details["direction"] = row.direction
        result = PerturbResult(target_id, True, row.text, None, None, None,
                               token_change_fraction=token_change_fraction(item.question,
                                                                           row.text),
                               details=details)
    return store_variant(db, op, result, item_id=item.id or 0, seed=seed, key_extra=extra)
