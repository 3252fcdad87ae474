"""Defects 2 and 5 on outputs shaped like a small model's: a CFV reply that copies the answer
choices after its new case, a direction judge that echoes the rubric's answer line, an answer
with no reasoning (empty explanation), a baseline that does not parse — each counted and
shown in the real report's exclusions, none read as a result."""

from __future__ import annotations

import pytest

from workbench.kinds import build_run_report
from analysis.robustness.data import load_robustness
from tests.robustness.helpers import MARK, fake_embed, scripted_spec
from workbench.robustness import run_robustness
from workbench.robustness.prompts import CFV_JUDGE_RUBRIC, DIRECTION_RUBRIC, FLAGS_RUBRIC

TARGETS = {"demo-001": "B", "demo-002": "D", "demo-003": "A"}  # choose_target, seed 0


def _item(text: str) -> str:
    return next(sid for sid, mark in MARK.items() if mark in text)


def small_model(prompt: str, sampler) -> str:
    """Shaped like SmolLM2's replies (the flaws are the point):

    - CFV: a real change, then the answer choices copied from the request (the target's
      text among them); re-answers: demo-001 a third option (C), the others the target.
    - baselines: demo-001 reasons but never says 'Answer:' (unparsed); demo-002 B, demo-003 C.
    - prefixes (male_white, female_black): demo-002 under female_black answers 'Answer: A'
      and nothing else (a change with an empty explanation); demo-003 under male_white
      changes to B; the rest repeat the baseline.
    - direction judge: echoes the rubric's 'Answer: A, B, C or D'; flags judge: one flag on
      demo-003 under female_black, else none.
    """
    last = prompt.rsplit("User: ", 1)[-1]
    if CFV_JUDGE_RUBRIC[:60] in prompt:
        return "Plausible: yes\nLimited: yes"
    if DIRECTION_RUBRIC[:60] in prompt:
        return "Reply with one line: Answer: A, B, C or D"
    if FLAGS_RUBRIC[:60] in prompt:
        if "Black female" in last.split("\n", 1)[0] and "demo-003" in last:
            return 'Flag: disease association | clinically misleading | "demo-003"'
        return "Flags: none"
    if "Target answer:" in last:
        case = last.split("Case: ", 1)[1].split("\nAnswer choices:", 1)[0]
        choices = last.split("Answer choices:\n", 1)[1].split("\nTarget answer:", 1)[0]
        sid = _item(case)
        return (f"Change: one finding is different.\nNew case: {case} [{sid} changed]\n"
                f"{choices}")
    if "changed]" in last:
        sid = next(s for s in MARK if f"[{s} changed]" in last)
        answer = "C" if sid == "demo-001" else TARGETS[sid]
        return f"Step 1: The changed finding of {sid}.\nAnswer: {answer}"
    sid = _item(last)
    if sid == "demo-001":
        return "Step 1: The ST elevation is inferior, so the right coronary is likely."
    if sid == "demo-002" and "Black female" in last:
        return "Answer: A"
    if sid == "demo-003" and "White male" in last:
        return f"Step 1: The findings of {sid} point to B.\nAnswer: B"
    answer = {"demo-002": "B", "demo-003": "C"}[sid]
    return f"Step 1: The findings of {sid} point to {answer}.\nAnswer: {answer}"


@pytest.fixture
def run(demo_db, fake_model, make_engine):
    spec = scripted_spec(prefixes=("demo_prefix_male_white", "demo_prefix_female_black"),
                         max_tokens=96, cfv_max_tokens=1200)
    return run_robustness(demo_db, spec, engine=make_engine(small_model), embed=fake_embed)


def test_copied_options_do_not_make_a_change_circular(demo_db, run) -> None:
    data = load_robustness(demo_db, run.audit_id)
    assert data.cfv["circular"].tolist() == [False, False, False]
    removed = demo_db.execute("SELECT COUNT(*) FROM variants WHERE operator_id = 'cfv_change' "
                              "AND json_extract(details_json, '$.options_removed')").fetchone()
    assert removed[0] == 3
    report = build_run_report(demo_db, run.audit_id, kind="robustness", n_boot=0)
    sections = {s.json_key: s.frame for s in report.sections}
    cfv = sections["cfv_outcomes"].iloc[0]
    # demo-002 and demo-003 reached their targets (valid); demo-001 went to a third option.
    # Before the fix all three were 'circular': the copied list holds the target's text.
    assert cfv["valid_pct"] == pytest.approx(200 / 3) and cfv["circular_pct"] == 0.0
    assert cfv["same_direction_pct"] == pytest.approx(100 / 3)
    assert sections["exclusions"].iloc[0]["n_cfv_options_removed"] == 3


def test_each_exclusion_is_counted_and_shown(demo_db, run) -> None:
    report = build_run_report(demo_db, run.audit_id, kind="robustness", n_boot=0)
    sections = {s.json_key: s.frame for s in report.sections}
    ex = sections["exclusions"].iloc[0]
    # demo-001's same-direction re-answer (C): its baseline did not parse, so whether it
    # stayed or moved is unknown — not "moved elsewhere" (as it was before the fix).
    assert ex["n_cfv_moved_elsewhere"] == 0 and ex["n_cfv_baseline_unknown"] == 1
    assert ex["n_baseline_unparsed"] == 1 and ex["n_pairs_unparsed"] == 2
    # The two changes' direction verdicts are the rubric echoed: unparsed, not "more
    # aggressive" (before the fix: 2 of 2 more aggressive).
    assert ex["n_direction_unparsed"] == 2
    directions = sections["directions"].iloc[0]
    assert directions["n_classified"] == 0 and directions["n_unparsed"] == 2
    assert directions.isna()["more_aggressive_pct"]
    # demo-002 under female_black has no explanation: no flags verdict, and counted.
    assert ex["n_flags_not_judged"] == 1 and ex["n_flags_pending"] == 0
    flags = sections["flag_categories"].iloc[0]
    assert flags["n_verdicts"] == 5 and flags["n_not_judged"] == 1
    # Flags per question = Σ flags / parsed verdicts × prefixes = 1 / 5 × 2 (the rate is
    # scaled from the 5 judged explanations; the sixth is the one counted above).
    assert flags["all"] == pytest.approx(1 / 5 * 2)
