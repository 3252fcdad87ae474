"""GGUF files: header metadata, file hash, and validation (not GGUF, truncated) without llama.cpp.

Reading the header ourselves lets `paw models add` name the problem ("truncated: tensor
data needs N bytes, file has M") where llama.cpp would only say "failed to load model".
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from store.errors import UserError

GGUF_MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32

# GGUF metadata value types -> struct format (8: string, 9: array handled apart).
_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
           10: "<Q", 11: "<q", 12: "<d"}

# ggml tensor type -> (elements per block, bytes per block), for the truncation check.
_GGML_TYPE_SIZES = {
    0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34),
    9: (32, 36), 10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176),
    14: (256, 210), 15: (256, 292), 16: (256, 66), 17: (256, 74), 18: (256, 98),
    19: (256, 50), 20: (32, 18), 21: (256, 110), 22: (256, 82), 23: (256, 136), 24: (1, 1),
    25: (1, 2), 26: (1, 4), 27: (1, 8), 28: (1, 8), 29: (256, 56), 30: (1, 2),
    34: (256, 54), 35: (256, 66), 39: (32, 17),
}

# llama.cpp `general.file_type` (LLAMA_FTYPE_MOSTLY_*) -> the usual quantization name.
FILE_TYPES = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K",
    11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S",
    17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS",
    23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S",
    29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0", 37: "TQ2_0",
    38: "MXFP4_MOE",
}

PREFIX_UNSAFE_ARCHITECTURES = frozenset({
    # sliding-window / interleaved SWA attention: the SWA cache drops old positions, so a
    # cached prefix is not what a fresh evaluation would see
    "gemma2", "gemma3", "gemma3n", "cohere2", "llama4", "exaone4", "gpt-oss", "smallthinker",
    # recurrent state (no per-position cache to truncate)
    "mamba", "mamba2", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7",
    # hybrid attention + recurrent
    "jamba", "falcon-h1", "granitehybrid", "plamo2", "lfm2", "nemotron_h", "qwen3next",
})
"""Architectures whose KV cache must not be reused across prompts (evaluated fresh instead)."""


@dataclass(frozen=True)
class GGUFInfo:
    """What the GGUF header says about a model file."""

    path: str
    size_bytes: int
    version: int
    architecture: str | None
    quantization: str | None
    context_length: int | None
    chat_template: str | None
    bos_token: str | None
    eos_token: str | None
    name: str | None
    n_tensors: int
    n_params: int
    prefix_cache_safe: bool
    prefix_cache_reason: str | None
    metadata: dict[str, Any] = field(default_factory=dict)


class _Reader:
    def __init__(self, handle: BinaryIO, path: str, size: int) -> None:
        self.handle, self.path, self.size = handle, path, size

    def read(self, n: int) -> bytes:
        data = self.handle.read(n)
        if len(data) != n:
            raise UserError(f"{self.path}: truncated GGUF: header ends at byte {self.size}")
        return data

    def remaining(self) -> int:
        return self.size - self.handle.tell()

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.read(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        length = self.unpack("<Q")
        if length > self.remaining():
            raise UserError(f"{self.path}: truncated GGUF: a {length}-byte header string runs "
                            f"past the end of the file ({self.size} bytes)")
        return self.read(length).decode("utf-8", errors="replace")

    def value(self, kind: int, keep: bool) -> Any:
        if kind in _SCALAR:
            return self.unpack(_SCALAR[kind])
        if kind == 8:
            return self.string()
        if kind == 9:
            item_kind, count = self.unpack("<I"), self.unpack("<Q")
            if count > self.remaining():
                raise UserError(f"{self.path}: truncated GGUF: a {count}-item header array "
                                f"runs past the end of the file ({self.size} bytes)")
            if item_kind in _SCALAR and not keep:
                # Skip big numeric arrays (token scores, types) without decoding them.
                self.read(struct.calcsize(_SCALAR[item_kind]) * count)
                return None
            items = [self.value(item_kind, keep) for _ in range(count)]
            return items if keep else None
        raise UserError(f"{self.path}: corrupt GGUF: unknown metadata type {kind}")


_KEEP_ARRAYS = {"tokenizer.ggml.tokens"}


def read_gguf(path: str | Path) -> GGUFInfo:
    """Read and validate a GGUF file's header.

    Raises:
        UserError: the file is missing, not GGUF, or truncated (names the file and the problem).
    """
    where = str(path)
    file = Path(path)
    if not file.exists():
        raise UserError(f"{where}: model file not found")
    if not file.is_file():
        raise UserError(f"{where}: not a file")
    size = file.stat().st_size
    with file.open("rb") as handle:
        magic = handle.read(4)
        if magic != GGUF_MAGIC:
            raise UserError(
                f"{where}: not a GGUF model file (starts with {magic!r}, expected b'GGUF')")
        reader = _Reader(handle, where, size)
        version = reader.unpack("<I")
        if version not in (2, 3):
            raise UserError(f"{where}: unsupported GGUF version {version} (expected 2 or 3)")
        n_tensors, n_kv = reader.unpack("<Q"), reader.unpack("<Q")
        metadata: dict[str, Any] = {}
        tokens: list[str] | None = None
        for _ in range(n_kv):
            key = reader.string()
            kind = reader.unpack("<I")
            value = reader.value(kind, keep=key in _KEEP_ARRAYS)
            if key in _KEEP_ARRAYS:
                tokens = value
            elif value is not None:
                metadata[key] = value
        data_needed = 0
        n_params = 0  # the model's parameter count: every tensor's elements (Figure 4)
        for _ in range(n_tensors):
            reader.string()
            n_dims = reader.unpack("<I")
            dims = [reader.unpack("<Q") for _ in range(n_dims)]
            ggml_type, offset = reader.unpack("<I"), reader.unpack("<Q")
            elements = 1
            for d in dims:
                elements *= d
            n_params += elements
            block, block_bytes = _GGML_TYPE_SIZES.get(ggml_type, (1, 0))
            data_needed = max(data_needed, offset + elements // block * block_bytes)
        alignment = int(metadata.get("general.alignment", DEFAULT_ALIGNMENT))
        header_end = handle.tell()
    data_start = -(-header_end // alignment) * alignment
    if data_needed and data_start + data_needed > size:
        raise UserError(
            f"{where}: truncated GGUF: tensor data needs {data_start + data_needed} bytes, "
            f"file has {size}"
        )
    return _info(where, size, version, n_tensors, metadata, tokens, n_params)


def _token(tokens: list[str] | None, metadata: dict[str, Any], key: str) -> str | None:
    index = metadata.get(key)
    if tokens is None or index is None or not 0 <= int(index) < len(tokens):
        return None
    return tokens[int(index)]


def _info(where: str, size: int, version: int, n_tensors: int, metadata: dict[str, Any],
          tokens: list[str] | None, n_params: int = 0) -> GGUFInfo:
    arch = metadata.get("general.architecture")
    context = metadata.get(f"{arch}.context_length") if arch else None
    file_type = metadata.get("general.file_type")
    safe, reason = True, None
    if arch in PREFIX_UNSAFE_ARCHITECTURES:
        safe, reason = False, f"architecture {arch} (sliding-window or recurrent state)"
    elif arch and metadata.get(f"{arch}.attention.sliding_window"):
        safe, reason = False, f"{arch}.attention.sliding_window is set"
    elif arch and any(k.startswith(f"{arch}.ssm.") or k.startswith(f"{arch}.wkv.")
                      for k in metadata):
        safe, reason = False, f"{arch} has recurrent (ssm/wkv) state"
    small = {k: v for k, v in metadata.items()
             if k != "tokenizer.chat_template" and not isinstance(v, list)}
    return GGUFInfo(
        path=where, size_bytes=size, version=version, architecture=arch,
        quantization=FILE_TYPES.get(file_type) if isinstance(file_type, int) else None,
        context_length=int(context) if context is not None else None,
        chat_template=metadata.get("tokenizer.chat_template"),
        bos_token=_token(tokens, metadata, "tokenizer.ggml.bos_token_id"),
        eos_token=_token(tokens, metadata, "tokenizer.ggml.eos_token_id"),
        name=metadata.get("general.name"), n_tensors=n_tensors, n_params=n_params,
        prefix_cache_safe=safe,
        prefix_cache_reason=reason, metadata=small,
    )


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a whole file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()
