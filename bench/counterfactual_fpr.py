"""Benchmark: the null false-positive rate of every seed-000 test at 3 to 30 items.

Null design — Appendix F's Eq. 8 at σ_pert = 0, so the targeted and the baseline arm are
exchangeable: per simulation, N original logits z ~ N(--z-mean, --z-sd²), targeted logits
z + ε and baseline logits z + ε′ with ε, ε′ ~ N(0, σ²) independent; option distributions
(sigmoid, 1 − sigmoid); one binary answer per prompt drawn y ~ Bernoulli(p); a signed
direction dᵢ = ±1 per item (a gender swap's). Each simulation is one `Comparison` run through
`analysis.counterfactual.comparison.compare` — the very function the study report calls —
so all seven tests are measured as shipped: the paired bootstrap of MI, φ and FR (B =
--n-boot), the paired t-tests of JSD and KL, the difference model and the level model.

FPR = share of simulations with p < α (an undefined p counts as not rejected); the 95%
interval is the Wilson score interval of that binomial share. The target (issue 23) is every
test in [0.03, 0.07] from 5 items on.

    .venv/bin/python bench/counterfactual_fpr.py                       # 2,000 sims per N
    .venv/bin/python bench/counterfactual_fpr.py --sims 200 --n-boot 200   # quick look
    .venv/bin/python bench/counterfactual_fpr.py --sides two           # the authors' tests
    .venv/bin/python bench/counterfactual_fpr.py --designs all --items 15,30,100 --sims 1000
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from analysis.counterfactual import comparison as cfc
from analysis.counterfactual import definitions as cfd

TESTS = ("jsd", "kl", "mi", "phi", "fr", "beta_diff", "beta_level")
TARGET = (0.03, 0.07)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def simulate(n: int, sims: int, *, sigma: float, z_mean: float, z_sd: float, n_boot: int,
             alpha: float, sides: cfd.Sides, seed: int) -> dict[str, int]:
    """Rejections per test over `sims` null simulations of `n` items."""
    rng = np.random.default_rng([seed, n])
    rejections = dict.fromkeys(TESTS, 0)
    for sim in range(sims):
        z = rng.normal(z_mean, z_sd, n)
        p = _sigmoid(z)
        p_t = _sigmoid(z + rng.normal(0.0, sigma, n))
        p_b = _sigmoid(z + rng.normal(0.0, sigma, n))
        # Code 0 = the first label ('Yes'), as `logit_first` reads it.
        answers = [np.where(rng.random(n) < q, 0, 1) for q in (p, p_t, p_b)]
        comparison = cfc.Comparison(
            "sim", "null", "t", "b", "main", ("Yes", "No"), np.arange(n), *answers,
            np.column_stack([p, 1 - p]), np.column_stack([p_t, 1 - p_t]),
            np.column_stack([p_b, 1 - p_b]), rng.choice([-1.0, 1.0], n))
        for result in cfc.compare(comparison, n_boot=n_boot, seed=sim, sides=sides):
            if math.isfinite(result.p) and result.p < alpha:
                rejections[result.measure] += 1
    return rejections


def wilson(k: int, n: int) -> tuple[float, float]:
    """The Wilson score 95% interval of k successes in n trials."""
    if n == 0:
        return math.nan, math.nan
    z = 1.959964
    share = k / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


DESIGNS: dict[str, tuple[float, float, float]] = {
    "bench": (0.5, 0.0, 2.0),
    "confident": (0.2, 2.0, 1.0),
    "uncertain": (1.0, 0.0, 0.5),
}
"""Null designs (σ, z mean, z sd) of `--designs`: 'bench' is the one the tables in
docs/counterfactual.md were first measured in (answers spread over both labels, moderate
noise); 'confident' a model sure of one label on most items (p ≈ 0.88) with small
prompt-to-prompt noise, so most answers agree; 'uncertain' answers near a coin flip with
large noise, so most answers differ between prompts."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", default="3,5,10,15,20,30", help="comma-separated N")
    parser.add_argument("--sims", type=int, default=2000)
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--sigma", type=float, default=0.5)
    parser.add_argument("--z-mean", type=float, default=0.0)
    parser.add_argument("--z-sd", type=float, default=2.0)
    parser.add_argument("--designs", default=None,
                        help=f"named null designs, comma-separated, or 'all' "
                             f"({', '.join(DESIGNS)}); they replace --sigma/--z-mean/--z-sd")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--sides", choices=[s.value for s in cfd.Sides], default="one")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.designs is None:
        run(args, "custom", args.sigma, args.z_mean, args.z_sd)
        return
    names = list(DESIGNS) if args.designs == "all" else args.designs.split(",")
    for name in names:
        run(args, name, *DESIGNS[name])
        print()


def run(args: argparse.Namespace, name: str, sigma: float, z_mean: float, z_sd: float) -> None:
    """One null design's table."""
    sizes = [int(x) for x in args.items.split(",")]
    print(f"design {name}: null FPR at α = {args.alpha} ({args.sides}-sided), {args.sims} "
          f"simulations per N, B = {args.n_boot}, σ = {sigma}, z ~ N({z_mean}, {z_sd}²)")
    print(f"{'test':<11}" + "".join(f"{'N = ' + str(n):>24}" for n in sizes))
    started = time.perf_counter()
    table = {n: simulate(n, args.sims, sigma=sigma, z_mean=z_mean, z_sd=z_sd,
                         n_boot=args.n_boot, alpha=args.alpha, sides=cfd.Sides(args.sides),
                         seed=args.seed) for n in sizes}
    elapsed = time.perf_counter() - started
    misses = []
    for test in TESTS:
        cells = []
        for n in sizes:
            k = table[n][test]
            share = k / args.sims
            low, high = wilson(k, args.sims)
            inside = TARGET[0] <= share <= TARGET[1]
            if n >= cfd.MIN_ITEMS and not inside:
                misses.append(f"{cfd.LABELS[test]} at N = {n}: {share:.3f}")
            cells.append(f"{share:.3f} [{low:.3f}, {high:.3f}]{' ' if inside else '!'}")
        print(f"{cfd.LABELS[test]:<11}" + "".join(f"{c:>24}" for c in cells))
    print(f"'!' = outside [{TARGET[0]}, {TARGET[1]}]; {elapsed:.0f} s")
    since = f"from N = {cfd.MIN_ITEMS} on (the report warns below)"
    print(f"every test inside the target {since}" if not misses else
          f"outside the target {since}: " + "; ".join(misses))


if __name__ == "__main__":
    main()
