"""The embedder interface: a stable name, a version that decides the vectors, a batch `embed`.

Every embedder returns L2-normalised float32 rows (an empty text, or one with no known
token, gives the zero vector: cosine 0 with everything). `version` names everything beyond
the embedder's id that decides the numbers (model file hash, pooling, context, library
version), so cached vectors are reused only when they would come out the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    import numpy as np

DEFAULT_BATCH = 32
"""Texts per forward pass (MiniLM) or per stored transaction (all embedders)."""


def l2_normalise(rows: np.ndarray) -> np.ndarray:
    """Rows divided by their L2 norm (float64 for the norm), as float32; zero rows stay zero."""
    import numpy as np

    rows = np.asarray(rows, dtype=np.float64)
    if rows.ndim != 2:
        raise ValueError(f"expected a 2-D array of vectors, got shape {rows.shape}")
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    safe = np.where(norms > 0, norms, 1.0)
    return (rows / safe).astype(np.float32)


class Embedder:
    """Turns texts into vectors. Subclasses set the attributes and implement `_embed`.

    Attributes:
        name: the spec the user gave (`tfidf`, `minilm`, `llama:default`); shown in reports.
        id: what kind of embedder (`tfidf`, `minilm`, `llama.cpp`): the cache's `embedder`.
        version: everything else that decides the vectors (the cache's `version`).
        cacheable: False when a vector depends on other texts (TF-IDF), so it is not stored.
        description: the stated choices (pooling, normalisation, truncation) for reports.
    """

    name: str = ""
    id: str = ""
    version: str = ""
    cacheable: bool = True
    description: str = ""
    batch_size: int = DEFAULT_BATCH

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised float32 row per text, computed in batches (no cache).

        Args:
            texts: the texts; empty ones get the zero vector without reaching the model.

        Returns:
            An array of shape (len(texts), dim).
        """
        import numpy as np

        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        filled = [i for i, text in enumerate(texts) if text.strip()]
        if not filled:
            return np.zeros((len(texts), self.dim_hint()), dtype=np.float32)
        parts = [self._embed([texts[i] for i in filled[start:start + self.batch_size]])
                 for start in range(0, len(filled), self.batch_size)]
        vectors = l2_normalise(np.vstack(parts))
        out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
        out[filled] = vectors
        return out

    def dim_hint(self) -> int:
        """The vector length before anything was embedded (1 when it depends on the texts)."""
        return 1

    def _embed(self, texts: list[str]) -> np.ndarray:
        """Raw (not yet normalised) vectors of non-empty texts."""
        raise NotImplementedError

    def close(self) -> None:
        """Free a loaded model (no-op by default)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
