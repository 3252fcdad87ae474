"""The lower bound every benchmark reports PAW against: the workload's minimum tokens at this
machine's raw llama.cpp rates, both measured here, by the benchmark itself.

- **Minimum work** (`minimum_work`), from the generations a run stored: the prompt tokens
  that must be evaluated even with perfect prefix sharing (the number of nodes of the trie
  of every context: chat prompt + continued chain), the answer cues appended after an
  output (their tokens are evaluated too), and the tokens decoded (every output token is
  one decode step).
- **Raw rates** (`raw_rates`): llama-cpp-python's low-level API only (`llama_decode` on
  contexts made with `llama_init_from_model`; no sampling, no Python per token beyond
  filling the batch). Prompt evaluation: real contexts of the workload in chunks of 512,
  logits for the last token only. Decoding: `width` sequences per `llama_decode`, the timed
  steps centred on the workload's mean decoded position (attention costs grow with it),
  logits for every row (as decoding needs them). Each
  arrangement of the cores is measured — one context with every thread, and one 1-thread
  context per core running at once — and the bound takes the best of them for prompts and
  for decoding separately (so it is a bound for any arrangement, PAW's included).
- **The limit** (`limit_seconds`): model load (measured bare) + minimum prompt and cue
  tokens / best prompt rate + decoded tokens / best decode rate over every arrangement
  and every width measured (`LIMIT_WIDTHS`, unless a width is named): the machine's
  bound, not the bound at the width PAW happens to use. Nothing PAW does is free in it:
  not the self-check, not the width measurement, not a narrower batch at the end of a
  stage, not a prompt evaluated twice.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass


LIMIT_WIDTHS = (1, 2, 4, 8, 16, 32)
"""Decode widths the benches measure for the bound (PAW's own candidates, and 32)."""


@dataclass(frozen=True)
class Work:
    """The minimum a workload needs from llama.cpp."""

    generations: int
    context_tokens: int
    unique_prompt_tokens: int
    cue_tokens: int
    decoded_tokens: int
    median_context: int
    decode_position: int
    """Mean position of a decoded token (what a decode step's attention spans)."""


def _trie_size(sequences: Sequence[Sequence[int]]) -> int:
    """Distinct prefixes of the sequences (nodes of their trie, the root not counted)."""
    size, previous = 0, ()
    for seq in sorted(tuple(s) for s in sequences):
        shared = 0
        for a, b in zip(previous, seq):
            if a != b:
                break
            shared += 1
        size += len(seq) - shared
        previous = seq
    return size


def minimum_work(generations: Sequence, tokenize: Callable[[str, bool], list[int]]) -> Work:
    """The minimum work behind stored generations (`store.generations.Generation` rows).

    Args:
        generations: the rows (not 'error').
        tokenize: `tokenize(text, special)` with the model's vocabulary.
    """
    contexts, cues, decoded, positions = [], 0, 0, 0.0
    for gen in generations:
        context = tuple(tokenize(gen.prompt, True)) + tuple(gen.prefix_token_ids or ())
        contexts.append(context)
        out = len(gen.output_token_ids or ())
        decoded += out
        positions += out * (len(context) + out / 2)
        if gen.option_logits and gen.option_logits.get("position") == "appended":
            before = (gen.prefix or "") + (gen.output or "")
            separator = "" if not before or before[-1].isspace() else "\n"
            cues += len(tokenize(separator + "Answer:", False))
    return Work(len(contexts), sum(map(len, contexts)), _trie_size(contexts), cues, decoded,
                int(statistics.median(len(c) for c in contexts)) if contexts else 0,
                int(positions / decoded) if decoded else 0)


@dataclass(frozen=True)
class Rate:
    """Tokens per second of one arrangement (contexts × threads each) for one kind of work.

    `tokens_per_cpu_s`: tokens per CPU second of this process (all its threads) while it
    ran: on a machine shared with other work, wall rates fall with the load, CPU rates far
    less, so CPU ratios stay meaningful where wall ratios do not.
    """

    kind: str
    contexts: int
    threads: int
    width: int
    tokens_per_s: float
    tokens_per_cpu_s: float = 0.0


def process_cpu() -> float:
    """CPU seconds of this process so far (user + system, every thread)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _contexts(llm, count: int, threads: int, n_seq: int, cells: int) -> list:
    import llama_cpp

    made = []
    for _ in range(count):
        params = llama_cpp.llama_context_params.from_buffer_copy(llm.context_params)
        params.n_ctx, params.n_seq_max, params.kv_unified = n_seq * cells, n_seq, False
        params.n_batch = params.n_ubatch = 512
        params.n_threads = params.n_threads_batch = threads
        made.append(llama_cpp.llama_init_from_model(llm._model.model, params))
    return made


def _decode(ctx, batch, entries) -> None:
    import llama_cpp

    batch.n_tokens = len(entries)
    for i, (token, pos, seq, logits) in enumerate(entries):
        batch.token[i], batch.pos[i], batch.n_seq_id[i] = token, pos, 1
        batch.seq_id[i][0], batch.logits[i] = seq, logits
    if llama_cpp.llama_decode(ctx, batch) != 0:
        raise RuntimeError("llama_decode failed")


def _prompt_work(ctx, prompts: Sequence[Sequence[int]]) -> int:
    import llama_cpp

    batch = llama_cpp.llama_batch_init(512, 0, 1)
    mem = llama_cpp.llama_get_memory(ctx)
    tokens = 0
    for ids in prompts:
        llama_cpp.llama_memory_seq_rm(mem, 0, 0, -1)
        for first in range(0, len(ids), 512):
            chunk = ids[first:first + 512]
            _decode(ctx, batch, [(t, first + i, 0, i == len(chunk) - 1)
                                 for i, t in enumerate(chunk)])
        tokens += len(ids)
    llama_cpp.llama_batch_free(batch)
    return tokens


def _fill_streams(ctx, prompt: Sequence[int], width: int) -> None:
    """Evaluate `prompt` into each of `width` streams (untimed: decoding starts after it)."""
    import llama_cpp

    batch = llama_cpp.llama_batch_init(512, 0, 1)
    for seq in range(width):
        for first in range(0, len(prompt), 512):
            chunk = prompt[first:first + 512]
            _decode(ctx, batch, [(t, first + i, seq, False) for i, t in enumerate(chunk)])
    llama_cpp.llama_batch_free(batch)


def _decode_work(ctx, prompt: Sequence[int], width: int, steps: int) -> tuple[int, float]:
    """Time `steps` decode steps of `width` sequences after `prompt`."""
    import llama_cpp

    batch = llama_cpp.llama_batch_init(max(512, width), 0, 1)
    token = prompt[-1]
    started = time.perf_counter()
    for step in range(steps):
        _decode(ctx, batch, [(token, len(prompt) + step, seq, True) for seq in range(width)])
    seconds = time.perf_counter() - started
    llama_cpp.llama_batch_free(batch)
    return width * steps, seconds


def _parallel(contexts: list, work: Callable) -> list:
    results: list = [None] * len(contexts)

    def run(i: int) -> None:
        results[i] = work(contexts[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(contexts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def raw_rates(model_path: str, cores: int, widths: Sequence[int],
              prompts: Sequence[Sequence[int]], context_length: int, steps: int = 48
              ) -> tuple[tuple[float, float], list[Rate]]:
    """Measure load time and raw prompt and decode rates on `cores` cores.

    Args:
        model_path: the GGUF file.
        cores: cores to use.
        widths: decode widths to measure.
        prompts: real contexts of the workload (each ≤ 512 tokens is typical).
        context_length: where decoding is measured: the timed steps are centred on it
            (the workload's mean decoded position, `Work.decode_position`).
        steps: decode steps timed per arrangement and width.

    Returns:
        ((seconds, CPU seconds) to load the model bare, the rates).
    """
    import llama_cpp
    from llama_cpp import Llama

    from workbench.models.backend import model_params, use_extra_buffers

    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as PAW sets it
    started, cpu = time.perf_counter(), process_cpu()
    with model_params(use_extra_buffers()):
        llm = Llama(model_path=model_path, n_ctx=256, n_batch=512, n_threads=1,
                    logits_all=False, verbose=False)
    load_s, load_cpu_s = time.perf_counter() - started, process_cpu() - cpu
    arrangements = [(1, cores)] + ([(cores, 1)] if cores > 1 else [])
    start = max(2, context_length - steps // 2)
    decode_prompt = (list(prompts[0]) * (start // max(1, len(prompts[0])) + 1))[:start]
    rates = []
    for count, threads in arrangements:
        cells = -(-(max(map(len, prompts)) + 2) // 256) * 256
        contexts = _contexts(llm, count, threads, 1, cells)
        started, cpu = time.perf_counter(), process_cpu()
        tokens = sum(_parallel(contexts, lambda ctx: _prompt_work(ctx, prompts)))
        rates.append(Rate("prompt", count, threads, 1, tokens / (time.perf_counter() - started),
                          tokens / max(1e-9, process_cpu() - cpu)))
        for ctx in contexts:
            llama_cpp.llama_free(ctx)
        for width in widths:
            cells = -(-(len(decode_prompt) + steps + 2) // 256) * 256
            contexts = _contexts(llm, count, threads, width, cells)
            _parallel(contexts, lambda ctx, w=width: _fill_streams(ctx, decode_prompt, w))
            cpu = process_cpu()
            done = _parallel(contexts, lambda ctx, w=width: _decode_work(ctx, decode_prompt, w,
                                                                       steps))
            tokens = sum(n for n, _ in done)
            # Parallel contexts: total tokens over the longest of their (simultaneous) times.
            rates.append(Rate("decode", count, threads, width, tokens / max(s for _, s in done),
                              tokens / max(1e-9, process_cpu() - cpu)))
            for ctx in contexts:
                llama_cpp.llama_free(ctx)
    llm.close()
    return (load_s, load_cpu_s), rates


def best(rates: Sequence[Rate], kind: str, width: int = 1) -> Rate:
    """The fastest arrangement for prompts (`kind` 'prompt') or decoding at `width`."""
    return max((r for r in rates if r.kind == kind and r.width == width),
               key=lambda r: r.tokens_per_s)


def best_decode(rates: Sequence[Rate], width: int | None = None, *, per_cpu: bool = False
                ) -> Rate:
    """The fastest decoding arrangement at `width`, or over every measured width (None);
    by tokens per CPU second when `per_cpu`."""
    return max((r for r in rates if r.kind == "decode" and width in (None, r.width)),
               key=lambda r: r.tokens_per_cpu_s if per_cpu else r.tokens_per_s)


def limit_seconds(work: Work, load_s: float, rates: Sequence[Rate], width: int | None = None
                  ) -> float:
    """The lower bound in seconds: load + minimum prompt and cue tokens at the best prompt
    rate + decoded tokens at the best decode rate (over every measured width unless
    `width` is named)."""
    prompt = best(rates, "prompt").tokens_per_s
    decode = best_decode(rates, width).tokens_per_s
    return load_s + (work.unique_prompt_tokens + work.cue_tokens) / prompt + \
        work.decoded_tokens / decode


def limit_cpu_seconds(work: Work, load_cpu_s: float, rates: Sequence[Rate],
                      width: int | None = None) -> float:
    """The lower bound in CPU seconds: the same tokens at the least CPU per token any
    arrangement (and width, unless named) needed (what PAW's CPU seconds are compared with
    on a loaded machine)."""
    prompt = max(r.tokens_per_cpu_s for r in rates if r.kind == "prompt")
    decode = best_decode(rates, width, per_cpu=True).tokens_per_cpu_s
    return load_cpu_s + (work.unique_prompt_tokens + work.cue_tokens) / prompt + \
        work.decoded_tokens / decode


def bound_text(rates: Sequence[Rate]) -> str:
    """Which arrangement and width the bound's decode rate came from, and the widths tried."""
    top = best_decode(rates)
    widths = sorted({r.width for r in rates if r.kind == "decode"})
    return (f"bound decodes at width {top.width} ({top.contexts} context(s) x {top.threads} "
            f"thread(s), {top.tokens_per_s:.1f} tok/s), the best of widths "
            f"{', '.join(map(str, widths))}")


def describe_rates(rates: Sequence[Rate]) -> list[str]:
    """Lines for the report: every arrangement's rate."""
    return [f"  {r.kind:6s} width {r.width:2d}: {r.contexts} context(s) x {r.threads} "
            f"thread(s): {r.tokens_per_s:7.1f} tok/s ({r.tokens_per_cpu_s:6.1f} per CPU s)"
            for r in rates]


def load_average() -> str:
    """The 1/5/15-minute load averages, for every figure printed."""
    return "/".join(f"{x:.2f}" for x in os.getloadavg())
