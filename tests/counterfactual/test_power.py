"""The Appendix F power simulation: calibration under H0 and the paper's power ordering."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.counterfactual import power


def test_false_positive_rate_is_nominal_at_sigma_pert_zero():
    # A property of correct tests, not a tuned number: at σ_pert = 0 both arms are
    # exchangeable, so each one-sided test at α = 0.05 should reject about 5% of 1,000
    # simulations. Appendix F reports a mean of 0.043 over its conditions (max 0.075).
    # Two conditions: balanced logits, and imbalanced ones (≈ 90% 'yes', like VISIT).
    rng = np.random.default_rng(2024)
    conditions = {"balanced": rng.normal(0.0, 2.0, 100), "imbalanced": rng.normal(2.5, 1.5, 100)}
    grid = power.power_grid(conditions, sigmas=(0.25, 0.5, 1.0), sigma_perts=(0.0,), sims=1000,
                            n_boot=1000, alpha=0.05, seed=0)
    fpr = power.false_positive_rate(grid)
    assert fpr["cells"] == 2 * 3 * 5
    assert 0.03 <= fpr["mean"] <= 0.07, grid
    assert fpr["max"] <= 0.1, grid


def test_per_sample_tests_are_far_more_powerful_than_aggregate_ones():
    # Appendix F, Figure 4: "Per-sample metrics (JSD, KL) are dramatically more powerful
    # than per-population metrics (MI, φ, flip rate)".
    z = np.random.default_rng(3).normal(0.0, 2.0, 100)
    result = power.simulate_cell(z, 0.5, 1.0, sims=200, n_boot=300,
                                 rng=np.random.default_rng(0))
    share = {test: rejections / 200 for test, (rejections, _) in result.items()}
    assert share["jsd"] > 0.9 and share["kl"] > 0.9
    assert max(share["mi"], share["phi"], share["fr"]) < 0.5


def test_no_noise_at_all_gives_identical_arms_and_p_one():
    # σ = σ_pert = 0: both arms equal the original, every Δ is exactly 0: p = 1, never
    # rejected (and not undefined).
    z = np.random.default_rng(4).normal(0.0, 2.0, 50)
    result = power.simulate_cell(z, 0.0, 0.0, sims=50, n_boot=50)
    assert result["jsd"] == (0, 0) and result["kl"] == (0, 0)
    # At σ = 0 the baseline has no noise, so any σ_pert > 0 is detected (the step function).
    step = power.simulate_cell(z, 0.0, 0.5, sims=50, n_boot=50)
    assert step["jsd"][0] == 50


def test_extreme_imbalance_makes_mi_and_phi_degenerate():
    # Appendix F, RESOURCE (99/100 positive): "MI and φ produce zero detection at every
    # effect size" while JSD and KL keep their power.
    z = np.full(100, 6.0)
    result = power.simulate_cell(z, 0.5, 2.0, sims=100, n_boot=200,
                                 rng=np.random.default_rng(1))
    assert result["mi"][0] <= 5 and result["phi"][0] <= 5
    assert result["jsd"][0] >= 90


def test_cells_are_seeded_independently_and_the_report_has_every_part():
    z = {"c": np.random.default_rng(5).normal(0, 2, 40)}
    small = power.power_grid(z, sigmas=(0.5,), sigma_perts=(0.0, 1.0), sims=40, n_boot=50)
    one = power.power_grid(z, sigmas=(0.5,), sigma_perts=(0.0,), sims=40, n_boot=50)
    assert small[small["sigma_pert"] == 0]["power"].tolist() == one["power"].tolist()
    report = power.power_report(small, {"alpha": 0.05, "sims": 40}, z)
    assert [s.json_key for s in report.sections] == ["fpr", "conditions", "power"]
    wide = report.section("power").frame
    assert list(wide.columns) == ["condition", "sigma", "sigma_pert", "power JSD", "power KL",
                                  "power MI", "power φ", "power FR"]
    png = report.figures[0].render()
    assert png.startswith(b"\x89PNG")


@pytest.mark.parametrize("bad", [(np.array([1.0]),)])
def test_a_single_item_gives_undefined_t_tests(bad):
    result = power.simulate_cell(bad[0], 0.5, 0.5, sims=10, n_boot=10)
    assert result["jsd"] == (0, 10)
