"""The batch width chosen by measuring this machine: decode rates at each width PAW may use.

On first use of a model (per model file, llama.cpp build, CPU, threads per decoder, decoders,
GPU layers and weight repacking: the batching verdict's fingerprint plus the decoder count),
`measure_widths` times raw `llama_decode` steps at every width in `CANDIDATE_WIDTHS` on the
arrangement's decoders, all at once as the run decodes, and `pick_width` takes the width
with the most decoded tokens per second. The choice and its rates are stored in the
model's metadata (`width_checks`, latest as `width_check`) and reused by every later run on
the same machine; `paw models` and the run's first lines state them.

The measurement (`bench/limit.py`'s raw decode probe, made short): one prompt of
`POSITION` tokens evaluated once per decoder (its cells then restored into each width's
context and copied into every stream), then `WARMUP_STEPS` untimed steps and about
`STEP_BUDGET_S` of timed decode steps of every stream, widths visited twice (narrow to
wide, then wide to narrow) so a change in the machine's load during the measurement does
not favour one end.

The choice changes only speed, never a result: batching is used only at a width whose
self-check (`workbench.models.selfcheck`) found it bit-identical to one at a time, and
that check runs at the chosen width; where it finds a difference, up to `FALLBACK_WIDTHS`
narrower widths are checked, fastest first, before decoding one at a time. A `--batch`
given by the user wins over the choice.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import sqlite_utils

from store.db import dumps
from store.models import model_metadata
from store.records import ModelRecord
from workbench.models.arrangement import MEMORY_SHARE, available_memory

CANDIDATE_WIDTHS = (1, 2, 4, 8, 16)
"""Widths measured (sequences per decoder per `llama_decode`)."""

POSITION = 320
"""Context tokens before the timed steps (about where the demo's decoding happens)."""

WARMUP_STEPS = 1
MIN_STEPS = 2
MAX_STEPS = 64
STEP_BUDGET_S = 0.2
"""Each width is visited twice; each visit times decode steps for about this long (at least
`MIN_STEPS`, at most `MAX_STEPS`), so the measurement is bounded on any model."""

NARROWER_WITHIN = 0.03
"""A narrower width within this share of the best rate is taken instead: a wider batch
pays at the end of every stage, where fewer sequences are left than it holds."""

WIDTH_VERSION = 1
"""Part of the stored choice's key: a new measurement invalidates stored choices."""

KEEP_CHOICES = 16

FALLBACK_WIDTHS = 2
"""Narrower widths self-checked, fastest first, when the chosen width's check differs."""


@dataclass(frozen=True)
class WidthChoice:
    """The width picked by measuring, with the decode rate measured at each width.

    `rates`: decoded tokens per second over all the decoders at once, per width.
    `stored_at`: when a stored choice was measured (None: measured now).
    """

    width: int
    rates: dict[int, float]
    decoders: int
    threads: int
    seconds: float
    stored_at: str | None = None
    cpu_seconds: float = 0.0
    skipped: dict[int, str] = field(default_factory=dict)

    def fallbacks(self, width: int) -> list[int]:
        """Narrower widths to check when `width`'s self-check found a difference: the
        fastest first, at most `FALLBACK_WIDTHS` of them, width 1 excluded (a 1-sequence
        decoder is what one at a time already is)."""
        narrower = sorted((w for w in self.rates if 1 < w < width),
                          key=lambda w: -self.rates[w])
        return narrower[:FALLBACK_WIDTHS]

    def rates_text(self) -> str:
        """'w1 51.2, w2 60.3, …, w16 80.4 tok/s'."""
        return ", ".join(f"w{w} {r:.1f}" for w, r in sorted(self.rates.items())) + " tok/s"

    @property
    def message(self) -> str:
        """One line for `paw models` and a run's progress."""
        if not self.rates:
            return f"batch width {self.width}: {'; '.join(self.skipped.values())}"
        when = f"measured {self.stored_at}, stored for this machine" if self.stored_at else \
            f"measured now in {self.seconds:.1f} s"
        on = (f"{self.decoders} decoder{'s' * (self.decoders != 1)} × {self.threads} "
              f"thread{'s' * (self.threads != 1)}")
        return (f"batch width {self.width} chosen by measuring ({on}: {self.rates_text()}; "
                f"{when})")

    def as_dict(self) -> dict[str, Any]:
        """What is stored in the model's metadata."""
        return {"width": self.width, "rates": {str(w): round(r, 2) for w, r in
                                                sorted(self.rates.items())},
                "decoders": self.decoders, "threads": self.threads,
                "seconds": round(self.seconds, 2), "cpu_seconds": round(self.cpu_seconds, 2),
                "skipped": {str(w): why for w, why in self.skipped.items()},
                "version": WIDTH_VERSION}

    @classmethod
    def from_dict(cls, data: dict[str, Any], stored_at: str | None) -> WidthChoice:
        """A stored choice."""
        return cls(int(data["width"]), {int(w): float(r) for w, r in data["rates"].items()},
                   int(data["decoders"]), int(data["threads"]), float(data.get("seconds", 0)),
                   stored_at, float(data.get("cpu_seconds", 0)),
                   {int(w): str(why) for w, why in data.get("skipped", {}).items()})


def pick_width(rates: dict[int, float]) -> int:
    """The narrowest width within `NARROWER_WITHIN` of the best measured rate."""
    best = max(rates.values())
    return min(w for w, r in rates.items() if r >= best * (1 - NARROWER_WITHIN))


def choice_key(verdict_key: str, decoders: int) -> str:
    """The key a choice is stored under: the batching verdict's fingerprint (computed with
    width 0: model, build, CPU, threads, GPU layers, repacking) plus decoders."""
    payload = f"{verdict_key}:{decoders}:{WIDTH_VERSION}"
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def stored_choice(db: sqlite_utils.Database, model: ModelRecord, key: str
                  ) -> WidthChoice | None:
    """The choice stored under `key`, or None."""
    entry = model_metadata(db, model.id).get("width_checks", {}).get(key)
    return None if entry is None else WidthChoice.from_dict(entry, entry.get("checked_at"))


def latest_choice(db: sqlite_utils.Database, model: ModelRecord) -> WidthChoice | None:
    """The model's latest stored choice (for `paw models`), or None."""
    entry = model_metadata(db, model.id).get("width_check")
    return None if entry is None else WidthChoice.from_dict(entry, entry.get("checked_at"))


def record_choice(db: sqlite_utils.Database, model: ModelRecord, key: str,
                  choice: WidthChoice) -> None:
    """Store a measured choice under its key, and as the model's latest."""
    metadata = model_metadata(db, model.id)
    entry = {**choice.as_dict(), "key": key,
             "checked_at": datetime.now(UTC).isoformat(timespec="seconds")}
    checks = {k: v for k, v in metadata.get("width_checks", {}).items() if k != key}
    checks[key] = entry
    metadata["width_checks"] = dict(list(checks.items())[-KEEP_CHOICES:])
    metadata["width_check"] = entry
    with db.conn:
        db.execute("UPDATE models SET metadata_json = ? WHERE id = ?",
                   [dumps(metadata), model.id])


def _cells(width: int, steps: int) -> int:
    return -(-(POSITION + WARMUP_STEPS + steps + 2) // 256) * 256 * width


def measure_widths(backend: Any, decoders: int, threads: int, prompt: Sequence[int],
                   widths: Sequence[int] = CANDIDATE_WIDTHS) -> WidthChoice:
    """Time decode steps at each width on `decoders` contexts of `threads` threads at once.

    Args:
        backend: the loaded `LlamaCppBackend` (its model; its contexts are not touched).
        decoders: contexts decoding at once (the run's arrangement on this machine), each
            on its own thread, meeting at a barrier before each width.
        threads: threads of each.
        prompt: real token ids (repeated to `POSITION` tokens).
        widths: widths to measure (one whose KV cache does not fit in memory is skipped).
    """
    import threading

    ids = (list(prompt) * (POSITION // max(1, len(prompt)) + 1))[:POSITION]
    started, cpu_started = time.perf_counter(), time.process_time()
    skipped: dict[int, str] = {}
    available = available_memory()
    fit = []
    for width in widths:
        need = decoders * _cells(width, MAX_STEPS) * backend.kv_bytes_per_cell()
        if width > 1 and available is not None and need > available * MEMORY_SHARE:
            skipped[width] = f"{need / 1e6:.0f} MB of KV cache does not fit"
        else:
            fit.append(width)
    visits = fit + list(reversed(fit))
    tokens = [{w: 0 for w in fit} for _ in range(decoders)]
    seconds = [{w: 0.0 for w in fit} for _ in range(decoders)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(decoders)

    def sweep(index: int) -> None:
        try:
            _sweep(backend, threads, ids, visits, barrier, tokens[index], seconds[index])
        except BaseException as exc:  # noqa: BLE001 - re-raised on the caller's thread
            errors.append(exc)
            barrier.abort()

    workers = [threading.Thread(target=sweep, args=(i,), daemon=True) for i in range(decoders)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if errors:
        raise errors[0]
    rates = {w: sum(tokens[d][w] / seconds[d][w] for d in range(decoders)) for w in fit}
    return WidthChoice(pick_width(rates), rates, decoders, threads,
                       time.perf_counter() - started, None,
                       time.process_time() - cpu_started, skipped)


def _context(backend: Any, width: int, threads: int) -> Any:
    import llama_cpp

    params = llama_cpp.llama_context_params.from_buffer_copy(backend.llm.context_params)
    params.n_ctx, params.n_seq_max, params.kv_unified = _cells(width, MAX_STEPS), width, False
    params.n_batch = params.n_ubatch = 512
    params.n_threads = params.n_threads_batch = threads
    ctx = llama_cpp.llama_init_from_model(backend.llm._model.model, params)
    if not ctx:
        raise RuntimeError(f"could not make a decode context of width {width}")
    return ctx


def _sweep(backend: Any, threads: int, ids: Sequence[int], visits: Sequence[int],
           barrier: Any, tokens: dict[int, int], seconds: dict[int, float]) -> None:
    """One decoder's measurement: the prompt evaluated once (its KV cells then restored into
    each width's context), each width timed for `STEP_BUDGET_S` after the others are ready."""
    import ctypes

    import llama_cpp

    batch = llama_cpp.llama_batch_init(512, 0, 1)

    def decode(ctx: Any, entries: list[tuple[int, int, int, bool]]) -> None:
        batch.n_tokens = len(entries)
        for i, (token, pos, seq, logits) in enumerate(entries):
            batch.token[i], batch.pos[i], batch.n_seq_id[i] = token, pos, 1
            batch.seq_id[i][0], batch.logits[i] = seq, logits
        if llama_cpp.llama_decode(ctx, batch) != 0:
            raise RuntimeError("llama_decode failed while measuring batch widths")

    state = None
    try:
        for width in visits:
            ctx = _context(backend, width, threads)
            try:
                if state is None:
                    for first in range(0, len(ids), 512):
                        chunk = ids[first:first + 512]
                        decode(ctx, [(t, first + i, 0, False) for i, t in enumerate(chunk)])
                    size = llama_cpp.llama_state_seq_get_size(ctx, 0)
                    state = (ctypes.c_uint8 * size)()
                    llama_cpp.llama_state_seq_get_data(ctx, state, size, 0)
                else:
                    llama_cpp.llama_state_seq_set_data(ctx, state, len(state), 0)
                mem = llama_cpp.llama_get_memory(ctx)
                for seq in range(1, width):
                    llama_cpp.llama_memory_seq_cp(mem, 0, seq, -1, -1)
                token, pos = ids[-1], len(ids)
                barrier.wait()
                for _ in range(WARMUP_STEPS):
                    decode(ctx, [(token, pos, seq, True) for seq in range(width)])
                    pos += 1
                began, steps = time.perf_counter(), 0
                while steps < MIN_STEPS or (steps < MAX_STEPS and
                                            time.perf_counter() - began < STEP_BUDGET_S):
                    decode(ctx, [(token, pos, seq, True) for seq in range(width)])
                    pos, steps = pos + 1, steps + 1
                seconds[width] += time.perf_counter() - began
                tokens[width] += width * steps
            finally:
                llama_cpp.llama_free(ctx)
    finally:
        llama_cpp.llama_batch_free(batch)
