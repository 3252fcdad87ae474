"""The DBPA permutation test (seed 001), vectorised over re-splits, with ties counted exactly.

From n0 baseline and n1 perturbed output embeddings (L2-normalised rows), the paper builds
P0 = {s(y_i, y_j) : i < j} within the baseline and P1 = {s(y_i, y'_j) : all i, j} across
the conditions, s = cosine similarity, and measures their discrepancy ω(P0, P1); under
H0 the outputs are exchangeable, so re-splitting them at random B times gives the null
distribution and p = (1 + #{ω_b ≥ T_obs}) / (1 + B), T_obs the effect size.

Distances (docs/dbpa.md):
- `jsd`: Jensen–Shannon between histograms of P0 and P1 with `JSD_BINS` equal bins spanning
  [min, max] of P0 ∪ P1 of each split, computed as the authors' released code does it
  (scipy's `jensenshannon`, natural log, which returns the square root of the divergence).
- `energy`: `scipy.stats.energy_distance(P0, P1)` (1-D, between the similarity samples).
- `energy_emb`: energy distance between the two groups' embeddings with cosine distance
  1 − s (V-statistic, diagonals included), the variant of the authors' released code.

Re-splits (`analysis.dbpa.design`): the paper's unpaired design permutes the pool; the
paired design (shared sample seeds) swaps within pairs. Every split — the observed one and
each re-split — goes through the same batch function, and ω_b ≥ T_obs is decided on an
exact integer key where the statistic allows (`energy`, `energy_emb`) and within 1e-12 of
the divergence for `jsd` (`analysis.dbpa.batch`), never on float noise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from analysis.dbpa.definitions import DISTANCES, JSD_BINS, SCALE, SIMILARITY_DECIMALS

if TYPE_CHECKING:
    import numpy as np

    from analysis.dbpa.batch import Scores

__all__ = ["DISTANCES", "JSD_BINS", "SCALE", "SIMILARITY_DECIMALS", "TestResult",
           "discrepancy_batch", "discrepancy_one", "jsd_histogram", "jsd_one",
           "key_at_least", "permutation_test", "permutation_test_loop", "permutations",
           "score_splits", "similarity_grid", "split_key", "split_similarities"]


@dataclass(frozen=True)
class TestResult:
    """One permutation test.

    Attributes:
        effect_size: T_obs = ω(P0, P1) on the observed split.
        p_value: (1 + n_at_least) / (1 + permutations).
        n_at_least: re-splits whose ω ≥ T_obs (ties counted exactly).
        permutations: B.
        identical: every pooled output had the same embedding (ω = 0 on every split).
        null_mean: mean of ω over the B re-splits (ω's level when nothing differs).
        null_sd: standard deviation of ω over the B re-splits.
        design: 'unpaired' (permute the pool) or 'paired' (swap within pairs).
        distinct_splits: N, the number of distinct re-splits of this design.
        p_floor: the smallest p this test could expect (`design.smallest_p`).
    """

    effect_size: float
    p_value: float
    n_at_least: int
    permutations: int
    identical: bool
    null_mean: float
    null_sd: float
    design: str
    distinct_splits: int
    p_floor: float


def similarity_grid(vectors: np.ndarray) -> np.ndarray:
    """Cosine similarities of L2-normalised rows as integers round(s·SCALE), s clipped to
    [-1, 1] (computed in float64).

    Equal rows get equal rows of the grid: the products are computed between distinct
    vectors only, so a duplicated output is the same number everywhere it appears (BLAS
    may round the same dot product differently at different positions)."""
    import numpy as np

    z = np.asarray(vectors, dtype=np.float64)
    unique, inverse = np.unique(z, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    grid = np.rint(np.clip(unique @ unique.T, -1.0, 1.0) * SCALE).astype(np.int32)
    return grid[np.ix_(inverse, inverse)]


def split_similarities(grid: np.ndarray, first: np.ndarray, second: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
    """P0 (pairs i < j within `first`) and P1 (every pair across) of one split, as floats."""
    import numpy as np

    upper = np.triu_indices(len(first), k=1)
    within = grid[np.ix_(first, first)][upper]
    across = grid[np.ix_(first, second)].ravel()
    return within / SCALE, across / SCALE


# ---------------------------------------------------------------- one split (reference)


def jsd_histogram(p0: np.ndarray, p1: np.ndarray, bins: int = JSD_BINS) -> float:
    """ω_JSD as the authors' released code computes it: `np.histogram` over `bins` edges
    from `np.linspace(min, max)` of P0 ∪ P1, then SciPy's `jensenshannon` (cross-check)."""
    import numpy as np
    from scipy.spatial.distance import jensenshannon

    lo, hi = min(p0.min(), p1.min()), max(p0.max(), p1.max())
    if hi <= lo:
        return 0.0  # one spike at the same value: the two histograms are equal
    edges = np.linspace(lo, hi, bins + 1)
    h0, _ = np.histogram(p0, bins=edges, density=True)
    h1, _ = np.histogram(p1, bins=edges, density=True)
    return float(jensenshannon(h0, h1))


def jsd_one(p0: np.ndarray, p1: np.ndarray, bins: int = JSD_BINS) -> float:
    """ω_JSD of one split, plainly: bin ⌊bins·(v − min)/(max − min)⌋ on the integer grid
    (the maximum in the last bin), proportions, then SciPy's `jensenshannon`."""
    import numpy as np
    from scipy.spatial.distance import jensenshannon

    a, b = np.rint(p0 * SCALE).astype(np.int64), np.rint(p1 * SCALE).astype(np.int64)
    lo, hi = min(a.min(), b.min()), max(a.max(), b.max())
    if hi <= lo:
        return 0.0
    h0 = np.bincount(np.minimum((a - lo) * bins // (hi - lo), bins - 1), minlength=bins)
    h1 = np.bincount(np.minimum((b - lo) * bins // (hi - lo), bins - 1), minlength=bins)
    return float(jensenshannon(h0 / len(a), h1 / len(b)))


def discrepancy_one(grid: np.ndarray, first: np.ndarray, second: np.ndarray,
                    distance: str) -> float:
    """ω of one split, computed plainly in floats (SciPy per split)."""
    import numpy as np
    from scipy.stats import energy_distance

    if distance == "energy_emb":
        d = 1.0 - grid / SCALE
        n, m = len(first), len(second)
        return float(2.0 / (n * m) * d[np.ix_(first, second)].sum()
                     - d[np.ix_(first, first)].sum() / n ** 2
                     - d[np.ix_(second, second)].sum() / m ** 2)
    p0, p1 = split_similarities(grid, first, second)
    if distance == "jsd":
        return jsd_one(p0, p1)
    if distance == "energy":
        return float(energy_distance(p0, p1))
    raise ValueError(f"distance must be one of {DISTANCES}, got {distance!r}")


# ---------------------------------------------------------------- many splits at once


def score_splits(grid: np.ndarray, perms: np.ndarray, n0: int, distance: str,
                 workers: int | None = None) -> Scores:
    """ω and tie keys of every split in `perms` (shape (B, n0 + n1)), in blocks of `CHUNK`.

    Blocks run on `workers` threads (default: the CPU count, at most 4): NumPy releases the
    GIL inside its array loops, so two cores nearly halve the time. Each row's ω depends
    only on its own split, so the result does not depend on the blocking.
    """
    import os

    from analysis.dbpa.batch import CHUNK, block_scores, concatenate

    if distance not in DISTANCES:
        raise ValueError(f"distance must be one of {DISTANCES}, got {distance!r}")
    blocks = [perms[start:start + CHUNK] for start in range(0, len(perms), CHUNK)]
    workers = workers or min(4, os.cpu_count() or 1)
    if workers <= 1 or len(blocks) == 1:
        return concatenate([block_scores(grid, b, n0, distance) for b in blocks])
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_limits

    # One BLAS thread per worker (energy_emb multiplies matrices): nested BLAS threads on
    # top of the workers oversubscribe the cores.
    with threadpool_limits(limits=1, user_api="blas"), \
            ThreadPoolExecutor(max_workers=workers) as pool:
        parts = list(pool.map(lambda b: block_scores(grid, b, n0, distance), blocks))
    return concatenate(parts)


def discrepancy_batch(grid: np.ndarray, perms: np.ndarray, n0: int, distance: str,
                      workers: int | None = None) -> np.ndarray:
    """ω of every split in `perms` (the floats of `score_splits`)."""
    return score_splits(grid, perms, n0, distance, workers).omega


def permutations(n0: int, n1: int, count: int, seed: int) -> np.ndarray:
    """`count` random orderings of the pooled indices 0..n0+n1−1 (rows), from `seed`
    (the unpaired design's re-splits, `design.resplits`)."""
    from analysis.dbpa.design import resplits

    return resplits(n0, n1, count, seed, "unpaired")


def _check(baseline: np.ndarray, perturbed: np.ndarray, count: int, design: str) -> None:
    from analysis.dbpa.design import DESIGNS

    if len(baseline) < 2 or len(perturbed) < 2:
        raise ValueError(f"a DBPA test needs at least 2 outputs per condition, got "
                         f"{len(baseline)} and {len(perturbed)}")
    if count < 1:
        raise ValueError(f"permutations must be at least 1, got {count}")
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {DESIGNS}, got {design!r}")
    if design == "paired" and len(baseline) != len(perturbed):
        raise ValueError(f"a paired test needs one perturbed output per baseline output, "
                         f"got {len(baseline)} and {len(perturbed)}")


def permutation_test(baseline: np.ndarray, perturbed: np.ndarray, *, distance: str = "jsd",
                     permutations_count: int = 1000, seed: int = 0,
                     design: str = "unpaired") -> TestResult:
    """DBPA's test of H0: D_x = D_x' from the embeddings of the two conditions' outputs.

    Args:
        baseline: n0 × d L2-normalised embeddings of the baseline outputs (n0 ≥ 2).
        perturbed: n1 × d embeddings of the perturbed outputs (n1 ≥ 2; in the paired
            design row i is the partner of baseline row i).
        distance: 'jsd', 'energy' or 'energy_emb'.
        permutations_count: B.
        seed: seed of the B re-splits (use the same for every embedder and distance of one
            test, so they differ only in what they measure).
        design: 'unpaired' (permute the pool, independent samples) or 'paired' (swap
            within pairs, samples drawn with shared seeds).

    Returns:
        T_obs, p = (1 + count)/(1 + B) with ties counted exactly, the count, ω's mean and
        SD over the re-splits, and the test's smallest expected p.
    """
    import numpy as np

    from analysis.dbpa.design import distinct_splits, resplits, smallest_p

    _check(baseline, perturbed, permutations_count, design)
    pooled = np.vstack([baseline, perturbed])
    grid = similarity_grid(pooled)
    n0, n1 = len(baseline), len(perturbed)
    identity = np.arange(len(pooled))[None, :]
    observed = score_splits(grid, identity, n0, distance)
    null = score_splits(grid, resplits(n0, n1, permutations_count, seed, design), n0,
                        distance)
    count = int(null.at_least(observed).sum())
    return TestResult(
        float(observed.omega[0]), (1 + count) / (1 + permutations_count), count,
        permutations_count, bool(np.all(grid == SCALE)), float(null.omega.mean()),
        float(null.omega.std()), design, distinct_splits(n0, n1, design),
        smallest_p(n0, n1, permutations_count, distance, design))


def split_key(grid: np.ndarray, first: np.ndarray, second: np.ndarray,
              distance: str) -> float:
    """The tie key of one split, computed plainly (Python integers where exact): the
    reference for `batch`'s vectorised keys.

    `energy`: Σ over the gaps between the distinct pooled values of width·(c0·a − c1·b)²;
    `energy_emb`: m²·S_XX + n²·S_YY − 2nm·S_XY clipped at 0; `jsd`: the divergence D.
    """
    import itertools
    import math

    import numpy as np

    if distance == "energy_emb":
        n, m = len(first), len(second)
        block = grid.astype(np.int64)
        s_xx = int(block[np.ix_(first, first)].sum())
        s_yy = int(block[np.ix_(second, second)].sum())
        s_xy = int(block[np.ix_(first, second)].sum())
        return max(m * m * s_xx + n * n * s_yy - 2 * n * m * s_xy, 0)
    upper = np.triu_indices(len(first), k=1)
    within = sorted(int(v) for v in grid[np.ix_(first, first)][upper])
    across = sorted(int(v) for v in grid[np.ix_(first, second)].ravel())
    if distance == "jsd":
        return jsd_one(np.array(within) / SCALE, np.array(across) / SCALE) ** 2
    n0, n1 = len(within), len(across)
    g = math.gcd(n0, n1)
    a, b = n1 // g, n0 // g
    values = sorted(set(within) | set(across))
    key = i0 = i1 = 0
    for here, after in itertools.pairwise(values):
        while i0 < n0 and within[i0] <= here:
            i0 += 1
        while i1 < n1 and across[i1] <= here:
            i1 += 1
        key += (after - here) * (i0 * a - i1 * b) ** 2
    return key


def key_at_least(key: float, observed: float, distance: str) -> bool:
    """The tie rule of `split_key` keys: exact for integers, within the JSD tolerance for
    the divergence (`batch.JSD_TIE_TOLERANCE`)."""
    from analysis.dbpa.batch import JSD_TIE_TOLERANCE

    if distance == "jsd":
        return key >= observed - JSD_TIE_TOLERANCE
    return key >= observed


def permutation_test_loop(baseline: np.ndarray, perturbed: np.ndarray, *,
                          distance: str = "jsd", permutations_count: int = 1000,
                          seed: int = 0, design: str = "unpaired") -> TestResult:
    """The same test, one re-split at a time in Python with NumPy/SciPy per split (the
    reference the vectorised test is checked and benchmarked against): the same re-splits,
    ω from SciPy, ties decided on `split_key`."""
    import numpy as np

    from analysis.dbpa.design import distinct_splits, resplits, smallest_p

    _check(baseline, perturbed, permutations_count, design)
    pooled = np.vstack([baseline, perturbed])
    grid = similarity_grid(pooled)
    n0, n1 = len(baseline), len(perturbed)
    index = np.arange(len(pooled))
    observed = split_key(grid, index[:n0], index[n0:], distance)
    count, omegas = 0, []
    for perm in resplits(n0, n1, permutations_count, seed, design):
        first, second = perm[:n0], perm[n0:]
        count += key_at_least(split_key(grid, first, second, distance), observed, distance)
        omegas.append(discrepancy_one(grid, first, second, distance))
    effect = discrepancy_one(grid, index[:n0], index[n0:], distance)
    if distance == "energy_emb":
        effect = max(effect, 0.0)  # ‖x̄ − ȳ‖² ≥ 0: below 0 is rounding (`batch`)
    return TestResult(
        effect, (1 + count) / (1 + permutations_count), count, permutations_count,
        bool(np.all(grid == SCALE)), float(np.mean(omegas)), float(np.std(omegas)), design,
        distinct_splits(n0, n1, design),
        smallest_p(n0, n1, permutations_count, distance, design))
