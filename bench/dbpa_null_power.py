"""DBPA's size and power by design: independent seeds, shared seeds paired, shared seeds unpaired.

With shared sample seeds (`paw dbpa --seeds shared`) sample i of both conditions is drawn
with the same random numbers, so y_i and y'_i are coupled. This draws such samples in a
realistic geometry and runs the permutation test three ways:

- `independent`: the two conditions drawn apart; the pool permuted (PAW's default);
- `shared-paired`: pair i coupled with correlation ρ; swaps within pairs (what PAW runs
  when seeds are shared, `analysis.dbpa.design`);
- `shared-unpaired`: the same coupled pairs, the pool permuted as if independent (what PAW
  ran before it had a paired design).

Geometry: unit vectors in `--dim` dimensions, a common centre plus isotropic noise sized
so that two outputs of one condition have cosine ≈ `--cosine`; in a coupled pair the
perturbed output's noise is ρ·(the baseline's) + √(1 − ρ²)·(its own), so both have the
same distribution and H0 holds exactly. Power: the perturbed centre moved by `--shift`
along a fresh direction. Each cell: the rejection rate at α = 0.05 over `--reps`
repetitions (B = 199) and its binomial standard error.

The null rate of the modes PAW runs (independent, shared-paired) should lie in
[0.03, 0.07]; at 2,000 repetitions its SE is 0.0049, so that band is ±4 SE around 0.05.

    .venv/bin/python bench/dbpa_null_power.py --reps 2000            # full count (~10 min CPU)
    .venv/bin/python bench/dbpa_null_power.py --reps 200             # a quick look
    .venv/bin/python bench/dbpa_null_power.py --dim 64 --rho 0.5,0.9 --cosine 0.5
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

from analysis.dbpa.definitions import DISTANCES
from analysis.dbpa.statistics import permutation_test

MODES: tuple[tuple[str, bool, str], ...] = (
    ("independent", False, "unpaired"),
    ("shared-paired", True, "paired"),
    ("shared-unpaired", True, "unpaired"),
)
"""(name, coupled draws, test design)."""

DEFAULT_MODES = frozenset({"independent", "shared-paired"})
"""The modes PAW runs (the third is the mistake it no longer makes)."""


def draw(rng: np.random.Generator, k: int, dim: int, noise: float, rho: float,
         coupled: bool, shift: float) -> tuple[np.ndarray, np.ndarray]:
    """k baseline and k perturbed unit vectors (pair i coupled when `coupled`)."""
    centre, direction = np.zeros(dim), np.zeros(dim)
    centre[0], direction[1] = 1.0, 1.0
    za, own = rng.normal(size=(k, dim)), rng.normal(size=(k, dim))
    zb = rho * za + math.sqrt(1 - rho * rho) * own if coupled else own
    a = centre + noise * za
    b = centre + shift * direction + noise * zb
    return (a / np.linalg.norm(a, axis=1, keepdims=True),
            b / np.linalg.norm(b, axis=1, keepdims=True))


def rate(k: int, dim: int, noise: float, rho: float, coupled: bool, design: str,
         shift: float, distance: str, reps: int, seed: int) -> float:
    """Share of `reps` tests with p ≤ 0.05."""
    rng = np.random.default_rng(seed)
    rejected = 0
    for rep in range(reps):
        a, b = draw(rng, k, dim, noise, rho, coupled, shift)
        rejected += permutation_test(a, b, distance=distance, permutations_count=199,
                                     seed=rep, design=design).p_value <= 0.05
    return rejected / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=300,
                        help="repetitions per cell (the documented figures: 2000)")
    parser.add_argument("--ks", default="10,20")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--cosine", type=float, default=0.8,
                        help="typical cosine between two outputs of one condition")
    parser.add_argument("--rho", default="0.7", help="coupling of a shared-seed pair(s)")
    parser.add_argument("--shift", type=float, default=0.2)
    parser.add_argument("--distances", default=",".join(DISTANCES))
    args = parser.parse_args()
    # ‖noise‖² = noise²·dim; cos ≈ 1/(1 + noise²·dim) for two noisy copies of one centre.
    noise = math.sqrt((1 / args.cosine - 1) / args.dim)
    distances = args.distances.split(",")
    start, cpu = time.perf_counter(), time.process_time()
    print(f"load {os.getloadavg()[0]:.2f}; {args.reps} reps per cell, B = 199, α = 0.05, "
          f"d = {args.dim}, cosine ≈ {args.cosine}, shift {args.shift}; "
          f"SE of a rate near 0.05: {math.sqrt(0.05 * 0.95 / args.reps):.4f}")
    failures = []
    for rho in (float(r) for r in args.rho.split(",")):
        for k in (int(k) for k in args.ks.split(",")):
            print(f"\nρ = {rho}, k = {k}")
            print(f"  {'mode':<16}" + "".join(f"{d + ' null':>16}{d + ' power':>17}"
                                               for d in distances))
            for name, coupled, design in MODES:
                cells = []
                for index, distance in enumerate(distances):
                    seed = 1000 * k + index
                    null = rate(k, args.dim, noise, rho, coupled, design, 0.0, distance,
                                args.reps, seed)
                    power = rate(k, args.dim, noise, rho, coupled, design, args.shift,
                                 distance, args.reps, seed + 1)
                    if name in DEFAULT_MODES and not 0.03 <= null <= 0.07:
                        failures.append(f"ρ {rho} k {k} {name} {distance} null {null:.3f}")
                    cells.append(f"{null:>16.3f}{power:>17.3f}")
                print(f"  {name:<16}" + "".join(cells))
    print(f"\nwall {time.perf_counter() - start:.0f} s, CPU {time.process_time() - cpu:.0f} s, "
          f"load {os.getloadavg()[0]:.2f}")
    print("null rate of PAW's modes outside [0.03, 0.07]: " + ("; ".join(failures) or "none"))


if __name__ == "__main__":
    main()
