"""Which DBPA effect size is comparable across k: raw ω, ω minus its permutation-null mean, or z.

Raw ω carries a small-sample level that falls with k (the issue measured mean JSD 0.64 at
k = 5 and 0.08 at k = 50 with nothing to find), so the same shift reads differently at
different k. For each k this draws `--reps` pairs of conditions in a realistic geometry
(unit vectors in 384 dimensions, cosine ≈ 0.8 between outputs of one condition) with no
difference (H0) and with a fixed shift of the perturbed condition's mean, runs the test
(B = 199) and prints the mean of

- ω = T_obs (the paper's effect size),
- ω₀ = the mean of ω over the B re-splits (its permutation-null level),
- Δ = ω − ω₀ (the excess over chance: 0 in expectation under H0 at every k, because
  T_obs is one exchangeable draw of the re-split distribution),
- ω* = Δ / (ω_max − ω₀) (`definitions.standardised_effect`: the chance-corrected effect,
  0 at the null's level, 1 at the largest ω possible),
- z = Δ / SD₀ (a standardised distance from the null, which grows like √k under a shift:
  evidence, not an effect size).

    .venv/bin/python bench/dbpa_effect_k.py [--reps 100] [--ks 5,10,20,50] [--shift 0.3]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from analysis.dbpa.definitions import DISTANCES, standardised_effect
from analysis.dbpa.statistics import permutation_test

DIM = 384
NOISE = 0.5 / np.sqrt(DIM)
"""Per-coordinate noise: ‖noise‖² ≈ 0.25, so outputs of one condition have cosine ≈ 0.8."""


def draw(rng: np.random.Generator, k: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
    """k baseline and k perturbed unit vectors; the perturbed mean moved by `shift`."""
    centre, direction = np.zeros(DIM), np.zeros(DIM)
    centre[0], direction[1] = 1.0, 1.0
    a = centre + NOISE * rng.normal(size=(k, DIM))
    b = centre + shift * direction + NOISE * rng.normal(size=(k, DIM))
    return (a / np.linalg.norm(a, axis=1, keepdims=True),
            b / np.linalg.norm(b, axis=1, keepdims=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--ks", default="5,10,20,50")
    parser.add_argument("--shift", type=float, default=0.3)
    parser.add_argument("--distances", default=",".join(DISTANCES))
    args = parser.parse_args()
    ks = [int(k) for k in args.ks.split(",")]
    start, cpu = time.perf_counter(), time.process_time()
    print(f"load {os.getloadavg()[0]:.2f}; {args.reps} reps per cell, B = 199, d = {DIM}, "
          f"shift {args.shift}")
    print(f"{'distance':<11}{'case':<7}{'k':>4}{'ω':>9}{'ω₀':>9}{'Δ = ω − ω₀':>12}{'ω*':>9}"
          f"{'z':>8}{'rejected':>10}")
    for distance in args.distances.split(","):
        for case, shift in (("H0", 0.0), ("shift", args.shift)):
            for k in ks:
                rng = np.random.default_rng(k)
                rows = []
                for rep in range(args.reps):
                    a, b = draw(rng, k, shift)
                    r = permutation_test(a, b, distance=distance, permutations_count=199,
                                         seed=rep)
                    delta = r.effect_size - r.null_mean
                    rows.append((r.effect_size, r.null_mean, delta,
                                 standardised_effect(r.effect_size, r.null_mean, distance),
                                 delta / r.null_sd if r.null_sd > 0 else 0.0,
                                 r.p_value <= 0.05))
                m = np.mean(rows, axis=0)
                print(f"{distance:<11}{case:<7}{k:>4}{m[0]:>9.4f}{m[1]:>9.4f}{m[2]:>12.4f}"
                      f"{m[3]:>9.4f}{m[4]:>8.2f}{m[5]:>10.3f}")
    print(f"wall {time.perf_counter() - start:.1f} s, CPU {time.process_time() - cpu:.1f} s, "
          f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
