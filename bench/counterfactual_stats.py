"""Benchmark: seed-000 statistics at scale, vectorised against a straightforward per-replicate loop.

Workload (issue #9): 10,000 items × 4 targeted perturbations × 2 baselines, k = 3 samples per
prompt, B = 1,000 bootstrap replicates. Synthetic yes/no answers and distributions drawn
around per-item logits (seeded), so both passes see the same data.

- PAW: `analysis.counterfactual.definitions` — majority votes of all 13 prompt sets (original, 4 targets,
  4 × 2 baselines), then `analyse` on the 8 comparisons: paired bootstrap (MI, φ, FR) as
  one multinomial draw over the 8 joint answer cells per comparison, paired t-tests (JSD,
  KL), both regressions (statsmodels), Bonferroni and Holm within the families.
- Naive: the same votes by a Python loop over prompts, and per comparison a loop over B
  replicates that resamples item indices and recomputes FR, MI and φ from the resampled
  answers (numpy per replicate, the way a research script writes it); t-tests and
  regressions as in PAW (they are not the bottleneck).

Prints both times, the ratio, and the largest difference between the two passes' observed
effects (must be 0: same data) and p-values (different resamples: small, not 0).

    .venv/bin/python bench/counterfactual_stats.py                 # the issue's workload
    .venv/bin/python bench/counterfactual_stats.py --items 2000 --naive-boot 200
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from analysis.counterfactual import comparison as cfc

from analysis.counterfactual import definitions as cfd

from analysis.counterfactual import statistics as cfs

TARGETS = ("gender_swap", "gender_remove", "uncertain", "colorful")
BASELINES = ("adjusted paraphrase", "fixed sentence")


def synthetic(n: int, k: int, seed: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per prompt set: (sample codes (n, k), distributions (n, 2)) around per-item logits."""
    rng = np.random.default_rng(seed)
    z = rng.normal(0.0, 2.0, n)
    sets = {"original": z}
    for i, target in enumerate(TARGETS):
        sets[target] = z + rng.normal(0.0, 0.3 + 0.2 * i, n)
        for baseline in BASELINES:
            sets[f"{target}|{baseline}"] = z + rng.normal(0.0, 0.4, n)
    out = {}
    for name, logits in sets.items():
        p_yes = 1.0 / (1.0 + np.exp(-logits))
        codes = (rng.random((n, k)) >= p_yes[:, None]).astype(int)  # 0 = Yes, 1 = No
        codes[rng.random((n, k)) < 0.05] = -1  # some samples do not parse
        out[name] = (codes, np.column_stack([p_yes, 1.0 - p_yes]))
    return out


def comparisons(votes: dict[str, np.ndarray], data, n: int) -> list[cfc.Comparison]:
    direction = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    out = []
    for target in TARGETS:
        for baseline in BASELINES:
            key = f"{target}|{baseline}"
            out.append(cfc.Comparison("model", target, "task", baseline, "main", ("Yes", "No"),
                                     np.arange(n), votes["original"], votes[target],
                                     votes[key], data["original"][1], data[target][1],
                                     data[key][1], direction))
    return out


def paw_pass(data, n: int, n_boot: int):
    started = time.perf_counter()
    votes = {name: cfd.majority_vote(codes, probs)[0] for name, (codes, probs) in data.items()}
    frame = cfc.analyse(comparisons(votes, data, n), n_boot=n_boot, seed=0)
    return time.perf_counter() - started, frame


def _naive_vote(codes: np.ndarray, probs: np.ndarray) -> np.ndarray:
    answers = np.full(len(codes), -1)
    for i, row in enumerate(codes):
        counts: dict[int, int] = {}
        for c in row:
            if c >= 0:
                counts[int(c)] = counts.get(int(c), 0) + 1
        if counts:
            top = max(counts.values())
            tied = [c for c, v in counts.items() if v == top]
            answers[i] = max(tied, key=lambda c: probs[i, c])
    return answers


def _metrics(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """FR, MI (bits), φ of two 0/1 answer vectors, straight from the 2×2 table."""
    t = np.bincount(a * 2 + b, minlength=4).reshape(2, 2) / len(a)
    fr = t[0, 1] + t[1, 0]
    rows, cols = t.sum(1), t.sum(0)
    mi = sum(t[i, j] * math.log2(t[i, j] / (rows[i] * cols[j]))
             for i in range(2) for j in range(2) if t[i, j] > 0)
    den = math.sqrt(rows[0] * rows[1] * cols[0] * cols[1])
    phi = (t[1, 1] * t[0, 0] - t[1, 0] * t[0, 1]) / den if den > 0 else 0.0
    return fr, mi, phi


def naive_pass(data, n: int, n_boot: int):
    started = time.perf_counter()
    votes = {name: _naive_vote(codes, probs) for name, (codes, probs) in data.items()}
    rng = np.random.default_rng(0)
    rows = []
    for c in comparisons(votes, data, n):
        keep = (c.orig >= 0) & (c.targeted >= 0) & (c.based >= 0)
        o, t, b = c.orig[keep], c.targeted[keep], c.based[keep]
        observed_t, observed_b = _metrics(o, t), _metrics(o, b)
        deltas = []
        for _ in range(n_boot):
            idx = rng.integers(0, len(o), len(o))
            mt, mb = _metrics(o[idx], t[idx]), _metrics(o[idx], b[idx])
            deltas.append([x - y for x, y in zip(mt, mb)])
        deltas = np.array(deltas)
        for j, metric in enumerate(("fr", "mi", "phi")):
            p = np.mean(deltas[:, j] <= 0) if metric == "fr" else np.mean(deltas[:, j] >= 0)
            rows.append((c.target, c.baseline, metric, observed_t[j] - observed_b[j], p))
        p_orig = c.p_orig
        for metric, fn in (("jsd", cfd.js_divergence), ("kl", cfd.kl_divergence)):
            cfs.paired_t_test(metric, fn(p_orig, c.p_target), fn(p_orig, c.p_base))
        y_t, y_b = cfd.logit_first(c.p_target), cfd.logit_first(c.p_base)
        cfs.difference_model(y_t - y_b, c.direction)
        cfs.level_model(y_t, y_b, cfd.logit_first(p_orig), c.direction, c.items)
    return time.perf_counter() - started, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--naive-boot", type=int, default=None,
                        help="replicates of the naive loop (default: --n-boot); its time is "
                             "scaled to --n-boot when fewer")
    args = parser.parse_args()
    import statsmodels.api  # noqa: F401  (imported once, outside both timings)

    data = synthetic(args.items, args.samples, seed=1)
    cfc.analyse(comparisons({k: cfd.majority_vote(*v)[0] for k, v in data.items()}, data,
                           args.items)[:1], n_boot=10)  # warm up lazy imports
    paw_s, frame = paw_pass(data, args.items, args.n_boot)
    naive_boot = args.naive_boot or args.n_boot
    naive_s, naive_rows = naive_pass(data, args.items, naive_boot)
    naive_scaled = naive_s * args.n_boot / naive_boot if naive_boot != args.n_boot else naive_s
    effects, pvalues = [], []
    for target, baseline, metric, effect, p in naive_rows:
        row = frame[(frame["target"] == target) & (frame["baseline"] == baseline)
                    & (frame["measure"] == metric)].iloc[0]
        effects.append(abs(row["effect"] - effect))
        pvalues.append(abs(row["p"] - p))
    print(f"workload: {args.items} items × {len(TARGETS)} perturbations × {len(BASELINES)} "
          f"baselines, k = {args.samples}, B = {args.n_boot}")
    print(f"PAW (vectorised)      : {paw_s:6.2f} s  ({len(frame)} tests, corrections included)")
    scaled = f" (measured {naive_s:.2f} s at B = {naive_boot}, scaled)" \
        if naive_boot != args.n_boot else ""
    print(f"naive per-replicate   : {naive_scaled:6.2f} s{scaled}")
    print(f"ratio naive / PAW     : {naive_scaled / paw_s:6.1f}x")
    print(f"max |Δ observed effect| = {max(effects):.2e} (same data: must be 0); "
          f"max |Δ p| = {max(pvalues):.3f} (different resamples)")


if __name__ == "__main__":
    main()
