"""The batching self-check: the same probe decoded alone and inside a batch must give the same bits.

Run when a model is loaded for batched decoding. The probe is `n_seq + 1` short prompts
(so one slot is reused, and two prompts share a long prefix so one slot copies another's
cache), greedy except one seeded sample at temperature 0.8, 1 to 8 tokens each (the batch
narrows through every width), then the answer cue appended on top of each output. All
are decoded in the batch; four are also decoded alone and compared: the two present at
every width, the sampled one, and the one admitted into a reused slot. Alone means
`LlamaCppBackend.generate` and
`next_logits` on a fresh cache, one sequence per `llama_decode` — the path every stored
generation before batching took. Compared: the output token ids, and at every step the
watched label logits and the logsumexp over the whole vocabulary (one changed bit in any
of the ~49k logits changes it). Only if all are identical does the runner batch.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from workbench.models.batch import BatchDecoder, BatchJob
from workbench.models.request import Sampler

PROBE_TOKENS = 8
"""Tokens decoded by the longest probe sequence (the others stop earlier, so the batch
narrows step by step and every width from `n_seq` down to 1 is decoded)."""

_SHARED = ("A 54-year-old woman presents to the emergency department with two hours of "
           "chest pressure radiating to the jaw, sweating and nausea. ")
_TAILS = ("What is the next step?", "Which test comes first?", "Name the likely diagnosis.",
          "What would you give now?", "Is she stable?", "What does the ECG show?",
          "Who should see her?", "What is the risk?")


@dataclass(frozen=True)
class BatchVerdict:
    """Whether batched decoding reproduced one-at-a-time decoding bit for bit."""

    identical: bool
    n_seq: int
    detail: str
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        """What is stored in the model's metadata (`batch_check`)."""
        return {"identical": self.identical, "n_seq": self.n_seq, "detail": self.detail,
                "seconds": round(self.seconds, 2)}


LONG_REPEATS = 9
"""The probes are cut from the clinical text repeated this often (~260 tokens): their
lengths spread from ~190 to ~265 tokens, across llama.cpp's 256-cell padding of the
attended KV length, as real prompts do."""


def _probe_prompts(n: int) -> list[str]:
    text = _SHARED * LONG_REPEATS
    prompts = []
    for k in range(n):
        tail = _TAILS[k % len(_TAILS)]
        # Prompts 0 and 1 share the whole text (the cross-slot copy); the others are cut
        # to lengths 60 characters apart, so sequences of different lengths, some crossing
        # 256 cells while decoding, share each batch. Short probes (20–35 tokens) did not
        # show what these do: on Gemma 3 270M batched decoding changed bits (step 1 of a
        # 251-token probe) while all-short probes decoded identically.
        prompts.append(text + tail if k < 2 else text[: 700 + 60 * k] + " " + tail)
    return prompts


def check_batching(backend: Any, n_seq: int) -> BatchVerdict:
    """Decode the probe alone and in a batch of `n_seq` sequences; compare every bit.

    Args:
        backend: a loaded `LlamaCppBackend`.
        n_seq: the batch width to check.

    Returns:
        The verdict (never raises for a mismatch; a llama.cpp failure is a mismatch too).
    """
    started = time.perf_counter()
    prompts = [backend.tokenize(text, special=False) for text in _probe_prompts(n_seq + 1)]
    watch = sorted({backend.tokenize(s, special=False)[0] for s in (" A", " B", "A", "B")})
    cue = backend.tokenize("\nAnswer:", special=False)
    lengths = [PROBE_TOKENS - k % (PROBE_TOKENS - 1) for k in range(len(prompts))]
    samplers = [Sampler(max_tokens=n) if k != 1 else Sampler(temperature=0.8, seed=7, max_tokens=n)
                for k, n in enumerate(lengths)]

    # Decoded alone: the probes that stay in the batch longest (0 and 7: every width from
    # n_seq down to 1), the sampled one (1) and the one that reuses a slot (the last).
    compared = sorted({0, 1, min(7, n_seq - 1), n_seq})
    alone = {}
    for k in compared:
        ids, sampler = prompts[k], samplers[k]
        backend.reset()
        decoded = backend.generate(ids, sampler, sampler.max_tokens, watch)
        alone[k] = (decoded, backend.next_logits(ids + list(decoded.token_ids) + cue, watch))
    backend.reset()

    batched: dict[int, Any] = {}

    def finished(job: BatchJob, decoded: Any, slot: Any) -> None:
        if isinstance(decoded, BaseException):
            batched[job.tag] = decoded
            return
        ids = list(job.context_ids) + list(decoded.token_ids) + cue
        batched[job.tag] = (decoded, slot.next_logits(ids, watch))

    ctx_seq = max(len(p) for p in prompts) + PROBE_TOKENS + len(cue) + 2
    try:
        decoder = BatchDecoder(backend.llm, n_seq, ctx_seq,
                               prefix_cache_safe=backend.prefix_cache_safe)
    except Exception as exc:  # noqa: BLE001 - a context that cannot be made means no batching
        return BatchVerdict(False, n_seq, f"no batch context: {exc}",
                            time.perf_counter() - started)
    try:
        decoder.run([BatchJob(ids, s, s.max_tokens, watch, tag=k)
                     for k, (ids, s) in enumerate(zip(prompts, samplers))], finished)
    finally:
        decoder.close()
    mismatches = []
    for k, expected in alone.items():
        got = batched.get(k)
        if isinstance(got, BaseException):
            mismatches.append(f"probe {k}: {type(got).__name__}: {got}")
        elif got != expected:
            mismatches.append(f"probe {k}: {_first_difference(expected, got)}")
    seconds = time.perf_counter() - started
    if mismatches:
        return BatchVerdict(False, n_seq, "; ".join(mismatches[:3]), seconds)
    return BatchVerdict(True, n_seq, f"{len(alone)} of {len(prompts)} batched probes (up to "
                        f"{PROBE_TOKENS} tokens) identical to alone (ids, label logits, "
                        "vocabulary logsumexp)", seconds)


def _first_difference(expected: Any, got: Any) -> str:
    (dec_a, cue_a), (dec_b, cue_b) = expected, got
    if dec_a.token_ids != dec_b.token_ids:
        return f"tokens differ ({list(dec_a.token_ids)} vs {list(dec_b.token_ids)})"
    for step, (a, b) in enumerate(zip(dec_a.steps, dec_b.steps)):
        if a != b:
            return f"step {step}: logsumexp {a.logsumexp!r} vs {b.logsumexp!r}"
    if cue_a != cue_b:
        return f"appended cue: logsumexp {cue_a.logsumexp!r} vs {cue_b.logsumexp!r}"
    return "finish reason differs"
