"""`workbench.present.progress`: per-block rate, ETA and clock, with times given by hand."""

from __future__ import annotations

from workbench.engine.events import BlockProgress, RunnerProgress, StageStarted
from workbench.models.events import ModelLoaded
from workbench.present.progress import ProgressModel, clock, per_second, time_left


def test_clock_is_hours_minutes_seconds():
    assert clock(0) == "0:00:00"
    assert clock(59.6) == "0:01:00"  # to the nearest second
    assert clock(3725) == "1:02:05"  # 1 h, 2 min, 5 s
    assert clock(-3) == "0:00:00" and clock(None) == "–"
    assert per_second(0, 10) is None and per_second(3, 0) is None
    assert per_second(3, 12) == 0.25 and time_left(6, 0.25) == 24.0
    assert time_left(6, None) is None


def test_rate_and_eta_count_this_sessions_jobs_since_the_stage_began():
    model = ProgressModel()
    model.start_stage(100.0)
    model.update("M", 2, 10, at=105.0)  # 2 stored by an earlier run: not counted
    model.update("M", 6, 10, at=120.0)
    view = model.view("M", at=120.0)
    # 4 counted in 20 s (from the stage's start at 100) = 0.2/s; 4 left -> 20 s.
    assert (view.counted, view.rate, view.eta_s) == (4, 0.2, 20.0)
    assert view.rate_text() == "   0.20 jobs/s" and view.eta_text() == "ETA 0:00:20"
    # Nothing new by 140: 4 in 40 s = 0.1/s, 40 s to go (an average, recomputed per draw).
    assert model.view("M", at=140.0).eta_text() == "ETA 0:00:40"
    model.update("M", 10, 10, at=150.0)
    done = model.view("M", at=500.0)  # finished: frozen at 150
    assert (done.rate, done.eta_s, done.took_s) == (0.16, None, 50.0)  # 8 in 50 s
    assert done.eta_text() == "done in 0:00:50"


def test_a_block_planned_late_counts_from_the_next_stage_or_model_load():
    model = ProgressModel()
    model.start_stage(0.0)
    model.update("baseline", 1, 1, at=10.0)
    model.update("F", 0, 4, at=30.0)  # planned at the end of stage 1
    assert model.view("F", at=30.0).eta_text() == "ETA -:--:--"
    model.apply(StageStarted("stage 2", "m", 4), at=40.0)
    model.apply(RunnerProgress("stage 2", "m", ModelLoaded("m", 20.0)), at=60.0)
    model.apply(BlockProgress("F", 1, 4), at=70.0)
    # F counts from the model's load at 60: 1 in 10 s, 3 left -> 30 s (from stage 1's
    # start it would read 1 in 70 s and 3:30).
    assert model.view("F", at=70.0).eta_text() == "ETA 0:00:30"
    # The finished baseline kept its own time: 1 in 10 s.
    assert model.view("baseline", at=70.0).took_s == 10.0


def test_a_block_already_done_and_one_planned_into_again():
    model = ProgressModel()
    model.update("baseline", 5, 5, at=3.0)  # a resumed run: all stored before
    assert model.view("baseline", at=9.0).eta_text() == "done"
    assert model.view("baseline", at=9.0).rate_text() == ""
    model.update("judge", 2, 2, at=4.0)
    model.update("judge", 2, 3, at=6.0)  # one more job planned into it
    view = model.view("judge", at=8.0)
    assert view.took_s is None and view.eta_text() == "ETA -:--:--"
    assert [v.block for v in model.views(at=8.0)] == ["baseline", "judge"]
    assert model.counts() == {"baseline": (5, 5), "judge": (2, 3)}
