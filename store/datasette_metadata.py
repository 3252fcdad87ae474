"""Datasette metadata for a PAW database, generated from docs/schema.md (never hand-copied).

`datasette paw.db --metadata docs/datasette-metadata.json` shows each table's title and
description and each column's description (its type and meaning from the page's table) in
the column headers. The file is this module's output for the database name `paw`
(`./paw.db`); for another file name write it again:

    python -m store.datasette_metadata --database demo > demo-metadata.json

`tests/store/test_datasette_metadata.py` checks that the committed file is what the page
gives now, and that the page, the metadata and a migrated store name the same tables and
columns. The link from a job to its generation is the declared foreign key
`jobs.done_generation_key` → `generations.key` (m014), which Datasette follows on its own.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

SCHEMA_DOC = Path(__file__).resolve().parents[1] / "docs" / "schema.md"
"""The schema page of a source checkout."""

TITLE = "PAW (Perturbation Audit Workbench) database"

_SECTION = re.compile(r"^## `([^`]+)`\s*$", re.MULTILINE)
_ROW = re.compile(r"^\| `([^`]+)` \| (.*?) \|(.*)\|\s*$", re.MULTILINE)


def _plain(text: str) -> str:
    """Markdown inline text as plain text (backticks and emphasis dropped, spaces joined)."""
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)
    return " ".join(text.replace("`", "").replace("**", "").split())


def _first_sentence(text: str) -> str:
    match = re.match(r"(.+?[.:;])(\s|$)", text)
    sentence = match.group(1) if match else text
    return sentence.rstrip(".:;")


def tables_from_schema(text: str) -> dict[str, dict[str, Any]]:
    """Each `## \\`table\\`` section of the page: its description (the prose before the
    column table) and each column's description ('TYPE; meaning')."""
    parts = _SECTION.split(text)
    tables: dict[str, dict[str, Any]] = {}
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        body = body.split("\n## ", 1)[0]
        prose = body.split("\n| ", 1)[0]
        description = _plain(prose)
        columns = {}
        for column, kind, meaning in _ROW.findall(body):
            if column == "column":
                continue
            kind, meaning = _plain(kind), _plain(meaning)
            columns[column] = f"{kind}; {meaning}" if meaning else kind
        tables[name] = {"title": f"{name}: {_first_sentence(description)}" if description
                        else name,
                        "description": description, "columns": columns}
    return tables


def metadata_from_schema(text: str, database: str = "paw") -> dict[str, Any]:
    """Datasette's metadata (`--metadata`) for a database file named `<database>.db`."""
    return {
        "title": TITLE,
        "description": ("Every table and column as docs/schema.md describes them; generated "
                        "by store/datasette_metadata.py."),
        "databases": {database: {"tables": tables_from_schema(text)}},
    }


def main(argv: list[str] | None = None) -> int:
    """Print the metadata as JSON (sorted keys, two-space indent, a final newline)."""
    parser = argparse.ArgumentParser(prog="python -m store.datasette_metadata",
                                     description="Datasette metadata from docs/schema.md")
    parser.add_argument("--database", default="paw",
                        help="the database's name in Datasette: the file's stem (paw)")
    parser.add_argument("schema", nargs="?", default=str(SCHEMA_DOC),
                        help="the schema page (default: docs/schema.md of this checkout)")
    args = parser.parse_args(argv)
    path = Path(args.schema)
    if not path.is_file():
        print(f"datasette_metadata: {path}: no such file (expected docs/schema.md)",
              file=sys.stderr)
        return 1
    sys.stdout.write(dumps(metadata_from_schema(path.read_text("utf-8"), args.database)))
    return 0


def dumps(metadata: dict[str, Any]) -> str:
    """The committed file's exact text."""
    return json.dumps(metadata, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
