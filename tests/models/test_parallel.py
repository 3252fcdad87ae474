"""The work split between decoders (fast: stand-in decoders; the real ones are in test_batching)."""

from __future__ import annotations

import threading
import time

import pytest

from store.errors import UserError
from workbench.models.arrangement import choose_arrangement, decoders_that_fit
from workbench.models.batch import BatchJob
from workbench.models.parallel import WorkShares, job_costs, run_decoders, split_shares
from workbench.models.request import Sampler


def _job(ids, max_tokens=10, tag=None) -> BatchJob:
    return BatchJob(tuple(ids), Sampler(max_tokens=max_tokens), max_tokens, (), tag=tag)


def test_costs_count_only_the_prompt_tokens_not_shared_with_the_job_before() -> None:
    jobs = [_job(range(30)), _job(range(30)), _job([*range(27), 99, 98, 97])]
    # 10 + 30/3; 10 + 0; 10 + 3/3 (27 shared)
    assert job_costs(jobs) == pytest.approx([20.0, 10.0, 11.0])


def test_shares_are_contiguous_and_about_equal() -> None:
    assert split_shares([1] * 10, 2) == [range(0, 5), range(5, 10)]
    assert split_shares([9, 1, 1, 1, 1, 1], 2) == [range(0, 1), range(1, 6)]
    assert split_shares([1, 1], 3) == [range(0, 1), range(1, 2), range(2, 2)]
    assert split_shares([], 2) == [range(0, 0), range(0, 0)]
    shares = split_shares([3, 1, 4, 1, 5, 9, 2, 6], 3)
    assert [i for share in shares for i in share] == list(range(8))


def test_a_decoder_out_of_work_steals_from_the_back_of_the_fullest_share() -> None:
    jobs = [_job([i], tag=i) for i in range(6)]
    shares = WorkShares(jobs, 2)  # [0, 1, 2] and [3, 4, 5]
    assert [shares.take(0).tag for _ in range(3)] == [0, 1, 2]
    assert shares.take(1).tag == 3
    assert shares.take(0).tag == 5  # the back of decoder 1's share
    assert shares.take(0).tag == 4
    assert shares.take(0) is None and shares.take(1) is None
    assert shares.stolen == 2


class StandIn:
    """Runs jobs one by one on its own thread, like `BatchDecoder.run`."""

    def __init__(self, delay: float = 0.0, crash_on: int | None = None) -> None:
        self.delay, self.crash_on, self.threads, self.done = delay, crash_on, set(), []

    def run(self, jobs, on_finished, should_stop=None) -> bool:
        for job in jobs:
            if should_stop is not None and should_stop():
                return True
            if job.tag == self.crash_on:
                raise RuntimeError("decoder broke")
            time.sleep(self.delay)
            self.threads.add(threading.get_ident())
            self.done.append(job.tag)
            on_finished(job, job.tag, None)
        return False


def test_every_job_is_decoded_once_and_rows_are_stored_on_the_calling_thread() -> None:
    decoders = [StandIn(0.002), StandIn(0.01)]
    stored, where = [], set()

    def deliver(row) -> None:
        where.add(threading.get_ident())
        stored.append(row)

    jobs = [_job([i % 3, i], tag=i) for i in range(40)]
    stopped = run_decoders(decoders, jobs, lambda job, result, slot: ("row", result), deliver)
    assert not stopped
    assert sorted(tag for _, tag in stored) == list(range(40))
    assert where == {threading.get_ident()}  # SQLite is only touched here
    assert all(d.done for d in decoders)  # both decoders worked
    assert not (decoders[0].threads | decoders[1].threads) & where


def test_a_stop_reaches_every_decoder_and_a_crash_is_raised_here() -> None:
    decoders = [StandIn(0.01), StandIn(0.01)]
    stored = []
    stopped = run_decoders(decoders, [_job([i], tag=i) for i in range(200)],
                           lambda job, result, slot: result, stored.append,
                           should_stop=lambda: len(stored) >= 4, poll_s=0.005)
    assert stopped and 4 <= len(stored) < 200
    with pytest.raises(RuntimeError, match="decoder broke"):
        run_decoders([StandIn(crash_on=7), StandIn(crash_on=7)], [_job([i], tag=i) for i in range(10)],
                     lambda job, result, slot: result, lambda row: None)


def test_one_decoder_per_core_on_a_cpu_one_with_every_thread_on_a_gpu(monkeypatch) -> None:
    monkeypatch.delenv("PAW_DECODERS", raising=False)
    assert choose_arrangement(2, 8).describe() == "2 decoders × 1 thread × 8 sequences"
    assert choose_arrangement(1, 8).describe() == "1 decoder × 1 thread × 8 sequences"
    assert choose_arrangement(8, 4, gpu_layers=-1).describe() == \
        "1 decoder × 8 threads × 4 sequences"
    monkeypatch.setenv("PAW_DECODERS", "2")
    assert (choose_arrangement(8, 8).decoders, choose_arrangement(8, 8).threads) == (2, 4)
    monkeypatch.setenv("PAW_DECODERS", "two")
    with pytest.raises(UserError, match="PAW_DECODERS: expected a whole number"):
        choose_arrangement(2, 8)


def test_decoders_are_capped_by_the_memory_their_caches_need() -> None:
    # 8 streams × 1,024 cells × 23,040 B (the embedded model) = 188.7 MB per decoder.
    assert decoders_that_fit(2, 8, 1024, 23_040, 4 * 10**9) == 2
    assert decoders_that_fit(4, 8, 1024, 23_040, 600 * 10**6) == 1  # 300 MB for caches
    # A 7-8B model: 8 × 4,096 × 128 KiB = 4 GiB per decoder; half of 16 GiB holds two.
    assert decoders_that_fit(8, 8, 4096, 131_072, 16 * 2**30) == 2
    assert decoders_that_fit(3, 8, 1024, 23_040, None) == 3
