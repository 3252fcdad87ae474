"""Registered models (GGUF files) in the store: add idempotently, look up by name, list."""

from __future__ import annotations

from typing import Any

import sqlite_utils

from store.db import dumps, loads, utcnow
from store.errors import NotFound, UserError
from store.records import ModelRecord

_COLUMNS = (
    "id, name, backend, path, sha256, size_bytes, architecture, quantization, "
    "context_length, chat_template, prefix_cache_safe"
)


def _record(row: tuple) -> ModelRecord:
    return ModelRecord(
        id=row[0], name=row[1], backend=row[2], path=row[3], sha256=row[4], size_bytes=row[5],
        architecture=row[6], quantization=row[7], context_length=row[8], chat_template=row[9],
        prefix_cache_safe=bool(row[10]),
    )


def add_model(
    db: sqlite_utils.Database,
    *,
    name: str,
    path: str,
    sha256: str,
    size_bytes: int | None = None,
    architecture: str | None = None,
    quantization: str | None = None,
    context_length: int | None = None,
    chat_template: str | None = None,
    prefix_cache_safe: bool = True,
    metadata: dict[str, Any] | None = None,
    backend: str = "llama_cpp",
) -> ModelRecord:
    """Register a model file under `name`, or return the existing registration.

    Re-adding the same file (same sha256) under the same name is a no-op apart from
    updating the path, so a moved file can be re-registered.

    Args:
        db: the store.
        name: the name commands use (`--model NAME`).
        path: where the file is.
        sha256: hex digest of the whole file; generation keys are built from it.
        size_bytes: file size.
        architecture: `general.architecture` from the GGUF metadata.
        quantization: the file type name (e.g. `Q4_1`).
        context_length: the context the model was trained for.
        chat_template: the Jinja chat template from the GGUF, if any.
        prefix_cache_safe: False for models whose KV cache must not be reused across prompts.
        metadata: further facts (special tokens, …) kept as JSON.
        backend: how the model is run.

    Returns:
        The stored record.

    Raises:
        UserError: `name` is already registered for a different file.
    """
    row = db.execute(f"SELECT {_COLUMNS} FROM models WHERE name = ?", [name]).fetchone()
    if row is not None:
        existing = _record(row)
        if existing.sha256 != sha256:
            raise UserError(
                f"model name {name!r} is already registered for {existing.path} "
                f"(sha256 {existing.sha256[:12]}…); choose another --name"
            )
        if existing.path != path:
            db.execute("UPDATE models SET path = ? WHERE id = ?", [path, existing.id])
        return get_model(db, name)
    db.execute(
        "INSERT INTO models (name, backend, path, sha256, size_bytes, architecture, "
        "quantization, context_length, chat_template, prefix_cache_safe, metadata_json, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [name, backend, path, sha256, size_bytes, architecture, quantization, context_length,
         chat_template, int(prefix_cache_safe), dumps(metadata or {}), utcnow()],
    )
    return get_model(db, name)


def get_model(db: sqlite_utils.Database, name: str) -> ModelRecord:
    """The model registered as `name`.

    Raises:
        NotFound: no such model (the message lists the registered names).
    """
    row = db.execute(f"SELECT {_COLUMNS} FROM models WHERE name = ?", [name]).fetchone()
    if row is None:
        names = [r[0] for r in db.execute("SELECT name FROM models ORDER BY name")]
        known = ", ".join(names) if names else "none registered yet (try `paw models add PATH`)"
        raise NotFound(f"no model named {name!r}; known models: {known}")
    return _record(row)


def get_model_by_id(db: sqlite_utils.Database, model_id: int) -> ModelRecord:
    """The model with store id `model_id`."""
    row = db.execute(f"SELECT {_COLUMNS} FROM models WHERE id = ?", [model_id]).fetchone()
    if row is None:
        raise NotFound(f"no model with id {model_id}")
    return _record(row)


def find_model(db: sqlite_utils.Database, name: str) -> ModelRecord | None:
    """The model registered as `name`, or None."""
    row = db.execute(f"SELECT {_COLUMNS} FROM models WHERE name = ?", [name]).fetchone()
    return None if row is None else _record(row)


def model_metadata(db: sqlite_utils.Database, model_id: int) -> dict[str, Any]:
    """The extra metadata stored with a model (special tokens, file type, …)."""
    row = db.execute("SELECT metadata_json FROM models WHERE id = ?", [model_id]).fetchone()
    if row is None:
        raise NotFound(f"no model with id {model_id}")
    return loads(row[0]) or {}


def list_models(db: sqlite_utils.Database) -> list[ModelRecord]:
    """Every registered model, by name."""
    return [_record(r) for r in db.execute(f"SELECT {_COLUMNS} FROM models ORDER BY name")]
