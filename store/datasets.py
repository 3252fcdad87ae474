"""Datasets and items in the store: create, add idempotently, list with counts, load."""

from __future__ import annotations

from dataclasses import dataclass

import sqlite_utils

from store.db import dumps, dumps_ordered, inserted_id, loads, transaction, utcnow
from store.errors import NotFound, UserError
from store.records import Item


@dataclass(frozen=True)
class DatasetSummary:
    """A dataset with its item counts, as `paw datasets` lists it."""

    id: int
    name: str
    format: str
    source_path: str | None
    n_items: int
    n_mcq: int
    n_binary: int
    created_at: str


def ensure_dataset(
    db: sqlite_utils.Database, name: str, format: str, source_path: str | None = None,
    source_sha256: str | None = None,
) -> int:
    """Id of the dataset called `name`, creating it if new.

    Raises:
        UserError: a dataset of that name exists with a different format.
    """
    row = db.execute("SELECT id, format FROM datasets WHERE name = ?", [name]).fetchone()
    if row is not None:
        if row[1] != format:
            raise UserError(
                f"dataset {name!r} already exists with format {row[1]!r}, not {format!r}; "
                "choose another --name"
            )
        return int(row[0])
    cursor = db.execute(
        "INSERT INTO datasets (name, format, source_path, source_sha256, created_at) "
        "VALUES (?, ?, ?, ?, ?)",
        [name, format, source_path, source_sha256, utcnow()],
    )
    return inserted_id(cursor)


def add_items(db: sqlite_utils.Database, dataset_id: int, items: list[Item]) -> int:
    """Insert items not already present (by `source_id`) in one transaction.

    Returns:
        How many items were new; re-adding the same items adds nothing.
    """
    added = 0
    with transaction(db) as conn:
        for item in items:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO items (dataset_id, source_id, kind, question, context, "
                "options_json, gold, subject, meta_json, source_line) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [dataset_id, item.source_id, item.kind, item.question, item.context,
                 dumps_ordered(item.options), item.gold, item.subject, dumps(item.meta or {}),
                 item.source_line],
            )
            added += cursor.rowcount
    return added


def dataset_id(db: sqlite_utils.Database, name: str) -> int:
    """Id of the dataset called `name`.

    Raises:
        NotFound: no such dataset (the message lists the ones there are).
    """
    row = db.execute("SELECT id FROM datasets WHERE name = ?", [name]).fetchone()
    if row is None:
        names = [r[0] for r in db.execute("SELECT name FROM datasets ORDER BY name")]
        known = ", ".join(names) if names else "none imported yet (try `paw import`)"
        raise NotFound(f"no dataset named {name!r}; known datasets: {known}")
    return int(row[0])


def list_datasets(db: sqlite_utils.Database) -> list[DatasetSummary]:
    """Every dataset with its item counts, by name."""
    rows = db.execute(
        "SELECT d.id, d.name, d.format, d.source_path, d.created_at, "
        "COUNT(i.id), SUM(i.kind = 'mcq'), SUM(i.kind = 'binary') "
        "FROM datasets d LEFT JOIN items i ON i.dataset_id = d.id "
        "GROUP BY d.id ORDER BY d.name"
    ).fetchall()
    return [
        DatasetSummary(id=r[0], name=r[1], format=r[2], source_path=r[3], created_at=r[4],
                       n_items=r[5] or 0, n_mcq=r[6] or 0, n_binary=r[7] or 0)
        for r in rows
    ]


def _item_from_row(row: dict) -> Item:
    return Item(
        id=row["id"], dataset_id=row["dataset_id"], source_id=row["source_id"],
        kind=row["kind"], question=row["question"], context=row["context"],
        options=loads(row["options_json"]), gold=row["gold"], subject=row["subject"],
        meta=loads(row["meta_json"]) or {}, source_line=row["source_line"],
    )


def get_items(db: sqlite_utils.Database, name: str, limit: int | None = None) -> list[Item]:
    """Items of a dataset in import order (first `limit` if given)."""
    ds = dataset_id(db, name)
    sql = "SELECT * FROM items WHERE dataset_id = ? ORDER BY id"
    params: list = [ds]
    if limit is not None:
        sql += " LIMIT ?"
        params.append(int(limit))
    return [_item_from_row(row) for row in db.query(sql, params)]


def get_item(db: sqlite_utils.Database, item_id: int) -> Item:
    """One item by its store id."""
    rows = list(db.query("SELECT * FROM items WHERE id = ?", [item_id]))
    if not rows:
        raise NotFound(f"no item with id {item_id}")
    return _item_from_row(rows[0])


def list_dataset_names(db: sqlite_utils.Database) -> list[str]:
    """The names of every dataset, sorted (cheap: no item counts)."""
    return [r[0] for r in db.execute("SELECT name FROM datasets ORDER BY name")]
