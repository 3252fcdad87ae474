"""GGUF header reading and the bad-file cases (missing, not GGUF, truncated)."""

from __future__ import annotations

import pytest

from store.errors import UserError
from workbench.models.gguf import read_gguf, sha256_file
from workbench.models.registry import embedded_model_path


def test_embedded_model_metadata() -> None:
    info = read_gguf(embedded_model_path())
    assert (info.architecture, info.quantization, info.context_length) == ("llama", "Q4_1", 8192)
    assert (info.bos_token, info.eos_token) == ("<|im_start|>", "<|im_end|>")
    assert "<|im_start|>assistant" in (info.chat_template or "")
    assert info.prefix_cache_safe and info.n_tensors > 0


def test_missing_and_not_gguf(tmp_path) -> None:
    with pytest.raises(UserError, match="model file not found"):
        read_gguf(tmp_path / "nope.gguf")
    text = tmp_path / "notes.gguf"
    text.write_text("hello, not a model")
    with pytest.raises(UserError, match=r"notes.gguf: not a GGUF model file"):
        read_gguf(text)


@pytest.mark.parametrize("keep", [4096, 0.999])
def test_truncated(tmp_path, keep) -> None:
    # 4096 bytes: the header itself is cut; 99.9%: the header is whole, tensor data is not.
    data = embedded_model_path().read_bytes()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(data[: keep if isinstance(keep, int) else int(len(data) * keep)])
    with pytest.raises(UserError, match=r"cut.gguf: truncated GGUF"):
        read_gguf(cut)


def test_sliding_window_model_is_flagged(tmp_path) -> None:
    # A minimal header-only GGUF (no tensors) claiming the gemma2 architecture.
    import struct

    def string(s: str) -> bytes:
        return struct.pack("<Q", len(s)) + s.encode()

    kv = string("general.architecture") + struct.pack("<I", 8) + string("gemma2")
    path = tmp_path / "g.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + kv)
    info = read_gguf(path)
    assert info.architecture == "gemma2" and not info.prefix_cache_safe


def test_sha256_file(tmp_path) -> None:
    path = tmp_path / "x"
    path.write_bytes(b"abc")
    # sha256("abc"), the FIPS 180-2 test vector
    assert sha256_file(path) == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")


def test_the_parameter_count_sums_the_tensors_elements(tmp_path) -> None:
    """Two F32 tensors, 3 × 4 and 5 elements: 12 + 5 = 17 parameters (seed 002 Figure 4's
    x axis); the embedded SmolLM2-135M has 134,515,008 (its size label says 135M)."""
    import struct

    def string(s: str) -> bytes:
        return struct.pack("<Q", len(s)) + s.encode()

    tensors = b""
    for name, dims, offset in (("a.weight", (3, 4), 0), ("b.bias", (5,), 64)):
        tensors += string(name) + struct.pack("<I", len(dims))
        tensors += b"".join(struct.pack("<Q", d) for d in dims)
        tensors += struct.pack("<IQ", 0, offset)  # type 0 = F32
    header = b"GGUF" + struct.pack("<IQQ", 3, 2, 0) + tensors
    data_start = -(-len(header) // 32) * 32
    path = tmp_path / "t.gguf"
    path.write_bytes(header + b"\0" * (data_start - len(header)) + b"\0" * (64 + 5 * 4))
    assert read_gguf(path).n_params == 17
    info = read_gguf(embedded_model_path())
    assert info.n_params == 134_515_008 and info.metadata["general.size_label"] == "135M"
