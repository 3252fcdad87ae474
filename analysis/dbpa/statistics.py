"""The DBPA permutation test (seed 001), vectorised over permutations.

From n0 baseline and n1 perturbed output embeddings (L2-normalised rows), the paper builds
P0 = {s(y_i, y_j) : i < j} within the baseline and P1 = {s(y_i, y'_j) : all i, j} across
the conditions, s = cosine similarity, and measures their discrepancy ω(P0, P1); under
H0 the pooled outputs are exchangeable, so re-splitting the pool at random B times gives
the null distribution and p = (1 + #{ω_b ≥ T_obs}) / (1 + B), T_obs the effect size.

Distances (docs/dbpa.md):
- `jsd`: Jensen–Shannon between histograms of P0 and P1 with `JSD_BINS` equal bins spanning
  [min, max] of P0 ∪ P1 of each split, computed as the authors' released code does it
  (scipy's `jensenshannon`, natural log, which returns the square root of the divergence).
- `energy`: `scipy.stats.energy_distance(P0, P1)` (1-D, between the similarity samples).
- `energy_emb`: energy distance between the two groups' embeddings with cosine distance
  1 − s (V-statistic, diagonals included), the variant of the authors' released code.

Every split — the observed one and each permutation — goes through the same batch
function, so ties (identical outputs: every ω is 0) count exactly and p = 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

DISTANCES: tuple[str, ...] = ("jsd", "energy", "energy_emb")
"""Discrepancies ω a test may use."""

JSD_BINS = 30
"""Histogram bins of the JSD (the authors' released code's default)."""

SIMILARITY_DECIMALS = 6
"""Cosine similarities are rounded to this many decimals: float32 embeddings carry about
seven significant digits, and rounding makes equal texts exactly equal (identical outputs
then give ω = 0 on every split instead of noise in the last bits)."""

CHUNK = 500
"""Permutations evaluated per vectorised block (bounds memory to ~20 MB at k = 50)."""


@dataclass(frozen=True)
class TestResult:
    """One permutation test.

    Attributes:
        effect_size: T_obs = ω(P0, P1) on the observed split.
        p_value: (1 + n_at_least) / (1 + permutations).
        n_at_least: permutations whose ω ≥ T_obs.
        permutations: B.
        identical: every pooled output had the same embedding (ω = 0 on every split).
    """

    effect_size: float
    p_value: float
    n_at_least: int
    permutations: int
    identical: bool


SCALE = 10 ** SIMILARITY_DECIMALS
"""Similarities are held as integers s·SCALE, so bins, sorting and ties are exact."""


def similarity_grid(vectors: np.ndarray) -> np.ndarray:
    """Cosine similarities of L2-normalised rows as integers round(s·SCALE), s clipped to
    [-1, 1] (computed in float64)."""
    import numpy as np

    z = np.asarray(vectors, dtype=np.float64)
    return np.rint(np.clip(z @ z.T, -1.0, 1.0) * SCALE).astype(np.int32)


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
    """ω of one split, computed plainly (the per-permutation loop's statistic)."""
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


def _gather(grid: np.ndarray, perms: np.ndarray, n0: int) -> tuple[np.ndarray, np.ndarray]:
    """P0 and P1 (integer similarities) of every split in `perms` (rows: pooled indices,
    the first n0 form the baseline group)."""
    import numpy as np

    ti, tj = np.triu_indices(n0, k=1)
    gram = grid
    first, second = perms[:, :n0], perms[:, n0:]
    within = gram[first[:, ti], first[:, tj]]
    across = gram[first[:, :, None], second[:, None, :]].reshape(len(perms), -1)
    return within, across


def _bins(values: np.ndarray, lo: np.ndarray, span: np.ndarray, bins: int) -> np.ndarray:
    """Per-row bin ⌊bins·(v − lo)/span⌋ of integer similarities, the maximum in the last
    bin; 0 everywhere when a row's span is 0.

    Exact although computed in float64: bins·(v − lo) and span are integers below 2^53, and
    IEEE division is correctly rounded, so a quotient just under an integer never rounds
    up to it (and float division vectorises where integer division does not)."""
    import numpy as np

    numerator = (values - lo[:, None]).astype(np.float64)
    numerator *= bins
    numerator /= np.maximum(span, 1)[:, None]
    index = numerator.astype(np.intp)
    return np.minimum(index, bins - 1, out=index)


def _jsd_counts(within: np.ndarray, across: np.ndarray, bins: int = JSD_BINS
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Histograms (as proportions) of P0 and P1 per row, and each row's span."""
    import numpy as np

    rows = len(within)
    lo = np.minimum(within.min(axis=1), across.min(axis=1))
    span = np.maximum(within.max(axis=1), across.max(axis=1)) - lo
    offsets = (np.arange(rows) * bins)[:, None]
    shares = []
    for values in (within, across):
        index = _bins(values, lo, span, bins)
        index += offsets
        counts = np.bincount(index.ravel(), minlength=rows * bins).reshape(rows, bins)
        shares.append(counts / values.shape[1])
    return shares[0], shares[1], span


def _jsd_batch(within: np.ndarray, across: np.ndarray, bins: int = JSD_BINS) -> np.ndarray:
    import numpy as np
    from scipy.special import rel_entr

    p, q, span = _jsd_counts(within, across, bins)
    m = (p + q) / 2.0
    js = np.sqrt(np.maximum((rel_entr(p, m).sum(axis=1) + rel_entr(q, m).sum(axis=1)) / 2.0,
                            0.0))
    return np.where(span > 0, js, 0.0)


def _energy_batch(within: np.ndarray, across: np.ndarray) -> np.ndarray:
    """scipy.stats.energy_distance of each row pair: sqrt(2 ∫ (F0 − F1)²) over the pooled
    sorted values (ties give zero-width steps, as in SciPy's `_cdf_distance`).

    Integer similarities carry their sample in the lowest bit, so one integer sort orders
    values and labels together."""
    import numpy as np

    n0, n1 = within.shape[1], across.shape[1]
    keys = np.concatenate([within * 2, across * 2 + 1],
                          axis=1)
    keys.sort(axis=1)
    step = np.where(keys & 1, -1.0 / n1, 1.0 / n0)
    gap = np.cumsum(step, axis=1)[:, :-1]
    widths = np.diff(keys >> 1, axis=1) / SCALE
    return np.sqrt(2.0 * (gap * gap * widths).sum(axis=1))


def _energy_emb_batch(gram: np.ndarray, perms: np.ndarray, n0: int) -> np.ndarray:
    import numpy as np

    total = len(gram)
    n1 = total - n0
    member = np.zeros((len(perms), total))
    np.put_along_axis(member, perms[:, :n0], 1.0, axis=1)
    other = 1.0 - member
    gram = gram / SCALE
    projected = member @ gram
    within0 = (projected * member).sum(axis=1)
    across = (projected * other).sum(axis=1)
    within1 = ((other @ gram) * other).sum(axis=1)
    # d = 1 − s: Σ d over a block of a×b pairs is a·b − Σ s.
    return (2.0 / (n0 * n1) * (n0 * n1 - across) - (n0 * n0 - within0) / n0 ** 2
            - (n1 * n1 - within1) / n1 ** 2)


def _block(grid: np.ndarray, block: np.ndarray, n0: int, distance: str) -> np.ndarray:
    if distance == "energy_emb":
        return _energy_emb_batch(grid, block, n0)
    within, across = _gather(grid, block, n0)
    return _jsd_batch(within, across) if distance == "jsd" else _energy_batch(within, across)


def discrepancy_batch(grid: np.ndarray, perms: np.ndarray, n0: int, distance: str,
                      workers: int | None = None) -> np.ndarray:
    """ω of every split in `perms` (shape (B, n0 + n1)), vectorised in blocks of `CHUNK`.

    Blocks run on `workers` threads (default: the CPU count, at most 4): NumPy releases the
    GIL inside its array loops, so two cores nearly halve the time. Each row's ω depends
    only on its own split, so the result does not depend on the blocking.
    """
    import os

    import numpy as np

    if distance not in DISTANCES:
        raise ValueError(f"distance must be one of {DISTANCES}, got {distance!r}")
    blocks = [perms[start:start + CHUNK] for start in range(0, len(perms), CHUNK)]
    workers = workers or min(4, os.cpu_count() or 1)
    if workers <= 1 or len(blocks) == 1:
        return np.concatenate([_block(grid, b, n0, distance) for b in blocks])
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_limits

    # One BLAS thread per worker (energy_emb multiplies matrices): nested BLAS threads on
    # top of the workers oversubscribe the cores.
    with threadpool_limits(limits=1, user_api="blas"), \
            ThreadPoolExecutor(max_workers=workers) as pool:
        parts = list(pool.map(lambda b: _block(grid, b, n0, distance), blocks))
    return np.concatenate(parts)


def permutations(n0: int, n1: int, count: int, seed: int) -> np.ndarray:
    """`count` random orderings of the pooled indices 0..n0+n1−1 (rows), from `seed`."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return rng.permuted(np.tile(np.arange(n0 + n1), (count, 1)), axis=1)


def _check(baseline: np.ndarray, perturbed: np.ndarray, count: int) -> None:
    if len(baseline) < 2 or len(perturbed) < 2:
        raise ValueError(f"a DBPA test needs at least 2 outputs per condition, got "
                         f"{len(baseline)} and {len(perturbed)}")
    if count < 1:
        raise ValueError(f"permutations must be at least 1, got {count}")


def permutation_test(baseline: np.ndarray, perturbed: np.ndarray, *, distance: str = "jsd",
                     permutations_count: int = 1000, seed: int = 0) -> TestResult:
    """DBPA's test of H0: D_x = D_x' from the embeddings of the two conditions' outputs.

    Args:
        baseline: n0 × d L2-normalised embeddings of the baseline outputs (n0 ≥ 2).
        perturbed: n1 × d embeddings of the perturbed outputs (n1 ≥ 2).
        distance: 'jsd', 'energy' or 'energy_emb'.
        permutations_count: B.
        seed: seed of the B re-splits (use the same for every embedder and distance of one
            test, so they differ only in what they measure).

    Returns:
        The effect size T_obs, p = (1 + count)/(1 + B) and the count.
    """
    import numpy as np

    _check(baseline, perturbed, permutations_count)
    pooled = np.vstack([baseline, perturbed])
    gram = similarity_grid(pooled)
    n0 = len(baseline)
    identity = np.arange(len(pooled))[None, :]
    observed = float(discrepancy_batch(gram, identity, n0, distance)[0])
    null = discrepancy_batch(gram, permutations(n0, len(perturbed), permutations_count, seed),
                             n0, distance)
    count = int((null >= observed).sum())
    return TestResult(observed, (1 + count) / (1 + permutations_count), count,
                      permutations_count, bool(np.all(gram == SCALE)))


def permutation_test_loop(baseline: np.ndarray, perturbed: np.ndarray, *,
                          distance: str = "jsd", permutations_count: int = 1000,
                          seed: int = 0) -> TestResult:
    """The same test, one permutation at a time in Python with NumPy/SciPy per split (the
    reference the vectorised test is checked and benchmarked against; same re-splits)."""
    import numpy as np

    _check(baseline, perturbed, permutations_count)
    pooled = np.vstack([baseline, perturbed])
    gram = similarity_grid(pooled)
    n0 = len(baseline)
    index = np.arange(len(pooled))
    observed = discrepancy_one(gram, index[:n0], index[n0:], distance)
    count = 0
    for perm in permutations(n0, len(perturbed), permutations_count, seed):
        if discrepancy_one(gram, perm[:n0], perm[n0:], distance) >= observed:
            count += 1
    return TestResult(observed, (1 + count) / (1 + permutations_count), count,
                      permutations_count, bool(np.all(gram == SCALE)))
