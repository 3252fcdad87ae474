"""The PAW store: one SQLite file (WAL) opened through sqlite-utils, with named migrations."""

from store.db import default_db_path, dumps, loads, open_db, transaction, utcnow
from store.errors import NotFound, UserError
from store.records import Item, ModelRecord

__all__ = [
    "Item",
    "ModelRecord",
    "NotFound",
    "UserError",
    "default_db_path",
    "dumps",
    "loads",
    "open_db",
    "transaction",
    "utcnow",
]
