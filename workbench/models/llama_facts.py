"""What the bundled llama.cpp says about a model: the size of each ggml tensor type (for the
GGUF truncation check) and whether a prompt may reuse a cached prefix of another.

Both are asked of the llama.cpp that llama-cpp-python ships, never kept in a list here: a
quantization or an architecture is known exactly when the library that will load the file
knows it. A ggml type that library does not know (or no longer reads) is refused by the
caller with its number and name, rather than counted as zero bytes.

Prefix reuse: after one prompt the KV cache holds its positions, and the next prompt keeps
the shared prefix and evaluates only the rest. That is the same computation as a fresh
evaluation only if every cached position stays as it was: not so for sliding-window
attention (the window drops old positions), recurrent state (one state, no per-position
cache to cut) or hybrids of the two. llama.cpp answers these for a loaded model
(`llama_model_n_swa`, `llama_model_is_recurrent`, `llama_model_is_hybrid`); the hyper-
parameters they read are only loaded with the model's tensors, so `probe_prefix_cache`
loads the model with its weights memory-mapped (not read) and no context.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store.errors import UserError

LIBRARY_NAMES: tuple[str, ...] = ("libggml-base.so", "libggml-base.dylib", "ggml-base.dll")
"""The ggml base library (the type traits) as llama-cpp-python ships it, per platform."""


@dataclass(frozen=True)
class GgmlType:
    """A ggml tensor type as the bundled library defines it."""

    number: int
    name: str
    block_elements: int
    """Elements per block (1 for plain types, 32 or 256 for most quantizations; 0 for a
    type the library no longer reads)."""
    block_bytes: int
    """Bytes per block (0 for a type the library no longer reads)."""

    @property
    def readable(self) -> bool:
        """Whether the library still reads tensors of this type."""
        return self.block_elements > 0 and self.block_bytes > 0

    def nbytes(self, elements: int) -> int:
        """Bytes of a tensor of `elements` elements (whole blocks, as ggml stores them)."""
        return elements // self.block_elements * self.block_bytes


def _library_folder() -> Path:
    import llama_cpp

    # Where llama-cpp-python itself loads llama.cpp from (it honours the same variable).
    override = os.environ.get("LLAMA_CPP_LIB_PATH")
    return Path(override) if override else Path(llama_cpp.__file__).parent / "lib"


@functools.cache
def _ggml() -> Any:
    import ctypes

    folder = _library_folder()
    found = next((folder / name for name in LIBRARY_NAMES if (folder / name).is_file()), None)
    if found is None:
        raise UserError(f"{folder}: llama-cpp-python's ggml library is missing "
                        "(reinstall llama-cpp-python==0.3.36)")
    lib = ctypes.CDLL(str(found))
    lib.ggml_blck_size.argtypes = [ctypes.c_int]
    lib.ggml_blck_size.restype = ctypes.c_int64
    lib.ggml_type_size.argtypes = [ctypes.c_int]
    lib.ggml_type_size.restype = ctypes.c_size_t
    lib.ggml_type_name.argtypes = [ctypes.c_int]
    lib.ggml_type_name.restype = ctypes.c_char_p
    return lib


def ggml_type(number: int) -> GgmlType | None:
    """The ggml tensor type `number` as the bundled llama.cpp defines it; None for a number
    it does not know (a file newer than the library)."""
    import llama_cpp

    # The library's traits table has GGML_TYPE_COUNT rows; past it is not memory to read.
    if not 0 <= number < llama_cpp.GGML_TYPE_COUNT:
        return None
    lib = _ggml()
    name = (lib.ggml_type_name(number) or b"?").decode("utf-8", "replace")
    return GgmlType(number, name, int(lib.ggml_blck_size(number)),
                    int(lib.ggml_type_size(number)))


def prefix_cache_verdict(model: Any) -> tuple[bool, str | None]:
    """Whether a loaded llama.cpp model may reuse a cached prefix, and why not.

    Args:
        model: the `llama_model *` of a loaded model (`Llama.model`).

    Returns:
        (safe, reason): reason names what llama.cpp reported when reuse is unsafe.
    """
    import llama_cpp

    if llama_cpp.llama_model_is_hybrid(model):
        return False, "llama.cpp: hybrid attention and recurrent state"
    if llama_cpp.llama_model_is_recurrent(model):
        return False, "llama.cpp: recurrent state (no per-position cache to cut)"
    window = int(llama_cpp.llama_model_n_swa(model))
    if window > 0:
        return False, f"llama.cpp: sliding-window attention ({window} tokens)"
    return True, None


def probe_prefix_cache(path: str | Path) -> tuple[bool, str | None]:
    """Load a GGUF's structure in llama.cpp (weights memory-mapped, no context, no GPU) and
    ask `prefix_cache_verdict`.

    Raises:
        UserError: llama.cpp cannot load the file, with the reason it logged (an
            architecture it does not know, a missing tensor, …).
    """
    import contextlib
    import io
    import logging

    import llama_cpp

    params = llama_cpp.llama_model_default_params()
    params.n_gpu_layers = 0
    params.use_mmap = True
    params.use_extra_bufts = False  # no repacking: the weights are never read here
    # llama-cpp-python prints llama.cpp's log to sys.stderr as this logger allows (and files
    # llama.cpp's errors under DEBUG): heard in full here, kept only for a failure's reason.
    log = logging.getLogger("llama-cpp-python")
    level = log.level
    heard = io.StringIO()
    log.setLevel(logging.DEBUG)
    try:
        with contextlib.redirect_stderr(heard):
            model = llama_cpp.llama_model_load_from_file(str(path).encode(), params)
    finally:
        # As `Llama(verbose=False)` leaves it, unless someone had chosen a level.
        log.setLevel(level if level != logging.NOTSET else logging.ERROR)
    if not model:
        said = [line.split("error loading model:", 1)[1].strip()
                for line in heard.getvalue().splitlines() if "error loading model:" in line]
        raise UserError(f"{path}: llama.cpp {llama_cpp.__version__} could not load this "
                        f"model: {said[-1] if said else 'no reason given'}")
    try:
        return prefix_cache_verdict(model)
    finally:
        llama_cpp.llama_model_free(model)
