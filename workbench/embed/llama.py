"""llama.cpp embeddings from any registered GGUF: `llama:NAME[:POOLING]`.

The model is loaded a second time with `embedding=True` (a generation context cannot
return pooled embeddings). Pooling is stated, never the model's silent default: mean over
the text's tokens unless `:last` or `:cls` is named (a decoder-only chat model such as
SmolLM2 declares none). Each text is decoded alone (one sequence per batch), so its vector
does not depend on which other texts share the call; texts longer than the context are cut
to its first `n_ctx` tokens. Vectors are L2-normalised by `Embedder.embed`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from store.errors import UserError
from workbench.embed.base import Embedder

if TYPE_CHECKING:
    import numpy as np
    import sqlite_utils

POOLINGS = ("mean", "last", "cls")
"""Pooling types a `llama:` spec may name (mean is the default)."""

MAX_CTX = 2048
"""Tokens per text (and context size) at most; the model's trained context if smaller."""

IMPLEMENTATION = 2
"""Bumped when the way vectors are computed changes (part of the cached vectors' version):
2 = one `Llama.embed` call per text (1 embedded a batch of texts in one call, which made a
vector depend on the texts before it)."""


class LlamaEmbedder(Embedder):
    """Pooled hidden states of a registered GGUF through llama-cpp-python."""

    id = "llama.cpp"
    batch_size = 8

    def __init__(self, db: sqlite_utils.Database, model_name: str, pooling: str = "mean", *,
                 name: str | None = None, threads: int | None = None) -> None:
        from workbench.models import resolve_model
        from workbench.models.registry import check_model_file

        if pooling not in POOLINGS:
            raise UserError(f"embedder llama:{model_name}:{pooling}: expected pooling "
                            f"{', '.join(POOLINGS)}, got {pooling!r}")
        self.model = resolve_model(db, model_name)
        check_model_file(self.model)
        self.pooling = pooling
        self.threads = threads
        self.n_ctx = min(self.model.context_length or MAX_CTX, MAX_CTX)
        self.name = name or f"llama:{model_name}"
        import llama_cpp

        self.version = (f"sha256={self.model.sha256};pooling={pooling};n_ctx={self.n_ctx};"
                        f"llama_cpp={llama_cpp.__version__};impl={IMPLEMENTATION}")
        self.description = (f"llama.cpp embeddings of {self.model.name} "
                            f"({self.model.architecture or 'GGUF'}, "
                            f"{self.model.quantization or ''}),"
                            f" {pooling} pooling, L2-normalised, texts cut to {self.n_ctx} "
                            f"tokens")
        self._llm = None

    def _load(self):
        import os

        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        import llama_cpp

        from workbench.models.backend import default_threads, model_params, use_extra_buffers

        pooling = {"mean": llama_cpp.LLAMA_POOLING_TYPE_MEAN,
                   "last": llama_cpp.LLAMA_POOLING_TYPE_LAST,
                   "cls": llama_cpp.LLAMA_POOLING_TYPE_CLS}[self.pooling]
        threads = self.threads or default_threads()
        try:
            # Same weight-buffer rule as the generation backend (AMX repacking crashed).
            with model_params(use_extra_buffers()):
                self._llm = llama_cpp.Llama(
                    model_path=self.model.path, embedding=True, pooling_type=pooling,
                    n_ctx=self.n_ctx, n_batch=self.n_ctx, n_ubatch=self.n_ctx, n_seq_max=1,
                    n_threads=threads, n_threads_batch=threads, verbose=False)
        except (ValueError, RuntimeError, OSError) as exc:
            raise UserError(f"embedder {self.name}: llama.cpp could not load "
                            f"{self.model.path} for embeddings ({exc})") from None
        return self._llm

    def dim_hint(self) -> int:
        """The model's embedding length (loads the model)."""
        llm = self._llm or self._load()
        return int(llm.n_embd())

    def _embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        llm = self._llm or self._load()
        # One call per text (module docstring); truncate=True cuts it to n_batch (= n_ctx)
        # tokens.
        rows = [llm.embed([text], normalize=False, truncate=True)[0] for text in texts]
        return np.asarray(rows, dtype=np.float64)

    def close(self) -> None:
        """Free the embedding context."""
        if self._llm is not None:
            self._llm.close()
            self._llm = None
