"""GGUF header reading and the bad-file cases (missing, not GGUF, truncated, a tensor type
llama.cpp does not read); what the bundled llama.cpp says about a model (ggml type sizes,
prefix-cache safety) on the embedded model and on tiny sliding-window models."""

from __future__ import annotations

import struct

import pytest

from store.errors import UserError
from store.models import model_metadata
from tests.models.tiny_gguf import write_tiny_model
from workbench.models.gguf import read_gguf, sha256_file
from workbench.models.llama_facts import ggml_type, probe_prefix_cache
from workbench.models.registry import embedded_model_path, register_model


def test_embedded_model_metadata() -> None:
    info = read_gguf(embedded_model_path())
    assert (info.architecture, info.quantization, info.context_length) == ("llama", "Q4_1", 8192)
    assert (info.bos_token, info.eos_token) == ("<|im_start|>", "<|im_end|>")
    assert "<|im_start|>assistant" in (info.chat_template or "")
    assert info.n_tensors > 0


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


def test_sha256_file(tmp_path) -> None:
    path = tmp_path / "x"
    path.write_bytes(b"abc")
    # sha256("abc"), the FIPS 180-2 test vector
    assert sha256_file(path) == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")


def test_the_parameter_count_sums_the_tensors_elements(tmp_path) -> None:
    """Two F32 tensors, 3 × 4 and 5 elements: 12 + 5 = 17 parameters (seed 002 Figure 4's
    x axis); the embedded SmolLM2-135M has 134,515,008 (its size label says 135M)."""
    string = _string
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


def _string(s: str) -> bytes:
    return struct.pack("<Q", len(s)) + s.encode()


def _one_tensor_file(path, ggml_type: int, elements: int, data_bytes: int):
    """A GGUF with one 1-D tensor of `ggml_type` and `data_bytes` bytes of data after it."""
    header = b"GGUF" + struct.pack("<IQQ", 3, 1, 0) + _string("blk.0.w") + \
        struct.pack("<IQ", 1, elements) + struct.pack("<IQ", ggml_type, 0)
    data_start = -(-len(header) // 32) * 32
    path.write_bytes(header + b"\0" * (data_start - len(header)) + b"\0" * data_bytes)
    return path


def test_type_sizes_are_the_bundled_ggml_s():
    # Worked out from ggml-common.h: q4_1 is 32 weights in 16 bytes plus a half-precision
    # scale and minimum (20); q8_1 32 int8 plus two halves (36; llama.cpp's gguf package
    # 0.19.0 says 40); q4_K 256 weights in 144 bytes; f32 one element in 4.
    assert [(t.name, t.block_elements, t.block_bytes) for t in map(ggml_type, (0, 3, 9, 12))] \
        == [("f32", 1, 4), ("q4_1", 32, 20), ("q8_1", 32, 36), ("q4_K", 256, 144)]
    assert ggml_type(12).nbytes(512) == 288
    assert ggml_type(4).readable is False  # Q4_2, removed from ggml long ago
    assert ggml_type(10_000) is None


def test_the_truncation_check_counts_each_type_s_bytes(tmp_path):
    # 64 q4_1 weights: 2 blocks of 20 bytes. One byte short is truncated.
    _one_tensor_file(tmp_path / "ok.gguf", 3, 64, 40)
    assert read_gguf(tmp_path / "ok.gguf").n_params == 64
    with pytest.raises(UserError, match=r"short.gguf: truncated GGUF: tensor data needs"):
        read_gguf(_one_tensor_file(tmp_path / "short.gguf", 3, 64, 39))


@pytest.mark.parametrize("number, named", [(10_000, ""), (31, r" \(TYPE_Q4_0_4_4 REMOVED")])
def test_a_tensor_type_llama_cpp_does_not_read_is_refused(tmp_path, number, named):
    # The old table counted an unknown type as 0 bytes, so no file could be too short.
    path = _one_tensor_file(tmp_path / "odd.gguf", number, 64, 0)
    with pytest.raises(UserError, match=rf"odd.gguf: tensor blk.0.w has ggml type {number}"
                                        rf"{named}.*which the bundled llama.cpp"):
        read_gguf(path)


def test_the_embedded_model_may_reuse_a_cached_prefix():
    assert probe_prefix_cache(embedded_model_path()) == (True, None)


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    """A sliding-window gemma2 and a llama whose metadata names a window llama.cpp ignores."""
    folder = tmp_path_factory.mktemp("tiny")
    source = embedded_model_path()
    return {
        "gemma2": write_tiny_model(folder / "gemma2.gguf", "gemma2", sliding_window=32,
                                   tokenizer_from=source),
        "llama": write_tiny_model(folder / "llama.gguf", "llama", sliding_window=32,
                                  tokenizer_from=source),
    }


def test_a_sliding_window_model_is_registered_without_prefix_reuse(db, tiny_models):
    sliding = register_model(db, tiny_models["gemma2"], "swa")
    assert sliding.architecture == "gemma2" and not sliding.prefix_cache_safe
    assert model_metadata(db, sliding.id)["prefix_cache_reason"] == \
        "llama.cpp: sliding-window attention (32 tokens)"
    # The old list flagged any `<arch>.attention.sliding_window`; llama.cpp runs the llama
    # architecture with full attention whatever the metadata says, so its cache is reusable.
    plain = register_model(db, tiny_models["llama"], "plain")
    assert plain.prefix_cache_safe
    assert model_metadata(db, plain.id)["prefix_cache_reason"] is None


def test_the_loaded_model_decides_over_a_stored_flag(tiny_models):
    # A model registered before llama.cpp was asked (its flag from the architecture list)
    # may be stored as safe: the backend asks the model it loaded.
    from workbench.models.backend import LlamaCppBackend

    backend = LlamaCppBackend(str(tiny_models["gemma2"]), threads=1, ctx=64,
                              prefix_cache_safe=True)
    try:
        assert backend.prefix_cache_safe is False
    finally:
        backend.close()


def test_a_file_llama_cpp_cannot_load_is_refused_at_registration(db, tmp_path):
    # A well-formed header llama.cpp has no architecture for: one line, nothing stored.
    kv = _string("general.architecture") + struct.pack("<I", 8) + _string("no-such-arch")
    path = tmp_path / "odd.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + kv)
    with pytest.raises(UserError, match=r"odd.gguf: llama.cpp 0.3.36 could not load this "
                                        r"model: unknown model architecture: 'no-such-arch'$"):
        register_model(db, path, "odd")
    assert db.execute("SELECT COUNT(*) FROM models").fetchone()[0] == 0
