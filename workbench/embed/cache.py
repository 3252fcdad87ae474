"""Embeddings cached by text: `embed_texts` embeds only texts the store has no vector for.

Vectors live in `text_embeddings`, keyed by (embedder id, embedder version, sha256 of the
text), as little-endian float32 rows of norm 1. Duplicate texts in a call are embedded once;
new vectors are stored one batch per transaction as they are made, so an interrupted call
keeps what it finished. Embedders whose vectors depend on the other texts (TF-IDF) are
computed fresh on every call and never stored.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import sqlite_utils

from store.db import transaction, utcnow
from workbench.embed.base import Embedder

if TYPE_CHECKING:
    import numpy as np


def text_sha256(text: str) -> str:
    """The cache key of a text: sha256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def stored_vectors(db: sqlite_utils.Database, embedder: Embedder,
                   hashes: Sequence[str]) -> dict[str, np.ndarray]:
    """The stored vectors of these text hashes under `embedder` (missing ones left out)."""
    import numpy as np

    found: dict[str, np.ndarray] = {}
    unique = list(dict.fromkeys(hashes))
    for start in range(0, len(unique), 500):  # SQLite's bound-parameter limit
        chunk = unique[start:start + 500]
        marks = ",".join("?" * len(chunk))
        for digest, dim, blob in db.execute(
                f"SELECT text_sha256, dim, vector FROM text_embeddings WHERE embedder = ? "
                f"AND version = ? AND text_sha256 IN ({marks})",
                [embedder.id, embedder.version, *chunk]):
            found[digest] = np.frombuffer(blob, dtype="<f4", count=dim)
    return found


def _store(db: sqlite_utils.Database, embedder: Embedder, hashes: Sequence[str],
           vectors: np.ndarray) -> None:
    now = utcnow()
    with transaction(db) as conn:
        for digest, vector in zip(hashes, vectors, strict=True):
            conn.execute(
                "INSERT OR IGNORE INTO text_embeddings (embedder, version, text_sha256, dim, "
                "vector, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                [embedder.id, embedder.version, digest, int(vector.size),
                 vector.astype("<f4").tobytes(), now])


def embed_texts(db: sqlite_utils.Database, embedder: Embedder, texts: Sequence[str], *,
                on_progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """L2-normalised float32 vectors of `texts`, one row each, in order; cached by text.

    Args:
        db: the store (`text_embeddings`).
        embedder: from `get_embedder`.
        texts: the texts (duplicates are embedded once; empty ones get the zero vector).
        on_progress: called with (embedded so far, to embed) after each batch.

    Returns:
        An array of shape (len(texts), dim).
    """
    import numpy as np

    texts = list(texts)
    if not embedder.cacheable:
        vectors = embedder.embed(texts)
        if on_progress is not None:
            on_progress(len(texts), len(texts))
        return vectors
    hashes = [text_sha256(text) for text in texts]
    have = stored_vectors(db, embedder, hashes)
    todo: dict[str, str] = {}
    for digest, text in zip(hashes, texts, strict=True):
        if digest not in have:
            todo.setdefault(digest, text)
    pending = list(todo.items())
    batch = max(1, embedder.batch_size)
    for start in range(0, len(pending), batch):
        chunk = pending[start:start + batch]
        vectors = embedder.embed([text for _, text in chunk])
        _store(db, embedder, [digest for digest, _ in chunk], vectors)
        have.update({digest: vector for (digest, _), vector in zip(chunk, vectors, strict=True)})
        if on_progress is not None:
            on_progress(start + len(chunk), len(pending))
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    dims = {have[d].size for d in hashes}
    if len(dims) != 1:
        # Only possible if the zero vector of an empty text was stored before the model
        # told its length; re-shape such rows to the real length.
        dim = max(dims)
        return np.vstack([have[d] if have[d].size == dim else np.zeros(dim, np.float32)
                          for d in hashes])
    return np.vstack([have[d] for d in hashes]).astype(np.float32, copy=False)
