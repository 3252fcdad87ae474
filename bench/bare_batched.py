"""The engine's ceiling: a bare batched `llama_decode` loop over given prompts and output lengths.

No PAW code on the decode path: llama-cpp-python's low-level API only. The loop loads the
model as PAW does (same threads, same buffer settings), makes one context with one KV
stream per sequence, and runs continuous batching of up to N sequences: each sequence's
prompt is evaluated as a batch of its own (chunks of 512, logits for the last token), then
one token per active sequence per `llama_decode` (logits for every row, as decoding needs),
feeding the token ids PAW generated so the work is the same tokens at the same positions;
a sequence whose answer PAW read after an appended cue evaluates that cue too. No
sampling, no parsing, no SQLite: what is left is the cost of llama.cpp itself.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class BareSequence:
    """One generation to replay: its context ids, output ids, and cue ids if one was appended."""

    context_ids: tuple[int, ...]
    output_ids: tuple[int, ...]
    cue_ids: tuple[int, ...] = ()


def bare_batched_pass(model_path: str, threads: int, n_seq: int,
                      sequences: Sequence[BareSequence], n_ctx_seq: int = 1024) -> float:
    """Replay `sequences` with up to `n_seq` per decode; returns seconds (model load included)."""
    import llama_cpp
    from llama_cpp import Llama

    from workbench.models.backend import model_params, use_extra_buffers

    started = time.perf_counter()
    with model_params(use_extra_buffers()):
        llm = Llama(model_path=model_path, n_ctx=256, n_batch=512, n_threads=threads,
                    n_threads_batch=threads, logits_all=False, verbose=False)
    need = max(len(s.context_ids) + len(s.output_ids) + len(s.cue_ids) + 2 for s in sequences)
    ctx_seq = -(-max(need, n_ctx_seq) // 256) * 256
    params = llama_cpp.llama_context_params.from_buffer_copy(llm.context_params)
    params.n_ctx, params.n_seq_max, params.kv_unified = n_seq * ctx_seq, n_seq, False
    params.n_batch = params.n_ubatch = 512  # Llama capped them at its own small n_ctx
    ctx = llama_cpp.llama_init_from_model(llm._model.model, params)
    mem = llama_cpp.llama_get_memory(ctx)
    batch = llama_cpp.llama_batch_init(512, 0, 1)

    def decode(entries) -> None:
        batch.n_tokens = len(entries)
        for i, (token, pos, seq, logits) in enumerate(entries):
            batch.token[i], batch.pos[i], batch.n_seq_id[i] = token, pos, 1
            batch.seq_id[i][0], batch.logits[i] = seq, logits
        if llama_cpp.llama_decode(ctx, batch) != 0:
            raise RuntimeError("llama_decode failed")

    def evaluate(seq: int, ids: Sequence[int], start: int) -> None:
        for first in range(0, len(ids), 512):
            chunk = ids[first:first + 512]
            decode([(t, start + first + i, seq, i == len(chunk) - 1)
                    for i, t in enumerate(chunk)])

    pending = deque(sequences)
    # slot -> [sequence, tokens fed so far]
    slots: dict[int, list] = {}
    while pending or slots:
        for seq in range(n_seq):
            if seq not in slots and pending:
                s = pending.popleft()
                llama_cpp.llama_memory_seq_rm(mem, seq, 0, -1)
                evaluate(seq, s.context_ids, 0)
                slots[seq] = [s, 0]
        # Each sequence feeds its output token by token (the last one is never evaluated,
        # as in decoding); a finished one evaluates its cue, if any, and frees the slot.
        for seq, (s, fed) in list(slots.items()):
            if fed >= len(s.output_ids) - 1:
                if s.cue_ids:
                    evaluate(seq, list(s.output_ids[fed:]) + list(s.cue_ids),
                             len(s.context_ids) + fed)
                del slots[seq]
        if not slots:
            continue
        decode([(s.output_ids[fed], len(s.context_ids) + fed, seq, True)
                for seq, (s, fed) in slots.items()])
        for entry in slots.values():
            entry[1] += 1
    llama_cpp.llama_batch_free(batch)
    llama_cpp.llama_free(ctx)
    llm.close()
    return time.perf_counter() - started


def replay_of(generation, tokenize) -> BareSequence:
    """The `BareSequence` of a stored generation (`tokenize(text, special)` gives ids)."""
    context = tuple(tokenize(generation.prompt, True)) + tuple(generation.prefix_token_ids or ())
    cue: tuple[int, ...] = ()
    if generation.option_logits and generation.option_logits.get("position") == "appended":
        before = (generation.prefix or "") + (generation.output or "")
        separator = "" if not before or before[-1].isspace() else "\n"
        cue = tuple(tokenize(separator + "Answer:", False))
    output = tuple(generation.output_token_ids or ())
    return BareSequence(context, output if output else (0,), cue)
