"""Tiny GGUF models that llama.cpp loads, written with llama.cpp's own `gguf` package.

One layer of 16-wide zero weights under the embedded SmolLM2's tokenizer (llama.cpp loads no
model without one): about 3 MB, written in a few seconds and loaded in a tenth of one. They
carry an architecture's real metadata and tensor layout, so the bundled llama.cpp reports
on them as on the full model: a `gemma2` one with `attention.sliding_window` is a
sliding-window model to llama.cpp (`llama_model_n_swa`), a `llama` one is not, whatever
its metadata claims.
"""

from __future__ import annotations

from pathlib import Path

N_EMBD, N_HEAD, N_HEAD_KV, HEAD_DIM, N_FF = 16, 2, 1, 8, 32
"""The one layer's shape (any small numbers that llama.cpp's checks accept)."""


def _copy_tokenizer(writer, source: Path, skip: frozenset[str] = frozenset()) -> int:
    """Copy every `tokenizer.*` field of `source` but those in `skip` into `writer`; returns
    the vocabulary size."""
    import gguf

    n_vocab = 0
    for field in gguf.GGUFReader(source).fields.values():
        if not field.name.startswith("tokenizer.") or field.name in skip:
            continue
        kind = field.types[0]
        if kind == gguf.GGUFValueType.ARRAY:
            if field.types[1] == gguf.GGUFValueType.STRING:
                values = [bytes(field.parts[i]) for i in field.data]
            else:
                values = [field.parts[i][0].item() for i in field.data]
            if field.name == "tokenizer.ggml.tokens":
                n_vocab = len(values)
            writer.add_array(field.name, values)
        elif kind == gguf.GGUFValueType.STRING:
            writer.add_string(field.name, bytes(field.parts[field.data[0]]).decode("utf-8"))
        else:
            writer.add_key_value(field.name, field.parts[field.data[0]][0].item(), kind)
    return n_vocab


def write_tiny_model(path: Path, architecture: str, *, sliding_window: int | None = None,
                     tokenizer_from: Path, chat_template: bool = True,
                     add_bos: bool | None = None, strings: dict[str, str] | None = None) -> Path:
    """Write a one-layer `architecture` model ('llama' or 'gemma2') to `path`.

    Args:
        path: the file to write.
        architecture: 'llama' or 'gemma2' (their tensor sets differ by three norms).
        sliding_window: written as `<arch>.attention.sliding_window` when given.
        tokenizer_from: a GGUF whose tokenizer the model takes.
        chat_template: keep its `tokenizer.chat_template` (False: a template-less model).
        add_bos: written as `tokenizer.ggml.add_bos_token` when given (else the source's).
        strings: more string metadata (`general.finetune`, …).
    """
    import gguf
    import numpy as np

    writer = gguf.GGUFWriter(path, architecture)
    skip = set() if chat_template else {"tokenizer.chat_template"}
    if add_bos is not None:
        skip.add("tokenizer.ggml.add_bos_token")
        writer.add_add_bos_token(add_bos)
    n_vocab = _copy_tokenizer(writer, tokenizer_from, frozenset(skip))
    for key, value in (strings or {}).items():
        writer.add_string(key, value)
    writer.add_context_length(64)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(1)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD_KV)
    writer.add_key_length(HEAD_DIM)
    writer.add_value_length(HEAD_DIM)
    writer.add_layer_norm_rms_eps(1e-6)
    if sliding_window is not None:
        writer.add_sliding_window(sliding_window)
    # numpy shapes: ggml's dimensions reversed (token_embd is {n_embd, n_vocab} in ggml).
    shapes = {
        "token_embd.weight": (n_vocab, N_EMBD), "output_norm.weight": (N_EMBD,),
        "blk.0.attn_norm.weight": (N_EMBD,), "blk.0.ffn_norm.weight": (N_EMBD,),
        "blk.0.attn_q.weight": (N_HEAD * HEAD_DIM, N_EMBD),
        "blk.0.attn_k.weight": (N_HEAD_KV * HEAD_DIM, N_EMBD),
        "blk.0.attn_v.weight": (N_HEAD_KV * HEAD_DIM, N_EMBD),
        "blk.0.attn_output.weight": (N_EMBD, N_HEAD * HEAD_DIM),
        "blk.0.ffn_gate.weight": (N_FF, N_EMBD), "blk.0.ffn_up.weight": (N_FF, N_EMBD),
        "blk.0.ffn_down.weight": (N_EMBD, N_FF),
    }
    if architecture == "gemma2":  # norms after attention and after the feed-forward block
        shapes |= {"blk.0.post_attention_norm.weight": (N_EMBD,),
                   "blk.0.post_ffw_norm.weight": (N_EMBD,)}
    for name, shape in shapes.items():
        writer.add_tensor(name, np.zeros(shape, dtype=np.float16 if len(shape) > 1
                                         else np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
