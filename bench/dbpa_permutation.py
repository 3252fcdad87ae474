"""DBPA permutation test: vectorised (analysis.dbpa.statistics) vs a per-permutation Python loop.

Both run the same B re-splits of the same pooled embeddings (k baseline + k perturbed
unit vectors of MiniLM's width, 384) and must count the same number of splits with
ω ≥ T_obs; the script prints wall and CPU time of each, side by side, and their ratio.

Two loops: `permutation_test_loop` (the test's own reference: for each permutation, index
the pooled similarity matrix once computed, build P0 and P1, call NumPy/SciPy per split;
it must count the same splits) and a research-script loop that, like the authors'
released code, recomputes the cosine similarities of each re-split from the embeddings
(scikit-learn's cosine_similarity) before the same per-split statistic. The vectorised test gathers P0 and P1 of 500 splits at once, bins them
with integer arithmetic and one bincount, sorts once for the energy distance, and runs its
blocks on up to 4 threads (NumPy releases the GIL in its loops).

    .venv/bin/python bench/dbpa_permutation.py [--k 50] [--perms 10000] [--distance jsd,...]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from analysis.dbpa.statistics import DISTANCES, permutation_test, permutation_test_loop


def timed(fn):
    """(result, wall seconds, CPU seconds of this process)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def research_loop(baseline: np.ndarray, perturbed: np.ndarray, distance: str, perms: int,
                  seed: int) -> int:
    """Per permutation: re-split the embeddings, recompute P0 and P1 from them, then ω."""
    from scipy.stats import energy_distance
    from sklearn.metrics.pairwise import cosine_similarity

    from analysis.dbpa.statistics import jsd_histogram, permutations

    def omega(first: np.ndarray, second: np.ndarray) -> float:
        if distance == "energy_emb":
            n, m = len(first), len(second)
            return (2 / (n * m) * (1 - cosine_similarity(first, second)).sum()
                    - (1 - cosine_similarity(first)).sum() / n ** 2
                    - (1 - cosine_similarity(second)).sum() / m ** 2)
        within = cosine_similarity(first)[np.triu_indices(len(first), k=1)]
        across = cosine_similarity(first, second).ravel()
        return jsd_histogram(within, across) if distance == "jsd" else \
            energy_distance(within, across)

    pooled = np.vstack([baseline, perturbed])
    k = len(baseline)
    observed = omega(baseline, perturbed)
    return sum(omega(pooled[p[:k]], pooled[p[k:]]) >= observed
               for p in permutations(k, len(perturbed), perms, seed))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--perms", type=int, default=10_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--distance", default=",".join(DISTANCES))
    parser.add_argument("--loop-perms", type=int, default=None,
                        help="permutations for the loop (default: the same B)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    centre = rng.normal(size=args.dim)

    def draw(shift: float) -> np.ndarray:
        x = centre + 0.8 * rng.normal(size=(args.k, args.dim))
        x[:, 0] += shift
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    baseline, perturbed = draw(0.0), draw(0.5)
    loop_perms = args.loop_perms or args.perms
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    print(f"k = {args.k} per condition, dim {args.dim}, B = {args.perms} "
          f"(loop: {loop_perms}); {os.cpu_count()} cores, 1-min load {load:.1f}")
    print(f"{'distance':<11}{'vectorised wall':>16}{'cpu':>8}{'loop wall':>11}{'cpu':>8}"
          f"{'ratio (wall)':>14}{'ratio (cpu)':>13}  same count  | research loop wall, cpu, "
          f"ratio (cpu)")
    for distance in args.distance.split(","):
        fast, fast_wall, fast_cpu = timed(lambda d=distance: permutation_test(
            baseline, perturbed, distance=d, permutations_count=args.perms, seed=1))
        slow, slow_wall, slow_cpu = timed(lambda d=distance: permutation_test_loop(
            baseline, perturbed, distance=d, permutations_count=loop_perms, seed=1))
        # Per-permutation cost scaled to the same B when the loop ran fewer.
        scale = args.perms / loop_perms
        same = fast.n_at_least == slow.n_at_least if scale == 1 else "n/a"
        print(f"{distance:<11}{fast_wall:>14.2f} s{fast_cpu:>6.2f} s{slow_wall * scale:>9.2f} s"
              f"{slow_cpu * scale:>6.2f} s{slow_wall * scale / fast_wall:>13.1f}x"
              f"{slow_cpu * scale / fast_cpu:>12.1f}x  {same} (p = {fast.p_value:.4f})", end="")
        _, naive_wall, naive_cpu = timed(lambda d=distance: research_loop(
            baseline, perturbed, d, loop_perms, 1))
        print(f"  | {naive_wall * scale:.2f} s, {naive_cpu * scale:.2f} s, "
              f"{naive_cpu * scale / fast_cpu:.1f}x")


if __name__ == "__main__":
    main()
