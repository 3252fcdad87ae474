"""Appendix F of seed 000: the logit-space power simulation of the five tests (Eq. 8).

For each condition (a set of real logits zᵢ = log(p_Yes/p_No) of original prompts, or a
synthetic set) and each (σ, σ_pert):

    logit_pert,i = zᵢ + ε_pert,i + εᵢ,   logit_base,i = zᵢ + ε′ᵢ            (Eq. 8)
    ε_pert ~ N(0, σ_pert²),  ε, ε′ ~ N(0, σ²), independent

Logits become probabilities by the sigmoid. JSD and KL compare the original distribution
(p, 1 − p) with each arm's, and are tested with the one-sided paired t-test; MI, φ and the
flip rate use binary answers drawn y ~ Bernoulli(p) for the original and both arms, and are
tested with the paired bootstrap — the very functions of `analysis.counterfactual.definitions`.
Power is the share of simulations rejecting at α; at σ_pert = 0 it is the false-positive rate.

Vectorised over simulations: every simulation's bootstrap is a multinomial draw over the
8 joint answer cells, so a cell of 1,000 simulations × B = 1,000 costs a few hundred ms.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING

import numpy as np

from analysis.common.options import choices
from analysis.common.png import png_bytes
from analysis.counterfactual import definitions as cfd
from analysis.counterfactual import statistics as cfs
from analysis.counterfactual.definitions import Sides

if TYPE_CHECKING:
    import pandas as pd

    from analysis.common.document import Report

TESTS: tuple[str, ...] = ("jsd", "kl", "mi", "phi", "fr")
"""The five tests of each cell (per-sample first, as in Figure 4's legend order)."""

SIGMAS: tuple[float, ...] = (0.0, 0.25, 0.5, 1.0)
"""Appendix F: "σ ∈ {0, 0.25, 0.5, 1.0}"."""

SIGMA_PERTS: tuple[float, ...] = tuple(round(0.25 * i, 2) for i in range(13))
"""Appendix F: "We sweep σ_pert from 0 to 3.0" — the paper gives no step; PAW's is 0.25
(13 cells per σ), the authors' code uses 0.1 (`paw power --sigma-pert 0:3:0.1`, 31 cells)."""

SIMS = 1000
"""Appendix F: "running 1,000 simulations per combination"."""

CHUNK = 100
"""Simulations drawn at once (bounds memory: B × CHUNK × 8 bootstrap counts)."""


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _binary(p: np.ndarray) -> np.ndarray:
    return np.stack([p, 1.0 - p], axis=-1)


class Originals(StrEnum):
    """How the original prompts' binary answers are drawn."""

    REDRAW = "redraw"
    """Default: y ~ Bernoulli(σ(z)) anew in every simulation, as Appendix F reads ("we draw
    discrete binary answers y ∼ Bernoulli(p)", for every arm)."""
    FIXED = "fixed"
    """Drawn once per cell and kept for every simulation, as the authors' released
    simulation code does (issue 23's review)."""


ORIGINALS: tuple[str, ...] = tuple(choices(Originals))
"""The values of `Originals`."""


def simulate_cell(z: np.ndarray, sigma: float, sigma_pert: float, *, sims: int = SIMS,
                  n_boot: int = cfd.N_BOOT, alpha: float = cfd.ALPHA,
                  rng: np.random.Generator | None = None, sides: Sides = Sides.ONE,
                  originals: Originals = Originals.REDRAW) -> dict[str, tuple[int, int]]:
    """Run `sims` simulations of one (σ, σ_pert) cell.

    Args:
        z: the condition's original logits (N items).
        sigma: baseline noise σ.
        sigma_pert: perturbation effect σ_pert.
        sims: simulations.
        n_boot: bootstrap replicates of the MI, φ and flip-rate tests.
        alpha: significance level.
        rng: random generator.
        sides: 'one' (the paper) or 'two' (the authors' code), for every test.
        originals: 'redraw' or 'fixed' (`ORIGINALS`).

    Returns:
        test → (rejections, simulations whose p was undefined — counted as not rejected).
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    if originals not in ORIGINALS:
        raise ValueError(f"originals must be one of {ORIGINALS}, got {originals!r}")
    originals, sides = Originals(originals), Sides(sides)
    z = np.asarray(z, dtype=float)
    n = z.size
    p0 = _sigmoid(z)
    original = _binary(p0)
    kept = (rng.random(n) < p0).astype(int) if originals is Originals.FIXED else None
    out = {test: [0, 0] for test in TESTS}
    for start in range(0, sims, CHUNK):
        s = min(CHUNK, sims - start)
        pert = _sigmoid(z + rng.normal(0.0, sigma_pert, (s, n)) + rng.normal(0.0, sigma, (s, n)))
        base = _sigmoid(z + rng.normal(0.0, sigma, (s, n)))
        for test, divergence in (("jsd", cfd.js_divergence), ("kl", cfd.kl_divergence)):
            p = cfs.paired_t_rows(divergence(original, _binary(pert))
                                  - divergence(original, _binary(base)), sides)
            out[test][0] += int((p < alpha).sum())
            out[test][1] += int(np.isnan(p).sum())
        y0 = (rng.random((s, n)) < p0).astype(int) if kept is None else np.tile(kept, (s, 1))
        yp = (rng.random((s, n)) < pert).astype(int)
        yb = (rng.random((s, n)) < base).astype(int)
        cells = cfs.answer_cells(y0, yp, yb, 2) + 8 * np.arange(s)[:, None]
        counts = np.bincount(cells.ravel(), minlength=8 * s).reshape(s, 8)
        boot = rng.multinomial(n, counts / n, size=(n_boot, s))
        tables_t, tables_b = cfs.cell_tables(boot, 2)
        m_t, m_b = cfd.table_metrics(tables_t), cfd.table_metrics(tables_b)
        signs = cfs.replicate_signs(m_t, m_b, tables_t, tables_b)
        for test in ("mi", "phi", "fr"):
            p = cfs.bootstrap_p(signs[test], cfd.H1[test], sides)
            out[test][0] += int((p < alpha).sum())
    return {test: (r, u) for test, (r, u) in out.items()}


def power_grid(conditions: Mapping[str, np.ndarray], sigmas: Sequence[float] = SIGMAS,
               sigma_perts: Sequence[float] = SIGMA_PERTS, *, sims: int = SIMS,
               n_boot: int = cfd.N_BOOT, alpha: float = cfd.ALPHA, seed: int = 0,
               on_cell: Callable[[int, int], None] | None = None, sides: Sides = Sides.ONE,
               originals: Originals = Originals.REDRAW) -> pd.DataFrame:
    """Power of the five tests over every condition × σ × σ_pert.

    Each cell's generator is seeded by (seed, condition index, σ index, σ_pert index), so a
    cell's result does not depend on which other cells are run.

    Args:
        conditions: name → original logits z.
        sigmas: baseline noise levels σ.
        sigma_perts: perturbation effects σ_pert.
        sims: simulations per cell.
        n_boot: bootstrap replicates.
        alpha: significance level.
        seed: seed.
        on_cell: called with (cells done, cells total) after each cell.
        sides: 'one' or 'two' (`simulate_cell`).
        originals: 'redraw' or 'fixed' (`ORIGINALS`).

    Returns:
        One row per (condition, sigma, sigma_pert, test): power, rejections, undefined,
        sims, n (items).
    """
    import pandas as pd

    rows = []
    total = len(conditions) * len(sigmas) * len(sigma_perts)
    done = 0
    for c, (name, z) in enumerate(conditions.items()):
        for i, sigma in enumerate(sigmas):
            for j, sigma_pert in enumerate(sigma_perts):
                rng = np.random.default_rng([seed, c, i, j])
                result = simulate_cell(z, sigma, sigma_pert, sims=sims, n_boot=n_boot,
                                       alpha=alpha, rng=rng, sides=sides,
                                       originals=originals)
                for test, (rejections, undefined) in result.items():
                    rows.append({"condition": name, "sigma": float(sigma),
                                 "sigma_pert": float(sigma_pert), "test": test,
                                 "power": rejections / sims, "rejections": rejections,
                                 "undefined": undefined, "sims": sims, "n": int(np.size(z))})
                done += 1
                if on_cell is not None:
                    on_cell(done, total)
    return pd.DataFrame(rows, columns=["condition", "sigma", "sigma_pert", "test", "power",
                                       "rejections", "undefined", "sims", "n"])


def false_positive_rate(grid: pd.DataFrame) -> dict[str, float]:
    """Appendix F's calibration summary over σ > 0 at σ_pert = 0: mean and max FPR."""
    null = grid[(grid["sigma_pert"] == 0) & (grid["sigma"] > 0)]
    if null.empty:
        return {"mean": math.nan, "max": math.nan, "cells": 0}
    return {"mean": float(null["power"].mean()), "max": float(null["power"].max()),
            "cells": int(len(null))}


def wide_table(grid: pd.DataFrame) -> pd.DataFrame:
    """Power per (condition, σ, σ_pert) with one column per test (the report's table)."""
    wide = grid.pivot_table(index=["condition", "sigma", "sigma_pert"], columns="test",
                            values="power", sort=False).reset_index()
    wide.columns.name = None
    ordered = ["condition", "sigma", "sigma_pert"] + [t for t in TESTS if t in wide.columns]
    frame = wide[ordered].rename(columns={t: f"power {cfd.LABELS[t]}" for t in TESTS})
    frame.attrs["decimals"] = {"sigma": 2, "sigma_pert": 2} | {
        f"power {cfd.LABELS[t]}": 3 for t in TESTS}
    return frame


def power_data(grid: pd.DataFrame, condition: str):
    """One condition's power curves as series: power against σ_pert, one line per test
    and σ (the PNG draws one panel per σ; the terminal one plot, σ in the legend)."""
    from analysis.common.plotdata import PlotData, Series

    part = grid[grid["condition"] == condition]
    series = []
    for sigma in sorted(part["sigma"].unique()):
        cell = part[part["sigma"] == sigma]
        for test in TESTS:
            line = cell[cell["test"] == test].sort_values("sigma_pert")
            series.append(Series(f"{cfd.LABELS[test]} σ={sigma:g}",
                                 tuple(float(v) for v in line["sigma_pert"]),
                                 tuple(float(v) for v in line["power"])))
    return PlotData(f"power curves: {condition}", "σ_pert", "power (share rejecting H0)",
                    tuple(series), ylim=(0.0, 1.0),
                    notes=(f"dotted level in the PNG: α = {cfd.ALPHA}",))


def power_png(grid: pd.DataFrame, condition: str) -> bytes:
    """Power curves of one condition: one panel per σ, power against σ_pert per test."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    part = grid[grid["condition"] == condition]
    sigmas = sorted(part["sigma"].unique())
    fig, axes = plt.subplots(1, len(sigmas), figsize=(3.2 * len(sigmas), 3.2), dpi=110,
                             sharey=True, squeeze=False)
    try:
        alpha = None
        for ax, sigma in zip(axes[0], sigmas, strict=True):
            cell = part[part["sigma"] == sigma]
            for test in TESTS:
                line = cell[cell["test"] == test].sort_values("sigma_pert")
                ax.plot(line["sigma_pert"], line["power"], marker="o", ms=3,
                        label=cfd.LABELS[test])
            alpha = alpha or cfd.ALPHA
            ax.axhline(alpha, color="#999", lw=0.8, ls=":")
            ax.set_title(f"σ = {sigma:g}")
            ax.set_xlabel("σ_pert")
            ax.set_ylim(-0.02, 1.02)
        axes[0][0].set_ylabel("power (share rejected)")
        axes[0][-1].legend(fontsize=7, loc="lower right")
        fig.suptitle(f"Power curves: {condition}", fontsize=10)
        fig.tight_layout()
        return png_bytes(fig)
    finally:
        plt.close(fig)


def power_report(grid: pd.DataFrame, meta: dict, conditions: Mapping[str, np.ndarray]
                 ) -> Report:
    """The simulation as a report: summary, per-condition logits, the power table, curves."""
    import pandas as pd

    from analysis.common.document import Figure, Report, Section

    fpr = false_positive_rate(grid)
    per_test = grid[(grid["sigma_pert"] == 0) & (grid["sigma"] > 0)].groupby(
        "test", sort=False)["power"].agg(["mean", "max"]).reindex(list(TESTS)).reset_index()
    per_test["test"] = per_test["test"].map(cfd.LABELS)
    summary = pd.DataFrame([{"test": "all", "mean": fpr["mean"], "max": fpr["max"]}])
    summary = pd.concat([per_test, summary], ignore_index=True).rename(
        columns={"mean": "mean FPR", "max": "max FPR"})
    summary.attrs["decimals"] = {"mean FPR": 3, "max FPR": 3}
    logits = pd.DataFrame([{"condition": name, "n": int(np.size(z)),
                            "z_mean": float(np.mean(z)), "z_sd": float(np.std(z)),
                            "share_yes": float(np.mean(_sigmoid(np.asarray(z)) > 0.5))}
                           for name, z in conditions.items()])
    logits.attrs["decimals"] = {"z_mean": 2, "z_sd": 2, "share_yes": 2}
    sections = [
        Section("False-positive rate at σ_pert = 0 (σ > 0)", summary,
                f"Appendix F: 'the mean false positive rate at σ_pert = 0 is 0.043 (nominal: "
                f"0.05), with no single test exceeding 0.075'. Here α = {meta.get('alpha')}, "
                f"{meta.get('sims')} simulations per cell; a test with an undefined p "
                "(t-test on constant Δ) counts as not rejected.", "fpr"),
        Section("Conditions (original logits z)", logits,
                "z = log(P(first label)/(1 − P(first label))) of each original prompt "
                "(log(p_Yes/p_No) for yes/no items); share_yes = share with p > 0.5.",
                "conditions"),
        Section("Power per condition, σ and σ_pert", wide_table(grid),
                f"Share of simulations rejecting H0 at α ({meta.get('sides', 'one')}-sided; "
                "the paper's tests are one-sided, the authors' code two-sided, whose curves "
                "therefore sit lower) for each test: JSD, KL by "
                "the paired t-test on Δᵢ; MI, φ, FR by the paired bootstrap.", "power"),
    ]
    figures = [Figure(f"power_{i}", f"power curves: {name}",
                      functools.partial(power_png, grid, name),
                      plot=functools.partial(power_data, grid, name))
               for i, name in enumerate(conditions)]
    return Report("PAW power simulation (seed 000, Appendix F)", meta, sections, figures)


def stored_power_report(db, audit_id: int) -> Report | None:
    """The latest `paw power --study` simulation of a study as a report (None if it has
    none): what the study report adds — its false-positive section and curves."""
    import json

    import pandas as pd

    row = db.execute("SELECT meta_json, conditions_json, grid_json, created_at FROM "
                     "power_runs WHERE audit_id = ? ORDER BY id DESC LIMIT 1",
                     [audit_id]).fetchone()
    if row is None:
        return None
    meta = {**json.loads(row[0]), "simulated": row[3]}
    conditions = {name: np.asarray(z, dtype=float) for name, z in json.loads(row[1]).items()}
    grid = pd.DataFrame(json.loads(row[2]), columns=["condition", "sigma", "sigma_pert",
                                                     "test", "power", "rejections",
                                                     "undefined", "sims", "n"])
    return power_report(grid, meta, conditions)
