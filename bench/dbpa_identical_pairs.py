"""DBPA's paired test when many shared-seed pairs are identical texts: size and power.

With shared seeds (`paw dbpa --seeds shared`) an edit that does not change a sample's text
gives a pair (y_i, y'_i) of identical outputs. A swap within such a pair changes nothing, so
a paired test with m identical pairs of k has 2^(k − m) distinct re-splits, not 2^k: it stays
valid but loses resolution and power. This draws the geometry of `bench/dbpa_null_power.py`
(coupled pairs, ρ = 0.7, 384-d, cosine ≈ 0.8) with a share `q` of the pairs made identical
(y'_i = y_i; under H1 the other pairs carry the shift) and prints, per share and distance,
the paired test's rejection rate at α = 0.05 under H0 and under a shift, over `--reps`
repetitions (B = 199), and the test's p floor at that share (`design.smallest_p`).

    PYTHONPATH=. .venv/bin/python bench/dbpa_identical_pairs.py --reps 300
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

from analysis.dbpa.definitions import DISTANCES
from analysis.dbpa.design import smallest_p
from analysis.dbpa.statistics import permutation_test
from bench.dbpa_null_power import draw


def rate(k: int, identical: int, noise: float, shift: float, distance: str, reps: int,
         seed: int, dim: int = 384, rho: float = 0.7) -> float:
    """Share of `reps` paired tests with p ≤ 0.05 when `identical` of the k pairs are equal."""
    rng = np.random.default_rng(seed)
    rejected = 0
    for rep in range(reps):
        a, b = draw(rng, k, dim, noise, rho, True, shift)
        b[:identical] = a[:identical]  # the edit left these samples' texts unchanged
        rejected += permutation_test(a, b, distance=distance, permutations_count=199,
                                     seed=rep, design="paired").p_value <= 0.05
    return rejected / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--shares", default="0,0.3,0.5,0.7,0.9")
    parser.add_argument("--shift", type=float, default=0.2)
    parser.add_argument("--cosine", type=float, default=0.8)
    args = parser.parse_args()
    dim = 384
    noise = math.sqrt((1 / args.cosine - 1) / dim)
    start = time.perf_counter()
    print(f"load {os.getloadavg()[0]:.2f}; paired test, k = {args.k}, ρ = 0.7, d = {dim}, "
          f"cosine ≈ {args.cosine}, shift {args.shift}, B = 199, α = 0.05, {args.reps} reps "
          f"per cell (SE near 0.05: {math.sqrt(0.05 * 0.95 / args.reps):.4f})")
    print(f"{'identical':>10}{'floor':>9}" + "".join(f"{d + ' null':>16}{d + ' power':>17}"
                                                     for d in DISTANCES))
    for share in (float(s) for s in args.shares.split(",")):
        m = round(share * args.k)
        floor = smallest_p(args.k - m, args.k - m, 199, DISTANCES[0], "paired") \
            if args.k - m >= 2 else 1.0
        cells = []
        for index, distance in enumerate(DISTANCES):
            seed = 100 * m + index
            null = rate(args.k, m, noise, 0.0, distance, args.reps, seed)
            power = rate(args.k, m, noise, args.shift, distance, args.reps, seed + 1)
            cells.append(f"{null:>16.3f}{power:>17.3f}")
        print(f"{m:>4}/{args.k:<5}{floor:>9.3f}" + "".join(cells))
    print(f"wall {time.perf_counter() - start:.0f} s, load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
