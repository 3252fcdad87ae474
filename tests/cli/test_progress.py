"""The progress reporter on the real engine's events (fake model): plain lines on a pipe, rich
bars with rate and ETA on a terminal; and `paw import`'s bar for large files."""

from __future__ import annotations

import io
import re

from tests.cli.conftest import run_fake_audit
from tests.cli.test_flips_cli import ANSI, paw
from workbench.cli.progress import ProgressReporter, clock


class Tty(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_piped_progress_is_one_plain_line_per_stage(tmp_path):
    stream = io.StringIO()
    with ProgressReporter(stream) as progress:
        outcome = run_fake_audit(tmp_path / "paw.db", on_event=progress)
    text = stream.getvalue()
    assert not ANSI.search(text) and "━" not in text  # no bars, no escape codes
    lines = text.splitlines()
    assert lines[0].startswith(f"{outcome.audit}: 2 items x 1 arm(s) (fake/neutral_cot@1)")
    starts = [line for line in lines if re.fullmatch(r".+ \[fake\]: \d+ to generate", line)]
    ends = [line for line in lines if re.fullmatch(
        r".+ \[fake\]: \d+ generated in \d:\d\d:\d\d \(\d+\.\d\d gen/s, \d+\.\d tok/s\)", line)]
    assert [s.split(" [")[0] for s in starts] == ["stage 1", "stage 2", "judge"]
    assert [e.split(" [")[0] for e in ends] == ["stage 1", "stage 2", "judge"]
    assert "stage 1 [fake]: 12 to generate" in lines  # baseline, direct, 4 M, shuffle x 2
    assert any(line.startswith("baseline 2/2  direct 2/2  M 6/6") for line in lines)
    assert lines[-1].startswith("finished in ") and len(lines) < 20  # short logs


def test_terminal_progress_draws_bars_with_rate_and_eta(tmp_path):
    stream = Tty()
    with ProgressReporter(stream) as progress:
        assert progress.live
        run_fake_audit(tmp_path / "paw.db", on_event=progress)
    text = ANSI.sub("", stream.getvalue())
    assert "━" in text and "jobs/s" in text
    assert re.search(r"baseline +━+ +2/2 +[\d.]+ jobs/s done in \d:\d\d:\d\d", text)
    assert re.search(r"stage 1 \[fake\]: 12 generated in .* gen/s", text)


def test_status_line_has_rate_and_eta():
    from workbench.cli.progress import _Stage

    stage = _Stage("stage 1", "m", 10)
    stage.started -= 20.0  # 20 s ago
    stage.generated, stage.tokens = 4, 400
    # 4 in 20 s = 0.20 gen/s; 6 left -> 30 s.
    assert "4/10 gen  0.20 gen/s  20.0 tok/s  ETA 0:00:30" in stage.status()
    assert clock(3725) == "1:02:05"


def test_large_import_shows_progress_on_stderr(capsys, tmp_path, monkeypatch):
    from workbench.cli import data

    monkeypatch.setattr(data, "LARGE_IMPORT_BYTES", 0)  # every file counts as large
    source = tmp_path / "q.jsonl"
    source.write_text("".join(
        f'{{"id": "q{i}", "question": "Q{i}?", "options": {{"A": "x", "B": "y"}}, '
        f'"answer": "A"}}\n' for i in range(50)), encoding="utf-8")
    code, out, err = paw(capsys, "import", "jsonl", str(source), "--db",
                         str(tmp_path / "new.db"))
    assert code == 0, err
    assert out.startswith(f"{source}: 50 new items")
    assert err.splitlines()[0] == (f"importing {source}: 50 lines, checked and stored in "
                                   "one transaction")
    assert re.fullmatch(rf"imported {re.escape(str(source))} in \d+\.\d s",
                        err.splitlines()[-1])


class Clock:
    """A clock the test sets by hand (seconds)."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_a_block_planned_late_counts_its_rate_from_its_stage():
    from workbench.engine.events import AuditPlanned, BlockProgress, StageStarted

    clock_ = Clock()
    with ProgressReporter(Tty(), time_source=clock_) as progress:
        progress(AuditPlanned("a", ("m/cot",), 1, {"baseline": 1}, {}, {}))
        progress(BlockProgress("baseline", 0, 1))  # the engine reports every block once
        progress(StageStarted("stage 1", "m", 1))
        clock_.t = 10.0
        progress(BlockProgress("baseline", 1, 1))
        progress(BlockProgress("F", 0, 2))  # planned at the end of stage 1
        clock_.t = 20.0
        progress(StageStarted("stage 2", "m", 2))
        clock_.t = 30.0
        progress(BlockProgress("F", 1, 2))
        # F: 1 job in the 10 s since stage 2 began (not the 30 s since stage 1): 10 s to go.
        assert progress.model.view("F", clock_.t).eta_text() == "ETA 0:00:10"
        clock_.t = 99.0
        baseline = progress.model.view("baseline", clock_.t)
        assert baseline.eta_text() == "done in 0:00:10"  # finished: frozen
        bars = ANSI.sub("", drawn_bars(progress))
    assert re.search(r"F +━+ +1/2 +0\.01 jobs/s ETA 0:01:19", bars)  # 1 in 79 s by now
    assert re.search(r"baseline +━+ +1/1 +0\.10 jobs/s done in 0:00:10", bars)


def drawn_bars(progress: ProgressReporter) -> str:
    """The bars as the terminal shows them now."""
    from rich.console import Console

    bars = progress._bars()
    console = Console(file=io.StringIO(), width=120, record=True)
    console.print(bars.make_tasks_table(bars.tasks))
    return console.export_text()
