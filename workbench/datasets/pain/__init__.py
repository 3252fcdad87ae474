"""PAW's made-up Q-Pain-style pain vignettes with demographic placeholders (README.md)."""

from __future__ import annotations

import hashlib
from importlib import resources

import sqlite_utils

from workbench.datasets.formats import Source
from workbench.datasets.importers import ImportReport, parse_bytes, store_parsed

PAIN_DATASET = "pain-demo"
"""Name of the dataset the templates are imported into."""

PAIN_FILE = "templates.jsonl"
"""The templates file inside this package."""


def import_pain_templates(db: sqlite_utils.Database) -> ImportReport:
    """Import the templates into dataset `pain-demo` (idempotent).

    Raises:
        UserError: the packaged file has a bad row (a packaging bug).
    """
    from store.errors import UserError

    data = resources.files(__name__).joinpath(PAIN_FILE).read_bytes()
    parsed = parse_bytes("jsonl", data, Source(f"workbench/datasets/pain/{PAIN_FILE}",
                                               "templates"))
    if parsed.bad:
        raise UserError(f"pain templates are invalid: {parsed.bad[0]}")
    return store_parsed(db, parsed, name=PAIN_DATASET, format_name="jsonl",
                        source_sha256=hashlib.sha256(data).hexdigest())
