"""Continuous batching: up to N sequences per `llama_decode`, each with its own sampler and stop.

The decoder owns a second llama.cpp context on the backend's already-loaded model, with
`n_seq_max = N` and one KV stream per sequence (`kv_unified = False`), so every
sequence's cache cells are laid out exactly as they would be alone (cell i = position i).
Each slot (seq_id) runs one request at a time:

1. admit: keep the batch-evaluated prefix the slot (or, copied, another slot) shares with
   the new prompt, evaluate the rest of the prompt as a batch of this sequence alone
   (chunks of `n_batch`, logits only for the last token), and sample the first token;
2. step: one `llama_decode` with one token per active slot; each slot reads its own row
   of logits (`llama_get_logits_ith`), records the watched label logits, samples with its
   own llama.cpp sampler chain (same chain and seed as `Llama.generate` builds), and
   stops on end-of-generation or its own `max_tokens`;
3. finish: the caller reads the answer and may append the cue on the same slot
   (`Slot.next_logits`), then the slot takes the next pending request.

Whether step 2 gives the same bits as one sequence per `llama_decode` depends on the
kernels of the build and the machine (a matmul over N columns instead of one);
`workbench.models.selfcheck` checks it when a model loads and batching is only used when
the results are identical.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.models.decoded import Decoded, Watched, common_prefix, read_watched
from workbench.models.request import Sampler

PENALTY_LAST_N = 64
"""`Llama.last_n_tokens_size`: the window of llama-cpp-python's penalties sampler."""

DEFAULT_BATCH_SIZE = 8
"""Sequences per `llama_decode` unless `--batch` says otherwise (measured: docs/runner.md)."""

COPY_MIN_TOKENS = 16
"""Copy another slot's cached prefix only when it saves at least this many prompt tokens
(a cross-stream copy moves the whole stream buffer)."""


def build_sampler(sampler: Sampler, n_vocab: int) -> Any:
    """The llama.cpp sampler chain `Llama.generate` builds for these settings (0.3.36).

    penalties → greedy at temperature 0; otherwise penalties → top-k → typical(1.0) →
    top-p → min-p → temperature → seeded draw. Same chain, same seed: same tokens.
    """
    import llama_cpp

    chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
    add = llama_cpp.llama_sampler_chain_add
    add(chain, llama_cpp.llama_sampler_init_penalties(n_vocab, PENALTY_LAST_N,
                                                      sampler.repeat_penalty, 0.0, 0.0))
    if sampler.temperature == 0.0:
        add(chain, llama_cpp.llama_sampler_init_greedy())
    else:
        add(chain, llama_cpp.llama_sampler_init_top_k(sampler.top_k))
        add(chain, llama_cpp.llama_sampler_init_typical(1.0, 1))
        add(chain, llama_cpp.llama_sampler_init_top_p(sampler.top_p, 1))
        add(chain, llama_cpp.llama_sampler_init_min_p(sampler.min_p, 1))
        add(chain, llama_cpp.llama_sampler_init_temp(sampler.temperature))
        add(chain, llama_cpp.llama_sampler_init_dist(sampler.seed))
    return chain


@dataclass
class BatchJob:
    """One sequence to decode: its context ids, settings and the label tokens to watch."""

    context_ids: Sequence[int]
    sampler: Sampler
    max_tokens: int
    watch_ids: Sequence[int]
    tag: Any = None
    started: float = 0.0  # perf_counter() when admitted to a slot (for latency_s)


@dataclass
class Slot:
    """One sequence id of the batch context and what it is decoding now."""

    seq_id: int
    decoder: BatchDecoder
    ids: list[int] = field(default_factory=list)   # token ids whose KV is in the cache
    reusable: int = 0                               # of those, filled by a batch evaluation
    job: BatchJob | None = None
    chain: Any = None
    tokens: list[int] = field(default_factory=list)
    steps: list[Watched] = field(default_factory=list)
    next_token: int | None = None
    finish: str | None = None

    def next_logits(self, context_ids: Sequence[int], watch_ids: Sequence[int]) -> Watched:
        """Evaluate `context_ids` on top of this slot's cache and read the last logits.

        Mirrors `LlamaCppBackend.next_logits`: at least two tokens are evaluated, as one
        batch of this sequence alone.
        """
        ids = list(context_ids)
        keep = max(min(common_prefix(self.ids, ids), len(ids) - 2), 0)
        self.decoder._truncate(self, keep)
        index = self.decoder._evaluate(self, ids[keep:])
        return read_watched(self.decoder.ctx, index, self.decoder.n_vocab, watch_ids)


def _next_token(slot: Slot) -> int:
    """The token an active slot decodes next (set by every sample that did not stop it)."""
    if slot.next_token is None:
        raise RuntimeError("an active batch slot has no next token")
    return slot.next_token


class BatchDecoder:
    """A llama.cpp context with `n_seq` KV streams on a loaded `Llama`'s model.

    Several decoders may share one model and run at once, each from its own thread
    (llama.cpp contexts are independent; the model's weights are read-only).

    Args:
        llm: the loaded `llama_cpp.Llama` (its model, vocabulary and context settings).
        n_seq: sequences decoded together (slots).
        ctx_seq: KV cells per sequence (prompt + output + appended cue must fit).
        prefix_cache_safe: False to evaluate every prompt fresh (sliding-window or
            recurrent models), unless `prefix_reuse` says otherwise.
        threads: CPU threads of this context (default: the `Llama`'s).
        prefix_reuse: reuse batch-evaluated cached prefixes between requests (default:
            `prefix_cache_safe`). On a sliding-window model this is what the self-check
            must show identical before it is used (docs/runner.md).
    """

    def __init__(self, llm: Any, n_seq: int, ctx_seq: int, *, prefix_cache_safe: bool = True,
                 threads: int | None = None, prefix_reuse: bool | None = None) -> None:
        import llama_cpp

        self.llm = llm
        self.n_seq = n_seq
        self.ctx_seq = ctx_seq
        self.prefix_cache_safe = prefix_cache_safe
        self.prefix_reuse = prefix_cache_safe if prefix_reuse is None else prefix_reuse
        self.n_batch = llm.n_batch
        self.n_vocab = llm.n_vocab()
        params = llama_cpp.llama_context_params.from_buffer_copy(llm.context_params)
        params.n_ctx = n_seq * ctx_seq
        params.n_seq_max = n_seq
        params.kv_unified = False  # one stream per sequence: cell layout as when alone
        if threads is not None:
            params.n_threads = params.n_threads_batch = threads
        self.threads = params.n_threads
        self.ctx = llama_cpp.llama_init_from_model(llm._model.model, params)
        if not self.ctx:
            raise RuntimeError(f"llama.cpp could not create a context for {n_seq} sequences "
                               f"of {ctx_seq} tokens")
        self.mem = llama_cpp.llama_get_memory(self.ctx)
        self.batch = llama_cpp.llama_batch_init(max(self.n_batch, n_seq), 0, 1)
        self.vocab = llm._model.vocab
        self.slots = [Slot(i, self) for i in range(n_seq)]
        self.stats: dict[str, Any] = {}
        """Counters for benchmarks and tests: decode steps, their widest batch, steps per
        width (`widths`: {width: steps}), tokens decoded in steps, prompt tokens evaluated,
        prompt tokens reused from the cache, cross-slot prefix copies, seconds in step
        decodes and in single-sequence evaluations (prompts and appended cues)."""
        self.reset_stats()

    def reset_stats(self) -> None:
        """Zero the counters of `stats`."""
        self.stats = {"steps": 0, "widest": 0, "widths": {}, "step_tokens": 0,
                      "prompt_tokens": 0, "reused_tokens": 0, "copies": 0, "step_s": 0.0,
                      "eval_s": 0.0}

    def close(self) -> None:
        """Free the context and the batch."""
        import llama_cpp

        if self.ctx:
            for slot in self.slots:
                self._release(slot)
            llama_cpp.llama_batch_free(self.batch)
            llama_cpp.llama_free(self.ctx)
            self.ctx = None

    # ------------------------------------------------------------ low level

    def _fill(self, entries: Sequence[tuple[int, int, int, bool]]) -> None:
        batch = self.batch
        batch.n_tokens = len(entries)
        for i, (token, pos, seq, logits) in enumerate(entries):
            batch.token[i] = token
            batch.pos[i] = pos
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = seq
            batch.logits[i] = logits

    def _decode(self) -> None:
        import llama_cpp

        status = llama_cpp.llama_decode(self.ctx, self.batch)
        if status != 0:
            raise RuntimeError(f"llama_decode returned {status}")

    def _truncate(self, slot: Slot, keep: int) -> None:
        """Keep the first `keep` cached positions of the slot's sequence (all of them go
        where the cache cannot be cut there, as on a sliding-window model)."""
        import llama_cpp

        if keep < len(slot.ids):
            if not llama_cpp.llama_memory_seq_rm(self.mem, slot.seq_id, keep, -1):
                llama_cpp.llama_memory_seq_rm(self.mem, slot.seq_id, 0, -1)
                keep = 0
            del slot.ids[keep:]
        slot.reusable = min(slot.reusable, keep)

    def _evaluate(self, slot: Slot, ids: Sequence[int]) -> int:
        """Evaluate `ids` after the slot's cache as batches of this sequence alone.

        Returns the batch index of the last token (its logits are the only ones computed).
        """
        started = time.perf_counter()
        for start in range(0, len(ids), self.n_batch):
            chunk = ids[start:start + self.n_batch]
            base = len(slot.ids)
            last = start + len(chunk) >= len(ids)
            self._fill([(t, base + i, slot.seq_id, last and i == len(chunk) - 1)
                        for i, t in enumerate(chunk)])
            self._decode()
            slot.ids.extend(chunk)
        self.stats["eval_s"] += time.perf_counter() - started
        return (len(ids) - 1) % self.n_batch

    def _release(self, slot: Slot) -> None:
        import llama_cpp

        if slot.chain is not None:
            llama_cpp.llama_sampler_free(slot.chain)
            slot.chain = None

    # ------------------------------------------------------------ scheduling

    def _place(self, slot: Slot, context: Sequence[int]) -> None:
        """Leave in the slot's cache the longest batch-evaluated prefix it may reuse.

        As in `LlamaCppBackend._keep_reusable_prefix`: only positions filled by a batch
        evaluation, and never so many that fewer than two prompt tokens are left.
        """
        import llama_cpp

        limit = len(context) - 2
        if not self.prefix_reuse:
            self._truncate(slot, 0)
            return
        own = min(common_prefix(slot.ids, context), slot.reusable, limit)
        best, source = own, None
        for other in self.slots:
            if other is slot:
                continue
            shared = min(common_prefix(other.ids, context), other.reusable, limit)
            if shared >= best + COPY_MIN_TOKENS:
                best, source = shared, other
        if source is not None:
            # Cross-stream copy: the whole stream buffer (same cells, same positions).
            llama_cpp.llama_memory_seq_cp(self.mem, source.seq_id, slot.seq_id, -1, -1)
            slot.ids = list(source.ids)
            slot.reusable = source.reusable
            self.stats["copies"] += 1
        self._truncate(slot, max(best, 0))
        self.stats["reused_tokens"] += len(slot.ids)

    def _admit(self, slot: Slot, job: BatchJob) -> None:
        job.started = time.perf_counter()
        context = list(job.context_ids)
        self._place(slot, context)
        reused = len(slot.ids)
        index = self._evaluate(slot, context[reused:])
        self.stats["prompt_tokens"] += len(context) - reused
        slot.reusable = len(context)
        slot.job = job
        slot.tokens, slot.steps, slot.finish = [], [], None
        slot.chain = build_sampler(job.sampler, self.n_vocab)
        self._sample(slot, index)

    def _sample(self, slot: Slot, index: int) -> None:
        """Record the watched logits at batch row `index`, sample, and apply the stop rules."""
        import llama_cpp

        job = slot.job
        assert job is not None
        slot.steps.append(read_watched(self.ctx, index, self.n_vocab, job.watch_ids))
        token = llama_cpp.llama_sampler_sample(slot.chain, self.ctx, index)
        if llama_cpp.llama_vocab_is_eog(self.vocab, token):
            slot.finish, slot.next_token = "stop", None
            return
        slot.tokens.append(token)
        if len(slot.tokens) >= job.max_tokens:
            slot.finish, slot.next_token = "length", None
        else:
            slot.next_token = token

    def run(self, jobs: Iterable[BatchJob],
            on_finished: Callable[[BatchJob, Decoded | BaseException, Slot], None],
            should_stop: Callable[[], bool] | None = None) -> bool:
        """Decode every job, up to `n_seq` at once, in the order given.

        `jobs` is read lazily, one job each time a slot is free (several decoders may
        draw from one shared source). `on_finished(job, decoded_or_error, slot)` is called
        as each sequence ends, before its slot takes the next job (so it may call
        `slot.next_logits`). `should_stop` is polled before each job is admitted and
        before each decode step; when it says stop, sequences in flight are dropped
        (nothing of them is reported). Polling per step matters for a small run: once
        every job is admitted no slot is free, and a poll on admission alone would let
        the whole batch decode to its end (a cancel in the TUI then "let it finish").

        Returns:
            True when stopped early.
        """
        source = iter(jobs)
        exhausted = False
        active: list[Slot] = []
        while not exhausted or active:
            for slot in self.slots:
                if slot.job is not None or exhausted:
                    continue
                if should_stop is not None and should_stop():
                    for busy in active:
                        self.reset_slot(busy)
                    return True
                job = next(source, None)
                if job is None:
                    exhausted = True
                    break
                try:
                    self._admit(slot, job)
                except Exception as exc:  # noqa: BLE001 - reported per job, stored as 'error'
                    self.reset_slot(slot)
                    on_finished(job, exc, slot)
                    continue
                if slot.finish is not None:
                    self._finish(slot, on_finished)
                else:
                    active.append(slot)
            if not active:
                continue
            if should_stop is not None and should_stop():
                for busy in active:
                    self.reset_slot(busy)
                return True
            self._fill([(_next_token(s), len(s.ids), s.seq_id, True) for s in active])
            self.stats["steps"] += 1
            self.stats["step_tokens"] += len(active)
            self.stats["widest"] = max(self.stats["widest"], len(active))
            widths = self.stats["widths"]
            widths[len(active)] = widths.get(len(active), 0) + 1
            started = time.perf_counter()
            try:
                self._decode()
                self.stats["step_s"] += time.perf_counter() - started
            except Exception as exc:  # noqa: BLE001 - every sequence of the batch failed
                for slot in active:
                    job = slot.job
                    assert job is not None  # an active slot decodes a job
                    self.reset_slot(slot)
                    on_finished(job, exc, slot)
                active = []
                continue
            # Sample every row before any finished sequence appends its cue: that is a
            # new llama_decode, which overwrites the logits of this step.
            for row, slot in enumerate(active):
                slot.ids.append(_next_token(slot))
                self._sample(slot, row)
            for slot in active:
                if slot.finish is not None:
                    self._finish(slot, on_finished)
            active = [slot for slot in active if slot.job is not None]
        return False

    def _finish(self, slot: Slot, on_finished: Callable[..., None]) -> None:
        job = slot.job
        decoded = Decoded(tuple(slot.tokens), slot.finish or "length", tuple(slot.steps))
        self._release(slot)
        try:
            on_finished(job, decoded, slot)
        finally:
            slot.job, slot.next_token = None, None

    def reset_slot(self, slot: Slot) -> None:
        """Forget a slot's sequence (after an error or a stop)."""
        self._release(slot)
        self._truncate(slot, 0)
        slot.job, slot.next_token, slot.finish = None, None, None
