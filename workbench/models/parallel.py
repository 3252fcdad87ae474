"""Several batch decoders at once, one per core: the work split among them, the caller stores rows.

On a CPU the engine runs one 1-thread `BatchDecoder` per core rather than one context with
every thread (measured in docs/runner.md: llama.cpp's threads meet at a barrier after each
operation, which a small model's decode step cannot amortise). Each decoder runs in its own
thread; `llama_decode` releases the GIL, so the decoders compute in parallel and only the
Python between steps (sampling, reading the watched logits, parsing) takes turns.

The split keeps prefix reuse: the runner's order puts requests that share a prefix side by
side, so each decoder gets one contiguous share of that order (shares balanced by an
estimate of their cost) and takes from its front; a decoder whose share is done steals
from the back of the share with the most work left, where the owner would have arrived
last. Every result is bit-identical to one-at-a-time decoding whichever decoder made it
(the self-check compares each decoder), so the split changes when a row is stored, never
what it holds.

Rows are handed to the calling thread, which alone touches SQLite and the caller's
callbacks (`should_stop` included); decoders see a stop through an event.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from itertools import pairwise
from typing import Any, TypeVar

from workbench.models.batch import BatchDecoder, BatchJob, Slot
from workbench.models.decoded import Decoded, common_prefix

Row = TypeVar("Row")

PROMPT_COST = 1 / 3
"""Cost of evaluating one prompt token relative to decoding one token (the raw rates of
the reference machine: prompt ≈ 150 tok/s, decode steps ≈ 50–90 tok/s per thread); only
used to balance the shares, never in a result."""


def job_costs(jobs: Sequence[BatchJob]) -> list[float]:
    """Estimated cost of each job in the given order: its decode budget plus the prompt
    tokens it does not share with the job before it, weighted by `PROMPT_COST`."""
    costs: list[float] = []
    previous: Sequence[int] = ()
    for job in jobs:
        new = len(job.context_ids) - common_prefix(previous, job.context_ids)
        costs.append(job.max_tokens + PROMPT_COST * new)
        previous = job.context_ids
    return costs


def split_shares(costs: Sequence[float], count: int) -> list[range]:
    """Cut `range(len(costs))` into `count` contiguous shares of about equal cost.

    Args:
        costs: cost of each job, in order.
        count: number of shares (decoders).

    Returns:
        `count` ranges covering every index once, in order (some may be empty).
    """
    total = sum(costs)
    bounds, running, share = [0], 0.0, 1
    for index, cost in enumerate(costs):
        running += cost
        # Close a share once it holds its fair part (cut after the job that crosses it).
        while share < count and running >= total * share / count - 1e-9 * total:
            bounds.append(index + 1)
            share += 1
    bounds += [len(costs)] * (count + 1 - len(bounds))
    return [range(a, b) for a, b in pairwise(bounds)]


class WorkShares:
    """The jobs split into per-decoder shares; `take(d)` gives decoder d its next job."""

    def __init__(self, jobs: Sequence[BatchJob], count: int) -> None:
        costs = job_costs(jobs)
        self._lock = threading.Lock()
        self._shares = [deque((jobs[i], costs[i]) for i in share)
                        for share in split_shares(costs, count)]
        self._left = [sum(c for _, c in share) for share in self._shares]
        self.stolen = 0
        """Jobs a decoder took from another's share."""

    def take(self, decoder: int) -> BatchJob | None:
        """The next job for `decoder`: the front of its share, else the back of the
        share with the most work left; None when every share is empty."""
        with self._lock:
            own = self._shares[decoder]
            if own:
                job, cost = own.popleft()
                self._left[decoder] -= cost
                return job
            victim = max(range(len(self._shares)), key=lambda d: self._left[d])
            if not self._shares[victim]:
                return None
            job, cost = self._shares[victim].pop()
            self._left[victim] -= cost
            self.stolen += 1
            return job

    def source(self, decoder: int) -> Iterator[BatchJob]:
        """The jobs of `decoder`, drawn lazily (what `BatchDecoder.run` reads)."""
        while (job := self.take(decoder)) is not None:
            yield job


Finish = Callable[[BatchJob, Decoded | BaseException, Slot], Row]


def run_decoders(decoders: Sequence[BatchDecoder], jobs: Sequence[BatchJob],
                 finish: Finish[Row], deliver: Callable[[Row], None],
                 should_stop: Callable[[], bool] | None = None,
                 poll_s: float = 0.1) -> bool:
    """Decode `jobs` on every decoder at once; `deliver` each finished row on this thread.

    Args:
        decoders: the decoders (one thread each; with one, everything runs here).
        jobs: in the runner's order (shared prefixes side by side).
        finish: turns a finished sequence into a row, on the decoder's thread, while its
            slot still holds the sequence (it may append the answer cue there).
        deliver: stores a row; called on the calling thread only, in finishing order.
        should_stop: polled on the calling thread; True stops every decoder before it
            admits its next job (sequences in flight are dropped).
        poll_s: how often `should_stop` is polled while waiting for rows.

    Returns:
        True when stopped early.
    """
    if len(decoders) == 1:
        return decoders[0].run(jobs, lambda job, result, slot: deliver(finish(job, result, slot)),
                               should_stop)
    shares = WorkShares(jobs, len(decoders))
    rows: queue.Queue[tuple[str, Any]] = queue.Queue()
    stop = threading.Event()
    stopped = [False] * len(decoders)

    def work(index: int, decoder: BatchDecoder) -> None:
        try:
            stopped[index] = decoder.run(
                shares.source(index),
                lambda job, result, slot: rows.put(("row", finish(job, result, slot))),
                stop.is_set)
        except BaseException as exc:  # noqa: BLE001 - re-raised on the calling thread
            stop.set()
            rows.put(("crash", exc))
        finally:
            rows.put(("done", index))

    threads = [threading.Thread(target=work, args=(i, d), name=f"paw-decoder-{i}", daemon=True)
               for i, d in enumerate(decoders)]
    for thread in threads:
        thread.start()
    running, crash = len(threads), None
    try:
        while running:
            if should_stop is not None and not stop.is_set() and should_stop():
                stop.set()
            try:
                kind, payload = rows.get(timeout=poll_s)
            except queue.Empty:
                continue
            if kind == "row":
                deliver(payload)
            elif kind == "crash":
                crash = crash or payload
            else:
                running -= 1
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    if crash is not None:
        raise crash
    return any(stopped)
