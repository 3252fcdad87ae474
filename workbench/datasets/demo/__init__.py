"""The demo set shipped in the package: clinical vignettes (MCQ) and triage questions (yes/no).

Both files are in PAW's own JSONL format (see docs/importing.md) and are read through the
same validating importer as any user file, so a mistake in them fails loudly.
"""

from __future__ import annotations

import hashlib
from importlib import resources

import sqlite_utils

from store.errors import UserError
from store.records import Item
from workbench.datasets.formats import Source
from workbench.datasets.importers import (
    BadRow,
    ImportReport,
    ParsedFile,
    parse_bytes,
    store_parsed,
)

DEMO_DATASET = "demo"
"""Name of the dataset `paw demo` imports the demo set into."""

DEMO_FILES = ("vignettes.jsonl", "triage.jsonl")
"""The demo set's files inside this package, in import order."""


def _read(filename: str) -> bytes:
    resource = resources.files(__name__).joinpath(filename)
    try:
        return resource.read_bytes()
    except FileNotFoundError:
        raise UserError(f"demo set file {filename} is missing from the installed package "
                        f"({__name__}); reinstall PAW") from None


def _parse_all() -> tuple[ParsedFile, str]:
    """Both files parsed strictly as one file, plus the sha256 of their bytes."""
    digest = hashlib.sha256()
    items: list[Item] = []
    bad: list[BadRow] = []
    first_seen: dict[str, str] = {}
    for filename in DEMO_FILES:
        data = _read(filename)
        digest.update(data)
        where = f"workbench/datasets/demo/{filename}"
        parsed = parse_bytes("jsonl", data, Source(where, filename.rsplit(".", 1)[0]))
        bad.extend(parsed.bad)
        for item in parsed.items:
            # Ids must be unique across both files: they share one dataset.
            if item.source_id in first_seen:
                raise UserError(f"{where}:{item.source_line}: id: expected an id not used "
                                f"in {first_seen[item.source_id]}, got {item.source_id!r}")
            first_seen[item.source_id] = filename
            items.append(item)
    if bad:
        raise UserError(f"demo set is invalid: {bad[0]}")
    return ParsedFile("workbench.datasets.demo", tuple(items), ()), digest.hexdigest()


def load_demo_items() -> list[Item]:
    """Every demo item (vignettes first, then triage questions), validated, not stored.

    Raises:
        UserError: a demo file is missing or has a bad row (a packaging bug).
    """
    return list(_parse_all()[0].items)


def import_demo(db: sqlite_utils.Database) -> int:
    """Import the demo set into dataset `demo` (idempotent); returns the dataset id."""
    return import_demo_report(db).dataset_id


def import_demo_report(db: sqlite_utils.Database) -> ImportReport:
    """Import the demo set into dataset `demo` and say what was new."""
    parsed, sha256 = _parse_all()
    return store_parsed(db, parsed, name=DEMO_DATASET, format_name="jsonl",
                        source_sha256=sha256)
