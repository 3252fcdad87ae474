"""Batched decoding in the runner: settle the self-check verdict, then run the work on the decoders.

`settle_verdict` finds the verdict for this model file, build, CPU, threads and width in the
store (`workbench.models.verdicts`), or runs the self-check on the decoders the run will
use and stores what it found. A sliding-window model reuses cached prefixes in its
decoders only when `PAW_SWA_PREFIX_REUSE=1` asks for it *and* the self-check shows that
identical to one-at-a-time decoding (which always evaluates such a model's prompts
fresh); otherwise its decoders evaluate every prompt fresh too.

`run_batched` decodes the work on the arrangement's decoders (`workbench.models.parallel`),
turning each finished sequence into its row on the decoder's thread and storing rows on the
caller's.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol

import sqlite_utils

from store.generations import NewGeneration
from store.records import ModelRecord
from workbench.models.arrangement import (
    Arrangement,
    available_memory,
    decoder_cells,
    decoders_that_fit,
)
from workbench.models.batch import DEFAULT_BATCH_SIZE, BatchJob, Slot
from workbench.models.decoded import Decoded
from workbench.models.execute import (
    Prepared,
    Tokenized,
    cue_room,
    error_row,
    finish_generation,
    plan_decode,
)
from workbench.models.parallel import run_decoders
from workbench.models.request import GenerationRequest
from workbench.models.selfcheck import BatchVerdict, Probe, check_batching, probe_requests
from workbench.models.verdicts import covers, fingerprint, record_verdict, stored_verdict
from workbench.models.width import (
    WidthChoice,
    choice_key,
    measure_widths,
    record_choice,
    stored_choice,
)


class Runner(Protocol):
    """What the batching setup needs of `workbench.models.runner.Runner`."""

    db: sqlite_utils.Database
    model: ModelRecord
    gpu_layers: int

    @property
    def backend(self) -> Any:
        """The loaded backend."""

    def prepare(self, request: GenerationRequest) -> Prepared:
        """Render and key a request."""

    def tokenize(self, prepared: Prepared) -> Tokenized:
        """Token ids of a prepared request."""

    @property
    def arrangement(self) -> Arrangement:
        """Decoders × threads × width of the run."""


Progress = Callable[[str, int, int], None]
"""(phase, probes done, probes) while the self-check runs."""


def swa_prefix_reuse_requested() -> bool:
    """`PAW_SWA_PREFIX_REUSE=1`: try prefix reuse in a sliding-window model's decoders."""
    return os.environ.get("PAW_SWA_PREFIX_REUSE", "").strip().lower() in ("1", "true", "yes",
                                                                          "on")


def _probes(runner: Runner, width: int) -> list[Probe]:
    backend = runner.backend

    def detokenize(ids) -> str:
        return b"".join(backend.piece(t) for t in ids).decode("utf-8", errors="replace")

    probes = []
    for request in probe_requests(width, lambda text: backend.tokenize(text, special=False),
                                  detokenize):
        tok = runner.tokenize(runner.prepare(request))
        plan = plan_decode(runner.backend, tok)
        cue = runner.backend.tokenize("\n" + tok.prepared.rendered.cue, special=False)
        probes.append(Probe(tok.context_ids, request.sampler, tuple(plan.watch_ids),
                            tuple(cue)))
    return probes


def _decoder_count(backend: Any, arrangement: Arrangement, ctx_seq: int) -> int:
    return decoders_that_fit(arrangement.decoders, arrangement.width, ctx_seq,
                             backend.kv_bytes_per_cell(), available_memory())


def measure_verdict(runner: Runner, arrangement: Arrangement, *, reuse: bool | None = None,
                    progress: Progress | None = None) -> BatchVerdict:
    """Run the self-check now on the arrangement's decoders (nothing is stored).

    Args:
        runner: whose model and prompts (its backend is loaded).
        arrangement: decoders × threads × width to check.
        reuse: prefix reuse in the decoders (default: whether the model is safe for it).
        progress: told each probe done (`selfcheck.check_batching`).
    """
    backend = runner.backend
    probes = _probes(runner, arrangement.width)
    need = decoder_cells(max(len(p.context_ids) + p.sampler.max_tokens + len(p.cue_ids) + 2
                             for p in probes), backend.n_ctx)
    decoders = backend.batch_decoders(
        _decoder_count(backend, arrangement, need), arrangement.width, need,
        threads=arrangement.threads, prefix_reuse=reuse)
    return check_batching(backend, decoders, probes, progress)


def machine_arrangement(arrangement: Arrangement, gpu_layers: int) -> Arrangement:
    """The arrangement a self-check measures: the run's, widened to as many decoders of its
    threads as the machine has cores (on a CPU), so the stored verdict covers any later run
    of the same threads and width on this machine, not only this run's decoder count."""
    if gpu_layers:
        return arrangement
    cores = os.cpu_count() or 1
    return replace(arrangement, decoders=max(arrangement.decoders,
                                             cores // max(1, arrangement.threads)))


def _verdict(runner: Runner, backend: Any, arrangement: Arrangement, reuse: bool,
             progress: Progress | None = None) -> BatchVerdict:
    key = fingerprint(runner.model, threads=arrangement.threads, width=arrangement.width,
                      gpu_layers=runner.gpu_layers, prefix_reuse=reuse,
                      extra_buffers=bool(getattr(backend, "extra_buffers", False)))
    wanted = arrangement.decoders
    known = backend.__dict__.setdefault("batch_verdicts", {})  # one check per loaded model
    verdict = known.get(key)
    if verdict is None or not covers(verdict, wanted):
        verdict = stored_verdict(runner.db, runner.model, key, wanted)
    if verdict is None:
        verdict = measure_verdict(runner, machine_arrangement(arrangement, runner.gpu_layers),
                                  reuse=reuse, progress=progress)
    if stored_verdict(runner.db, runner.model, key, verdict.decoders) is None:
        record_verdict(runner.db, runner.model, key, verdict, gpu_layers=runner.gpu_layers)
    known[key] = verdict
    return verdict


def settle_width(runner: Runner, backend: Any) -> WidthChoice:
    """The batch width for this runner: stored for this machine, or measured now on the
    machine's decoders (`machine_arrangement`) and stored (`workbench.models.width`)."""
    arrangement = machine_arrangement(runner.arrangement, runner.gpu_layers)
    verdict_key = fingerprint(runner.model, threads=arrangement.threads, width=0,
                              gpu_layers=runner.gpu_layers, prefix_reuse=False,
                              extra_buffers=bool(getattr(backend, "extra_buffers", False)))
    key = choice_key(verdict_key, arrangement.decoders)
    known = backend.__dict__.setdefault("width_choices", {})  # once per loaded model
    stored = stored_choice(runner.db, runner.model, key)
    choice = known.get(key) or stored
    if choice is None:
        prompt = _probes(runner, 1)[0].context_ids
        try:
            choice = measure_widths(backend, arrangement.decoders, arrangement.threads, prompt)
        except RuntimeError as exc:  # llama.cpp could not make or run a context: not stored
            return WidthChoice(DEFAULT_BATCH_SIZE, {}, arrangement.decoders,
                               arrangement.threads, 0.0, None, 0.0,
                               {0: f"measurement failed ({exc}); default width"})
    if stored is None:
        record_choice(runner.db, runner.model, key, choice)
    known[key] = choice
    return choice


def settle_verdict(runner: Runner, backend: Any, arrangement: Arrangement,
                   progress: Progress | None = None) -> BatchVerdict:
    """The batching verdict for this runner's arrangement: stored, or measured now (on
    `machine_arrangement`'s decoders) and stored.

    Args:
        runner: whose model, store, prompts and settings.
        backend: the loaded `LlamaCppBackend`.
        arrangement: decoders × threads × width to check.
        progress: told each probe done while a check runs.

    Returns:
        The verdict (`identical` False: decode one at a time).
    """
    # Both must allow it: the registered flag and the loaded model's own answer.
    safe = runner.model.prefix_cache_safe and backend.prefix_cache_safe
    if not safe and swa_prefix_reuse_requested():
        verdict = _verdict(runner, backend, arrangement, reuse=True, progress=progress)
        if verdict.identical:
            return verdict
    return _verdict(runner, backend, arrangement, reuse=safe, progress=progress)


def run_batched(backend: Any, arrangement: Arrangement, verdict: BatchVerdict,
                work: list[Tokenized], model_id: int,
                record: Callable[[Tokenized, NewGeneration], None],
                should_stop: Callable[[], bool] | None) -> bool:
    """Decode `work` (in its order) on the arrangement's decoders; True if stopped.

    Args:
        backend: the loaded `LlamaCppBackend`.
        arrangement: decoders × threads × width (as checked).
        verdict: the passed self-check (its prefix-reuse setting is used).
        work: tokenized requests in the runner's order.
        model_id: stored with each row.
        record: stores a row (called on this thread only).
        should_stop: polled on this thread.
    """
    jobs, need = [], 0
    for tok in work:
        plan = plan_decode(backend, tok)
        jobs.append(BatchJob(tok.context_ids, tok.prepared.request.sampler, plan.max_new,
                             plan.watch_ids, tag=(tok, plan)))
        need = max(need, len(tok.context_ids) + plan.max_new
                   + cue_room(backend, tok.prepared.rendered.cue) + 1)
    need = decoder_cells(need, backend.n_ctx)
    count = min(_decoder_count(backend, arrangement, need), len(jobs), verdict.decoders)
    decoders = backend.batch_decoders(count, arrangement.width, need,
                                      threads=arrangement.threads,
                                      prefix_reuse=verdict.prefix_reuse)

    def finish(job: BatchJob, result: Decoded | BaseException, slot: Slot
               ) -> tuple[Tokenized, NewGeneration]:
        tok, plan = job.tag
        if isinstance(result, BaseException):
            return tok, error_row(tok, model_id, result, job.started)
        return tok, finish_generation(backend, tok, model_id, plan, result, slot.next_logits,
                                      job.started, reset=lambda: slot.decoder.reset_slot(slot))

    return run_decoders(decoders, jobs, finish, lambda done: record(*done), should_stop)
