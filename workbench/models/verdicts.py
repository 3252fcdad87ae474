"""Stored batching verdicts: measured once per model file, llama.cpp build, CPU, threads and width.

A self-check's verdict holds for the bits this build of llama.cpp computes on this CPU for
this model file with these settings; nothing else enters the decode. So it is stored in
the model's metadata (`models.metadata_json`) under `batch_checks`, keyed by a fingerprint
of exactly those, and a later load with the same fingerprint reuses it and pays nothing.
`batch_check` keeps the latest verdict for `paw models` and the Models screen.

Fingerprint ingredients: the model's sha256; llama-cpp-python's version and the size and
modification time of every shared library it loads (a rebuild of the same version, e.g.
for CUDA, changes them); llama.cpp's system info line (the CPU features it was built for
and found); the CPU's model name and flags from /proc/cpuinfo; whether extra buffer types
(weight repacking) are on; threads per decoder, the width, GPU layers, prefix reuse and
the probe's version. The number of decoders is not an ingredient but a condition: the
check compares every decoder it ran, so a verdict that passed on D decoders at once is
reused for D or fewer, and a run with more decoders checks again (and stores the wider
verdict in its place). A verdict that found a difference stands for any number.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlite_utils

from store.db import dumps
from store.models import model_metadata
from store.records import ModelRecord
from workbench.models.selfcheck import PROBE_VERSION, BatchVerdict

KEEP_VERDICTS = 16
"""Fingerprints kept per model (the oldest are dropped)."""


def _llama_build() -> dict[str, Any]:
    import llama_cpp

    lib = Path(llama_cpp.__file__).parent / "lib"
    files = {}
    for path in sorted(lib.glob("*")) if lib.is_dir() else []:
        stat = path.stat()
        files[path.name] = [stat.st_size, stat.st_mtime_ns]
    return {"version": llama_cpp.__version__, "libraries": files,
            "system_info": llama_cpp.llama_print_system_info().decode("utf-8", "replace")}


def _cpu() -> dict[str, str]:
    found: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                key = key.strip()
                if key in ("model name", "flags", "Features", "CPU implementer", "CPU part") \
                        and key not in found:
                    found[key] = value.strip()
                if not line.strip() and found:
                    break  # the first processor is enough
    except OSError:
        import platform

        found["platform"] = f"{platform.machine()} {platform.processor()}"
    return found


def fingerprint(model: ModelRecord, *, threads: int, width: int, gpu_layers: int,
                prefix_reuse: bool, extra_buffers: bool) -> str:
    """The key a verdict is stored under (hex, 16 characters).

    Args:
        model: whose file the verdict is about (its sha256).
        threads: threads of each decoder's context.
        width: sequences per decoder.
        gpu_layers: layers offloaded to a GPU.
        prefix_reuse: whether the decoders reuse cached prefixes.
        extra_buffers: whether llama.cpp repacks weights into extra buffer types.
    """
    payload = {"model": model.sha256, "llama": _llama_build(), "cpu": _cpu(),
               "threads": threads, "width": width, "gpu_layers": gpu_layers,
               "prefix_reuse": prefix_reuse, "extra_buffers": extra_buffers,
               "probe": PROBE_VERSION}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def covers(verdict: BatchVerdict, decoders: int) -> bool:
    """Whether `verdict` decides a run on `decoders` decoders (see the module docstring)."""
    return not verdict.identical or verdict.decoders >= decoders


def stored_verdict(db: sqlite_utils.Database, model: ModelRecord, key: str,
                   decoders: int = 1) -> BatchVerdict | None:
    """The verdict stored under fingerprint `key` that covers `decoders`, or None."""
    entry = model_metadata(db, model.id).get("batch_checks", {}).get(key)
    if entry is None:
        return None
    verdict = BatchVerdict.from_dict(entry, entry.get("checked_at"))
    return verdict if covers(verdict, decoders) else None


def record_verdict(db: sqlite_utils.Database, model: ModelRecord, key: str,
                   verdict: BatchVerdict, *, gpu_layers: int) -> None:
    """Store a measured verdict under its fingerprint, and as the model's latest."""
    import llama_cpp

    metadata = model_metadata(db, model.id)
    entry = {**verdict.as_dict(), "llama_cpp": llama_cpp.__version__, "gpu_layers": gpu_layers,
             "fingerprint": key,
             "checked_at": datetime.now(UTC).isoformat(timespec="seconds")}
    checks = {k: v for k, v in metadata.get("batch_checks", {}).items() if k != key}
    checks[key] = entry
    metadata["batch_checks"] = dict(list(checks.items())[-KEEP_VERDICTS:])
    metadata["batch_check"] = entry
    with db.conn:
        db.execute("UPDATE models SET metadata_json = ? WHERE id = ?",
                   [dumps(metadata), model.id])
