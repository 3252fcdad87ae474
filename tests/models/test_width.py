"""The batch width chosen by measuring (`workbench.models.width`): picked, stored, reused, shown,
and never changing a result.

The real-model test drives `paw run` and `paw models` on a real SQLite file with the
embedded SmolLM2: the first run measures the widths and says so, `paw models` shows the
choice and its rates, a second run reuses it without measuring, and every row is the same
bit for bit as a run at a fixed `--batch` (which measures nothing).
"""

from __future__ import annotations

import sqlite3

import pytest

from store import open_db
from store.models import model_metadata
from workbench.cli import main
from workbench.datasets.demo import import_demo
from workbench.models import Runner
from workbench.models import batching as batching_module
from workbench.models.events import BatchingChecked, WidthChosen
from workbench.models.registry import default_model
from workbench.models.selfcheck import BatchVerdict
from workbench.models.width import CANDIDATE_WIDTHS, WidthChoice, pick_width

RUN = ["run", "--dataset", "demo", "--limit", "3", "--threads", "1", "--max-tokens", "12"]


def test_pick_width_takes_the_fastest_unless_a_narrower_one_is_within_three_percent() -> None:
    assert pick_width({1: 50.0, 2: 60.0, 4: 70.0, 8: 80.0, 16: 100.0}) == 16
    assert pick_width({1: 50.0, 2: 60.0, 4: 70.0, 8: 97.5, 16: 100.0}) == 8
    assert pick_width({1: 50.0, 2: 60.0, 4: 70.0, 8: 96.9, 16: 100.0}) == 16
    assert pick_width({1: 90.0, 2: 60.0, 4: 70.0, 8: 80.0, 16: 85.0}) == 1


def test_a_stored_choice_reads_back_as_measured() -> None:
    choice = WidthChoice(16, {1: 51.25, 16: 80.5}, 2, 1, 3.25, None, 4.5,
                         {32: "too big"})
    back = WidthChoice.from_dict(choice.as_dict(), "2026-01-01T00:00:00+00:00")
    assert (back.width, back.rates, back.decoders, back.threads, back.skipped) == \
        (16, {1: 51.25, 16: 80.5}, 2, 1, {32: "too big"})
    assert "measured 2026-01-01T00:00:00+00:00" in back.message
    assert "w1 51.2, w16 80.5 tok/s" in back.message


def _paw(capsys, *args: str) -> tuple[int, str]:
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out + err


def _rows(path: str) -> dict[str, tuple]:
    conn = sqlite3.connect(path)
    try:
        return {row[0]: row[1:] for row in conn.execute(
            "SELECT key, output, output_token_ids_json, answer, parse_status, finish_reason, "
            "option_probs_json, option_logits_json FROM generations")}
    finally:
        conn.close()


@pytest.mark.model
def test_width_is_measured_once_stored_shown_reused_and_changes_no_bit(
        tmp_path, capsys, monkeypatch) -> None:
    measured, fixed = str(tmp_path / "measured.db"), str(tmp_path / "fixed.db")
    for path in (measured, fixed):
        db = open_db(path)
        import_demo(db)
        db.conn.close()

    code, out = _paw(capsys, *RUN, "--db", measured)
    assert code == 0, out
    assert "chosen by measuring (" in out and " × 1 thread: w1 " in out
    assert "measured now in" in out
    db = open_db(measured)
    stored = model_metadata(db, default_model(db).id)["width_check"]
    db.conn.close()
    assert set(map(int, stored["rates"])) == set(CANDIDATE_WIDTHS)
    assert all(rate > 0 for rate in stored["rates"].values())
    width = stored["width"]
    assert width == pick_width({int(w): r for w, r in stored["rates"].items()})
    if width > 1:
        assert f"batched decoding on: {width} sequences per batch" in out

    code, out = _paw(capsys, "models", "--db", measured)
    assert code == 0
    assert f"default: batch width {width} chosen by measuring" in out
    assert f"measured {stored['checked_at']}, stored for this machine" in out

    # A second run reuses the stored choice: nothing is measured again.
    def no_measuring(*args, **kwargs):
        raise AssertionError("the stored width choice was not reused")

    monkeypatch.setattr(batching_module, "measure_widths", no_measuring)
    code, out = _paw(capsys, *RUN, "--limit", "4", "--db", measured)
    assert code == 0, out
    assert f"batch width {width} chosen by measuring" in out
    assert f"measured {stored['checked_at']}, stored for this machine" in out

    # A fixed --batch wins, measures nothing, and stores the same bits.
    code, out = _paw(capsys, *RUN, "--limit", "4", "--batch", "8", "--db", fixed)
    assert code == 0, out
    assert "chosen by measuring" not in out
    db = open_db(fixed)
    assert "width_check" not in model_metadata(db, default_model(db).id)
    db.conn.close()
    rows = _rows(measured)
    assert len(rows) == 4
    assert rows == _rows(fixed)


def test_a_failed_measurement_says_so_and_keeps_the_default_width() -> None:
    failed = WidthChoice(8, {}, 2, 1, 0.0, None, 0.0,
                         {0: "measurement failed (no context); default width"})
    assert failed.message == "batch width 8: measurement failed (no context); default width"


def test_fallbacks_are_the_fastest_narrower_widths() -> None:
    choice = WidthChoice(16, {1: 40.0, 2: 45.0, 4: 60.0, 8: 55.0, 16: 70.0}, 2, 1, 1.0)
    assert choice.fallbacks(16) == [4, 8]
    assert choice.fallbacks(4) == [2]
    assert choice.fallbacks(2) == []


@pytest.mark.model
def test_a_chosen_width_that_differs_falls_back_to_a_narrower_checked_one(monkeypatch) -> None:
    """Where the self-check at the fastest width differs, the next fastest narrower width
    that passes its own check is used (the check is stood in for: this machine's batches
    are identical at every width)."""
    db = open_db(memory=True)
    measured = WidthChoice(16, {1: 40.0, 2: 45.0, 4: 50.0, 8: 60.0, 16: 70.0}, 1, 1, 0.5)
    monkeypatch.setattr(batching_module, "measure_widths", lambda *a, **k: measured)
    checked: list[int] = []

    def check(backend, decoders, probes, progress=None):
        n_seq = decoders[0].n_seq
        checked.append(n_seq)
        return BatchVerdict(n_seq <= 8, n_seq, "stand-in", 0.1,
                            {w: 1 for w in range(1, n_seq + 1)}, len(decoders), 1)

    monkeypatch.setattr(batching_module, "check_batching", check)
    runner = Runner(db, default_model(db), threads=1)
    events: list = []
    try:
        assert runner.batching(events.append)
    finally:
        runner.close()
    assert checked == [16, 8]
    chosen = [e for e in events if isinstance(e, WidthChosen)]
    said = [e for e in events if isinstance(e, BatchingChecked)]
    assert len(chosen) == 1 and "batch width 16 chosen by measuring" in chosen[0].message
    assert len(said) == 1 and said[0].identical and said[0].n_seq == 8
    assert len(model_metadata(db, default_model(db).id)["batch_checks"]) == 2
