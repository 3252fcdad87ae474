"""docs/schema.md documents every table and column of the migrated schema (kept in step).

(Lives with the dataset tests because the Foundation issue's importer engineer owns the
page; it checks the whole store, so a migration without documentation fails here.)
"""

from __future__ import annotations

import re
from pathlib import Path

SCHEMA_DOC = Path(__file__).resolve().parents[2] / "docs" / "schema.md"


def _sections() -> dict[str, str]:
    text = SCHEMA_DOC.read_text(encoding="utf-8")
    parts = re.split(r"^## `([^`]+)`\s*$", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2]))


def columns(db, table: str) -> list[str]:
    """Every column of a table, generated ones included (`PRAGMA table_info`, and so
    sqlite-utils' `.columns`, leaves out m014's virtual `jobs.done_generation_key`)."""
    return [r[1] for r in db.execute(f"PRAGMA table_xinfo([{table}])") if r[6] in (0, 2, 3)]


def test_every_table_and_column_is_documented(db):
    sections = _sections()
    missing = []
    for table in db.table_names():
        if table not in sections:
            missing.append(table)
            continue
        documented = set(re.findall(r"^\| `([^`]+)` \|", sections[table], flags=re.MULTILINE))
        missing += [f"{table}.{c}" for c in columns(db, table) if c not in documented]
    assert missing == [], f"not documented in docs/schema.md: {missing}"


def test_no_documented_table_or_column_is_stale(db):
    tables = set(db.table_names())
    stale = []
    for table, body in _sections().items():
        if table not in tables:
            stale.append(table)
            continue
        present = set(columns(db, table))
        stale += [f"{table}.{c}" for c in re.findall(r"^\| `([^`]+)` \|", body, flags=re.M)
                  if c not in present]
    assert stale == []
