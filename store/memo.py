"""Small JSON memos of what PAW has already checked (a store's header, a model file's hash),
kept per user so the next command can skip the work: read whole, written whole.

A memo is written to a temporary file named for the writing process and renamed over the
old one, so a reader never sees half a file and two processes writing at once leave one
complete memo (the last rename wins). Both are best effort: a memo that cannot be read
counts as empty and one that cannot be written is skipped; either way the next process
only checks again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def read_json_memo(path: Path) -> dict[str, Any]:
    """The memo at `path`; {} when it is missing, unreadable or not a JSON object."""
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def write_json_memo(path: Path, memo: Mapping[str, Any]) -> bool:
    """Replace the memo at `path` with `memo` in one rename; False if it could not be
    written (nothing is raised: the memo only saves work)."""
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(json.dumps(memo, sort_keys=True), encoding="utf-8")
        partial.replace(path)
    except OSError:
        return False
    return True
