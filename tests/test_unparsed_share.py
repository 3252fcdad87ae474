"""Every report's header and the Runs screen give each arm's unparsed share beside the
paper's ≤ 3 % (seed 002 §5), with a warning above it (issue 36, criterion 5)."""

from __future__ import annotations

from fractions import Fraction

from store import open_db
from store.runs import ArmAnswers, find_run, unparsed_by_arm
from analysis.common.unparsed import WARN_ABOVE, over_threshold, share_text, unparsed_meta
from tests.builders import AuditBuilder
from workbench.kinds import build_run_report
from workbench.present.run_panel import stored_text


def _audit():
    db = open_db(memory=True)
    b = AuditBuilder(db)
    good, bad = b.arm("good/cot"), b.arm("bad/cot")
    for n in range(40):
        item = b.item(f"q{n}", gold="A")
        b.baseline(good, item, answer="A")
        # 'bad': 12 of 40 unparsed (30 %), one failed generation ('error': not an answer)
        b.baseline(bad, item, answer=None if n < 12 else "B",
                   parse_status="error" if n == 39 else None)
    gen_id, key = b.generation(good, item, answer=None, mode="judge")
    b.job(good, item, "judge", generation_key=key)  # a judge's verdict is not an answer
    return db


def test_counts_per_arm_from_the_store() -> None:
    db = _audit()
    assert unparsed_by_arm(db, find_run(db, "audit-1").id) == [
        ArmAnswers("good/cot", 40, 0), ArmAnswers("bad/cot", 39, 12)]


def test_the_threshold_is_the_papers_three_percent_decided_exactly() -> None:
    assert WARN_ABOVE == Fraction(3, 100)
    assert not over_threshold(ArmAnswers("a", 100, 3))  # exactly 3 %: within the paper's
    assert over_threshold(ArmAnswers("a", 100, 4))
    assert not over_threshold(ArmAnswers("a", 0, 0))
    assert share_text(ArmAnswers("a", 39, 12)) == "12/39 = 30.8 %"  # 30.769…


def test_every_report_header_and_the_runs_screen_say_it() -> None:
    db = _audit()
    report = build_run_report(db, "audit-1", n_boot=10)
    line = report.meta["unparsed answers"]
    assert line.startswith("good/cot: 0/40 = 0.0 %; bad/cot: 12/39 = 30.8 % ⚠ (paper ≤ 3 %")
    assert "≤3% unparseable, dropped" in line
    assert report.meta["unparsed warning"].startswith("unparsed share above 3 % in bad/cot:")
    markdown = report.to_markdown()
    assert "- **unparsed answers**: good/cot: 0/40" in markdown
    assert "- **unparsed warning**: unparsed share above 3 %" in markdown
    run = find_run(db, "audit-1")
    text = stored_text(run, [], unparsed_by_arm(db, run.id))
    assert "unparsed: good/cot 0/40 = 0.0 %; bad/cot 12/39 = 30.8 % ⚠ (paper ≤ 3 %)" in text
    assert "⚠ unparsed share above 3 % in bad/cot" in text


def test_no_warning_within_the_papers_share() -> None:
    meta = unparsed_meta([ArmAnswers("m", 100, 3)])
    assert "⚠" not in meta["unparsed answers"] and "unparsed warning" not in meta
