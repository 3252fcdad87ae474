"""CFV validity by difficulty and Step, and the difficulty–validity Spearman r (Figure 2,
§4.2), worked out by hand and checked against scipy, through the real report."""

from __future__ import annotations

import math
from fractions import Fraction

import pandas as pd
import pytest
from scipy.stats import spearmanr

from workbench.kinds import build_run_report
from analysis.robustness.difficulty import band_of, spearman
from tests.robustness.helpers import two_model_run


def test_bands_are_decided_on_exact_fractions():
    assert [band_of(Fraction(k, 6)) for k in range(7)] == [
        "easy", "easy", "medium", "medium", "hard", "hard", "hard"]  # 2/6 = 1/3, 4/6 = 2/3


def test_spearman_by_hand_and_against_scipy():
    # Ranks of d = (0, 0.5, 1): 1, 2, 3; of v = (0, 1, 1): 1, 2.5, 2.5. Deviations from the
    # mean rank 2: (-1, 0, 1) and (-1, .5, .5): cov 1.5, var 2 and 1.5: r = 1.5 / sqrt(3).
    frame = pd.DataFrame({"item_id": [1, 2, 3], "difficulty": [0.0, 0.5, 1.0],
                          "valid": [0.0, 1.0, 1.0]})
    e = spearman(frame, [1, 2, 3], 0, 0)
    assert e.value == pytest.approx(1.5 / 3 ** 0.5) and e.n == 3
    assert e.value == pytest.approx(spearmanr(frame["difficulty"], frame["valid"]).statistic)
    # Constant validity: r undefined, not 0.
    assert math.isnan(spearman(frame.assign(valid=1.0), [1, 2, 3], 0, 0).value)


@pytest.fixture
def run(demo_db):
    """Two models, both answering A at baseline (gold: demo-001 A, demo-002 B, demo-003 C)
    and D to every changed case (targets B, D, A): only demo-002's attempts are valid."""
    outcome = two_model_run(demo_db)
    for sid, step in (("demo-001", "step1"), ("demo-002", "step1"), ("demo-003", "step2&3")):
        demo_db.execute("UPDATE items SET meta_json = ? WHERE source_id = ?",
                        [f'{{"meta_info": "{step}"}}', sid])
    return outcome


def test_validity_by_panel_difficulty_and_step(demo_db, run):
    report = build_run_report(demo_db, run.audit_id, kind="robustness", n_boot=50)
    sections = {s.json_key: s for s in report.sections}
    by_band = sections["cfv_by_difficulty"].frame
    assert "model panel accuracy" in sections["cfv_by_difficulty"].note
    # Panel difficulty: demo-001 both right (0/2 wrong: easy), demo-002 and demo-003 both
    # wrong (2/2: hard). Valid: demo-002's two attempts. Easy 0/2, hard 2/4.
    everyone = by_band.loc["all models"].set_index("band")
    assert everyone.loc["easy", "valid_pct"] == 0.0 and everyone.loc["easy", "n_attempts"] == 2
    assert everyone.loc["hard", "valid_pct"] == 50.0 and everyone.loc["hard", "n_attempts"] == 4
    # Spearman over the 6 attempts: d = (0, 0, 1, 1, 1, 1), v = (0, 0, 1, 1, 0, 0). Ranks
    # (1.5, 1.5, 4.5 x4) and (2.5, 2.5, 5.5, 5.5, 2.5, 2.5); deviations from 3.5:
    # (-2, -2, 1, 1, 1, 1), (-1, -1, 2, 2, -1, -1): cov 6, variances 12 and 12: r = 1/2.
    rho = sections["cfv_difficulty_spearman"].frame.loc["all models"]
    assert rho["spearman_r"] == pytest.approx(0.5) and rho["n_attempts"] == 6
    assert rho["r_low"] <= rho["spearman_r"] <= rho["r_high"]
    by_step = sections["cfv_by_step"].frame.loc["all models"].set_index("step")
    # Step 1 = demo-001, demo-002: 2 of 4 valid; Step 2/3 = demo-003: 0 of 2.
    assert by_step.loc["Step 1", "valid_pct"] == 50.0 and by_step.loc["Step 1", "n_attempts"] == 4
    assert by_step.loc["Step 2/3", "valid_pct"] == 0.0


def test_an_item_difficulty_field_is_used_when_every_item_has_one(demo_db, run):
    for sid, level in (("demo-001", "hard"), ("demo-002", "easy"), ("demo-003", "medium")):
        demo_db.execute("UPDATE items SET meta_json = ? WHERE source_id = ?",
                        [f'{{"difficulty": "{level}"}}', sid])
    report = build_run_report(demo_db, run.audit_id, kind="robustness", n_boot=0)
    section = next(s for s in report.sections if s.json_key == "cfv_by_difficulty")
    assert "item field 'difficulty'" in section.note
    everyone = section.frame.loc["all models"].set_index("band")
    assert everyone.loc["easy", "valid_pct"] == 100.0  # demo-002
    assert everyone.loc["hard", "valid_pct"] == 0.0 and everyone.loc["medium", "valid_pct"] == 0.0
