"""The batching self-check: each batch decoder gives, at every width, one-at-a-time decoding's bits.

Run when a model is loaded for batched decoding (unless a verdict for the same model file,
llama.cpp build, CPU, threads and width is stored: `workbench.models.verdicts`). The probe
is `n_seq + 1` chain-of-thought continuations of one clinical vignette, rendered with the
model's own chat template and continued from the first 2 to ~90 tokens of a written chain
("Step 1: The chest pressure …"), so no probe can end on its first token: a bare-text probe
made the embedded model emit end-of-generation at once, and the first version of this check
compared no multi-sequence step at all. The contexts (~230–320 tokens) straddle llama.cpp's
256-cell padding of the attended KV length, some crossing it while decoding; each is a
prefix of the longer ones, so slots copy each other's cache (two continue the same tokens);
the last one reuses a freed slot; one is sampled at temperature 0.8 with a seed and one
carries a repeat penalty. Budgets are staggered (`PROBE_TOKENS` + `PROBE_STAGGER` per rank)
so the batch narrows one sequence at a time through every width from `n_seq` down to 1,
then the answer cue is appended on top of each output.

Every probe is decoded on every decoder of the arrangement first (all at once, one thread
each, as the run will) and then alone — `LlamaCppBackend.generate` and `next_logits`, one
sequence per `llama_decode`, the path every generation took before batching; the two never
run at once, so the check occupies no more cores than the run. The one-at-a-time decode
compares every step as it decodes it and the check stops at the first difference. Compared
for every probe at every step: the output token ids, the watched label logits and the
logsumexp over the whole vocabulary (one changed bit in any of the ~49k logits changes it),
and the same at the appended cue. The verdict counts the multi-sequence steps compared per
width and refuses batching when any width from 2 to `n_seq` was never compared.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from store.records import Item
from workbench.models.batch import BatchDecoder, BatchJob
from workbench.models.request import GenerationRequest, Sampler

PROBE_VERSION = 3
"""Part of the stored verdict's fingerprint: a new probe invalidates stored verdicts."""

PROBE_TOKENS = 16
"""Tokens decoded by the probe that finishes first (and by the one in the reused slot)."""

PROBE_STAGGER = 2
"""Each longer probe decodes this many more tokens, so every width gets its own steps."""

PROBE_TEMPLATE = "neutral_cot@1"

_QUESTION = (
    "A 54-year-old woman presents to the emergency department with two hours of chest "
    "pressure radiating to the jaw. She is sweating and nauseated and rates the pain eight "
    "out of ten. She has hypertension, type 2 diabetes and a 30 pack-year smoking history. "
    "An ECG shows 2 mm ST elevation in leads II, III and aVF. What is the most appropriate "
    "next step?")
_OPTIONS = {"A": "Aspirin and emergent coronary angiography",
            "B": "Intravenous heparin and observation",
            "C": "CT angiography of the chest",
            "D": "Discharge with outpatient stress testing"}
_CHAIN = (
    "Step 1: The chest pressure radiates to the jaw and comes with sweating and nausea, "
    "which points to an acute coronary syndrome.\nStep 2: ST elevation in the inferior "
    "leads II, III and aVF means an inferior myocardial infarction, most likely from the "
    "right coronary artery.\nStep 3: Her risk factors (hypertension, diabetes, smoking) "
    "make this even more likely, and the pain began only two hours ago, well inside the "
    "window for reperfusion.\nStep 4:")
CHAIN_SPREAD = 90
"""The probes continue the first 2 to ~90 tokens of one chain: their contexts (a prompt of
~230 tokens plus the chain cut) spread across 256 cells, and each is a prefix of the
longer ones, so the whole probe costs one prompt evaluation (slots copy each other)."""


def probe_budgets(n_seq: int) -> list[int]:
    """Decode budgets of the `n_seq + 1` probes: staggered, the last (reused slot) shortest."""
    return [PROBE_TOKENS + PROBE_STAGGER * (n_seq - 1 - k) for k in range(n_seq)] + [PROBE_TOKENS]


def probe_requests(n_seq: int, tokenize: Callable[[str], list[int]],
                   detokenize: Callable[[Sequence[int]], str]) -> list[GenerationRequest]:
    """The probe as requests (the runner renders them with the model's chat template).

    Probe k continues the chain's first tokens, longest first; probes 0 and 1 continue the
    same ones (1 is the seeded sample: a cross-slot copy), 2 carries a repeat penalty.

    Args:
        n_seq: the width checked (`n_seq + 1` probes).
        tokenize: the model's tokenizer (plain text, no special tokens).
        detokenize: token ids back to text (the request's `prefix`).
    """
    chain = tokenize(_CHAIN)
    longest = min(CHAIN_SPREAD, len(chain))
    item = Item(source_id="selfcheck", kind="mcq", question=_QUESTION, options=_OPTIONS,
                gold="A")
    requests = []
    for k, budget in enumerate(probe_budgets(n_seq)):
        cut = longest if k < 2 else 2 + (longest - 2) * (n_seq + 1 - k) // (n_seq + 1)
        if k == 1:
            sampler = Sampler(temperature=0.8, seed=7, max_tokens=budget)
        elif k == 2:
            sampler = Sampler(repeat_penalty=1.1, max_tokens=budget)
        else:
            sampler = Sampler(max_tokens=budget)
        ids = tuple(chain[:cut])
        requests.append(GenerationRequest(item=item, mode="continue", template=PROBE_TEMPLATE,
                                          sampler=sampler, prefix=detokenize(ids),
                                          prefix_token_ids=ids))
    return requests


@dataclass(frozen=True)
class Probe:
    """One probe sequence ready to decode: its context ids, settings and watched label ids."""

    context_ids: tuple[int, ...]
    sampler: Sampler
    watch_ids: tuple[int, ...]
    cue_ids: tuple[int, ...]


@dataclass(frozen=True)
class BatchVerdict:
    """Whether batched decoding reproduced one-at-a-time decoding bit for bit.

    `identical` is True only when every probe on every decoder equalled its alone decode
    *and* every width from 2 to `n_seq` was compared at least once; `widths` holds the
    multi-sequence steps compared per width (on each decoder); `stored_at` is set when
    the verdict was read from the store instead of measured now.
    """

    identical: bool
    n_seq: int
    detail: str
    seconds: float
    widths: dict[int, int] = field(default_factory=dict)
    decoders: int = 1
    threads: int | None = None
    prefix_reuse: bool = True
    stored_at: str | None = None
    cpu_seconds: float = 0.0
    """CPU time the check took, over every thread of the process (0: not recorded)."""

    @property
    def compared_steps(self) -> int:
        """Multi-sequence decode steps compared, over all decoders."""
        return sum(steps for width, steps in self.widths.items() if width > 1) * self.decoders

    def as_dict(self) -> dict[str, Any]:
        """What is stored in the model's metadata."""
        return {"identical": self.identical, "n_seq": self.n_seq, "detail": self.detail,
                "seconds": round(self.seconds, 2),
                "widths": {str(w): n for w, n in sorted(self.widths.items())},
                "compared_steps": self.compared_steps, "decoders": self.decoders,
                "threads": self.threads, "prefix_reuse": self.prefix_reuse,
                "cpu_seconds": round(self.cpu_seconds, 2), "probe_version": PROBE_VERSION}

    @classmethod
    def from_dict(cls, data: dict[str, Any], stored_at: str | None) -> BatchVerdict:
        """A stored verdict (`as_dict` plus the settings it was recorded with)."""
        return cls(bool(data["identical"]), int(data["n_seq"]), str(data["detail"]),
                   float(data.get("seconds", 0.0)),
                   {int(w): int(n) for w, n in data.get("widths", {}).items()},
                   int(data.get("decoders", 1)), data.get("threads"),
                   bool(data.get("prefix_reuse", True)), stored_at,
                   float(data.get("cpu_seconds", 0.0)))


def check_batching(backend: Any, decoders: Sequence[BatchDecoder], probes: Sequence[Probe],
                   progress: Callable[[str, int, int], None] | None = None) -> BatchVerdict:
    """Decode the probes on every decoder at once, then alone; stop at the first difference.

    The decoders run first (as the run will: all at once, each on its own cores); the
    reference (one sequence per `llama_decode` on the backend's own context) runs after
    them, never beside them, so the check occupies no more cores than the run. The reference
    compares every step as it decodes it against every decoder's step of the same probe and
    stops at the first difference, so a check that fails early pays the batched probes and
    the reference only up to that step.

    Args:
        backend: the loaded `LlamaCppBackend` (its own context decodes the probes alone).
        decoders: the decoders the run will use (same width each).
        probes: from `probe_requests(width)`, tokenized by the runner.
        progress: told ('batched', probes done, probes) as decoder 0 finishes each probe,
            then ('reference', probes done, probes) after each probe decoded alone.

    Returns:
        The verdict (never raises for a mismatch; a llama.cpp failure is a mismatch too).
    """
    started, cpu_started = time.perf_counter(), time.process_time()
    n_seq = decoders[0].n_seq
    tell = progress or (lambda phase, done, total: None)
    batched: list[dict[int, Any]] = [{} for _ in decoders]
    widths: list[dict[int, int]] = [{} for _ in decoders]

    def on_decoder(index: int) -> None:
        decoder, results = decoders[index], batched[index]
        decoder.reset_stats()

        def finished(job: BatchJob, decoded: Any, slot: Any) -> None:
            if isinstance(decoded, BaseException):
                results[job.tag] = decoded
                return
            probe = probes[job.tag]
            ids = list(probe.context_ids) + list(decoded.token_ids) + list(probe.cue_ids)
            results[job.tag] = (decoded, slot.next_logits(ids, probe.watch_ids))
            if index == 0:
                tell("batched", len(results), len(probes))

        try:
            decoder.run([BatchJob(p.context_ids, p.sampler, p.sampler.max_tokens, p.watch_ids,
                                  tag=k) for k, p in enumerate(probes)], finished)
        except Exception as exc:  # noqa: BLE001 - a decoder that fails means no batching
            results[-1] = exc
        widths[index] = dict(decoder.stats["widths"])
        decoder.reset_stats()

    threads = [threading.Thread(target=on_decoder, args=(i,), daemon=True)
               for i in range(len(decoders))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    where = [f"decoder {i}: " if len(decoders) > 1 else "" for i in range(len(decoders))]
    first = next((f"{where[i]}{_failure(r)}" for i, r in enumerate(batched)
                  if _failure(r) is not None), None)
    backend.reset()
    for k, probe in enumerate(probes):  # alone, comparing every step as it is decoded
        if first is not None:
            break
        theirs = [results[k] for results in batched]
        found: list[str] = []

        def stop_at(step: int, watched: Any, token: int, k: int = k, theirs: Any = theirs,
                    found: list[str] = found) -> bool:
            for i, (decoded, _) in enumerate(theirs):
                if step >= len(decoded.steps) or decoded.steps[step] != watched:
                    mine = decoded.steps[step].logsumexp if step < len(decoded.steps) \
                        else "nothing (it had ended)"
                    found.append(f"{where[i]}probe {k}: step {step}: logsumexp "
                                 f"{watched.logsumexp!r} alone vs {mine!r} batched")
                    return True
            return False

        decoded = backend.generate(probe.context_ids, probe.sampler, probe.sampler.max_tokens,
                                   probe.watch_ids, stop_at=stop_at)
        if found:
            first = found[0]
            break
        ids = list(probe.context_ids) + list(decoded.token_ids) + list(probe.cue_ids)
        alone = (decoded, backend.next_logits(ids, probe.watch_ids))
        for i, got in enumerate(theirs):
            if got != alone:
                first = f"{where[i]}probe {k}: {_first_difference(alone, got)}"
                break
        tell("reference", k + 1, len(probes))
    backend.reset()
    seconds = time.perf_counter() - started
    settings: dict[str, Any] = {"decoders": len(decoders), "threads": decoders[0].threads,
                                "prefix_reuse": decoders[0].prefix_reuse,
                                "cpu_seconds": time.process_time() - cpu_started}
    compared = widths[0]
    if first is not None:
        return BatchVerdict(False, n_seq, f"{first} (stopped at this first difference)",
                            seconds, compared, **settings)
    unchecked = [w for w in range(2, n_seq + 1) if any(not ws.get(w) for ws in widths)]
    if unchecked:
        return BatchVerdict(False, n_seq, "nothing to compare: the probes never decoded "
                            f"{', '.join(map(str, unchecked))} sequences at once (steps per "
                            f"width: {_widths_text(compared)})", seconds, compared, **settings)
    steps = sum(n for w, n in compared.items() if w > 1)
    tokens = sum(len(decoded.token_ids) for decoded, _ in batched[0].values())
    on = f" on each of {len(decoders)} decoders" if len(decoders) > 1 else ""
    return BatchVerdict(True, n_seq, f"{len(probes)} probes ({tokens} tokens){on} identical to "
                        f"one at a time in ids, label logits and vocabulary logsumexp over "
                        f"{steps} multi-sequence steps (per width: {_widths_text(compared)})",
                        seconds, compared, **settings)


def _failure(results: dict[int, Any]) -> str | None:
    """What failed on a decoder (the decoder itself, or a probe), or None."""
    if -1 in results:
        return f"{type(results[-1]).__name__}: {results[-1]}"
    for k, got in sorted(results.items()):
        if isinstance(got, BaseException):
            return f"probe {k}: {type(got).__name__}: {got}"
    return None


def _widths_text(widths: dict[int, int]) -> str:
    return ", ".join(f"{w}: {n}" for w, n in sorted(widths.items(), reverse=True)) or "none"


def _first_difference(expected: Any, got: Any) -> str:
    (dec_a, cue_a), (dec_b, cue_b) = expected, got
    # Up to the shorter decode; a difference in length shows in the token ids below.
    for step, (a, b) in enumerate(zip(dec_a.steps, dec_b.steps, strict=False)):
        if a != b:
            return f"step {step}: logsumexp {a.logsumexp!r} vs {b.logsumexp!r}"
    if dec_a.token_ids != dec_b.token_ids:
        return f"tokens differ ({list(dec_a.token_ids)} vs {list(dec_b.token_ids)})"
    if cue_a != cue_b:
        return f"appended cue: logsumexp {cue_a.logsumexp!r} vs {cue_b.logsumexp!r}"
    return "finish reason differs"
