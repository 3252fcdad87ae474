"""The CLI's bars and the Runs screen's live panel draw one progress model: the same events at
the same (hand-set) times give the same rate and ETA text in both."""

from __future__ import annotations

import io
import re

from tests.cli.test_flips_cli import ANSI
from tests.cli.test_progress import Clock, Tty, drawn_bars
from workbench.engine.events import AuditPlanned, BlockProgress, RunnerProgress, StageStarted
from workbench.cli.progress import ProgressReporter
from workbench.models.events import ModelLoaded
from workbench.tui.live import LiveRun
from workbench.tui.screens.runs import live_text

EVENTS = [  # (time in s, event), as the engine sends them for a small audit
    (0.0, AuditPlanned("a", ("m/cot",), 2, {"baseline": 2, "M": 4}, {}, {})),
    (0.0, BlockProgress("baseline", 0, 2)),
    (0.0, BlockProgress("M", 0, 4)),
    (1.0, StageStarted("stage 1", "m", 6)),
    (11.0, RunnerProgress("stage 1", "m", ModelLoaded("m", 10.0))),
    (21.0, BlockProgress("baseline", 1, 2)),
    (31.0, BlockProgress("baseline", 2, 2)),
    (41.0, BlockProgress("M", 1, 4)),
    (51.0, BlockProgress("M", 2, 4)),
    (51.0, BlockProgress("F", 0, 2)),  # planned at the end of stage 1
    (56.0, StageStarted("stage 2", "m", 2)),
]

# By hand, drawn at 61 s: the model loaded at 11, so every block counts from there;
# baseline: 2 done by 31 -> 2 in 20 s = 0.10/s, done in 0:00:20;
# M: 2 in the 50 s to 61 = 0.04/s, 2 left -> 50 s;
# F: restarted at stage 2 (56), nothing done -> no rate, ETA unknown.
EXPECTED = {"baseline": ("0.10 jobs/s", "done in 0:00:20"),
            "M": ("0.04 jobs/s", "ETA 0:00:50"),
            "F": ("", "ETA -:--:--")}

ROW = re.compile(r"^\s*(baseline|M|F)\b.*?(\d+\.\d\d jobs/s)?\s*(ETA \S+|done in \S+|done)\s*$")


def _rates_and_etas(text: str) -> dict[str, tuple[str, str]]:
    found = {}
    for line in ANSI.sub("", text).splitlines():
        match = ROW.match(line)
        if match:
            found[match.group(1)] = (match.group(2) or "", match.group(3))
    return found


def test_cli_bars_and_runs_screen_show_the_same_rate_and_eta():
    cli_clock, ui_clock = Clock(), Clock()
    live = LiveRun(time_source=ui_clock)
    with ProgressReporter(Tty(), time_source=cli_clock) as progress:
        for at, event in EVENTS:
            cli_clock.t = ui_clock.t = at
            progress(event)
            live.apply(event)
        cli_clock.t = ui_clock.t = 61.0
        cli = _rates_and_etas(drawn_bars(progress))
    ui = _rates_and_etas(live_text(live.snapshot()))
    assert cli == ui == EXPECTED
    assert "0:01:01" in live_text(live.snapshot())  # the run's clock: 61 s, H:MM:SS


def test_a_piped_reporter_still_counts_blocks():
    stream = io.StringIO()
    progress = ProgressReporter(stream, time_source=Clock())
    for _, event in EVENTS[:9]:
        progress(event)
    assert progress.model.counts() == {"baseline": (2, 2), "M": (2, 4)}
    assert "━" not in stream.getvalue()
