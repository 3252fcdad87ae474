"""GGUF files: header metadata, file hash, and validation (not GGUF, truncated).

Reading the header ourselves lets `paw models add` name the problem ("truncated: tensor
data needs N bytes, file has M") where llama.cpp would only say "failed to load model".
The bytes each tensor type takes are the bundled llama.cpp's (`llama_facts.ggml_type`): a
type it does not read is refused by number and name, never counted as zero bytes.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from store.errors import UserError
from workbench.models.llama_facts import GgmlType, ggml_type

GGUF_MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32

# GGUF metadata value types -> struct format (8: string, 9: array handled apart).
_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
           10: "<Q", 11: "<q", 12: "<d"}

# llama.cpp `general.file_type` (LLAMA_FTYPE_MOSTLY_*) -> the usual quantization name.
FILE_TYPES = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K",
    11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S",
    17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS",
    23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S",
    29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0", 37: "TQ2_0",
    38: "MXFP4_MOE",
}

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


_KEEP_ARRAYS = {"tokenizer.ggml.tokens", "general.tags"}
"""Arrays read in full (every other array is skipped): the vocabulary (for the BOS/EOS
texts) and the model's tags (`paw models add` says when they mark a base model)."""


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
            if key == "tokenizer.ggml.tokens":
                tokens = value
            elif value is not None:
                metadata[key] = value
        data_needed = 0
        n_params = 0  # the model's parameter count: every tensor's elements (Figure 4)
        for _ in range(n_tensors):
            tensor = reader.string()
            n_dims = reader.unpack("<I")
            dims = [reader.unpack("<Q") for _ in range(n_dims)]
            number, offset = reader.unpack("<I"), reader.unpack("<Q")
            elements = 1
            for d in dims:
                elements *= d
            n_params += elements
            data_needed = max(data_needed, offset + _tensor_type(where, tensor, number)
                              .nbytes(elements))
        alignment = int(metadata.get("general.alignment", DEFAULT_ALIGNMENT))
        header_end = handle.tell()
    data_start = -(-header_end // alignment) * alignment
    if data_needed and data_start + data_needed > size:
        raise UserError(
            f"{where}: truncated GGUF: tensor data needs {data_start + data_needed} bytes, "
            f"file has {size}"
        )
    return _info(where, size, version, n_tensors, metadata, tokens, n_params)


def _tensor_type(where: str, tensor: str, number: int) -> GgmlType:
    kind = ggml_type(number)
    if kind is None or not kind.readable:
        import llama_cpp

        named = f" ({kind.name})" if kind is not None else ""
        raise UserError(f"{where}: tensor {tensor} has ggml type {number}{named}, which "
                        f"the bundled llama.cpp ({llama_cpp.__version__}) does not read")
    return kind


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
    small = {k: v for k, v in metadata.items()
             if k != "tokenizer.chat_template" and (not isinstance(v, list)
                                                    or k in _KEEP_ARRAYS)}
    return GGUFInfo(
        path=where, size_bytes=size, version=version, architecture=arch,
        quantization=FILE_TYPES.get(file_type) if isinstance(file_type, int) else None,
        context_length=int(context) if context is not None else None,
        chat_template=metadata.get("tokenizer.chat_template"),
        bos_token=_token(tokens, metadata, "tokenizer.ggml.bos_token_id"),
        eos_token=_token(tokens, metadata, "tokenizer.ggml.eos_token_id"),
        name=metadata.get("general.name"), n_tensors=n_tensors, n_params=n_params,
        metadata=small,
    )


def sha256_file(path: str | Path, chunk: int = 1 << 20,
                on_bytes: Callable[[int], None] | None = None) -> str:
    """Hex sha256 of a whole file, read in 1 MiB chunks; `on_bytes(read so far)` after
    each chunk (the UI's progress while a model is registered)."""
    digest = hashlib.sha256()
    done = 0
    with Path(path).open("rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
            done += len(block)
            if on_bytes is not None:
                on_bytes(done)
    return digest.hexdigest()
