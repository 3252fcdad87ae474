"""Shared vs independent sample seeds: the coupling on the embedded model, and exact copies.

With shared seeds (sample i of every condition drawn with seed + i) llama.cpp draws the
same random numbers for sample i of the baseline and of the perturbed question, so y_i
and y'_i are coupled, and the 2k outputs are no longer exchangeable as the unpaired
permutation test assumes (`paw dbpa` therefore pairs such tests: bench/dbpa_null_power.py
measures size and power of all three ways under *partial* coupling, where the unpaired
test over-rejects). This script measures:

1. Simulation (no model, seconds): unit-vector "outputs" around a common centre; shared
   seeds modelled as exact copies, y'_i = y_i (+ the shift, under H1), for a share of the
   samples, tested unpaired. Prints the rejection rate at α = 0.05 under a true null and
   the power under a shift, per distance: with exact copies the unpaired test stops
   working (rate 0, power 0) rather than over-rejecting.
2. The embedded model: the identity "perturbation" (both conditions ask the same question,
   H0 true by construction) tested with TF-IDF/JSD, shared vs independent seeds; and the
   coupling under a real edit (M3 distractor): how often sample i of the baseline and of
   the edited question begin with the same 40 characters.

    .venv/bin/python bench/dbpa_seeds.py [--items 6] [--k 6] [--max-tokens 40] [--no-model]
"""

from __future__ import annotations

import argparse

import numpy as np

from analysis.dbpa.statistics import permutation_test
from store import open_db
from store.generations import get_generations
from workbench.engine.variants import question_variant
from workbench.datasets.demo import import_demo
from workbench.dbpa.plan import sample_request
from workbench.dbpa.spec import sample_seed
from workbench.embed import embed_texts, get_embedder
from workbench.models import Runner, default_model
from workbench.perturb import get_operator


def _draw(rng, n: int, centre: np.ndarray, spread: float = 0.15) -> np.ndarray:
    return centre + spread * rng.normal(size=(n, len(centre)))


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def simulate(k: int = 10, reps: int = 300) -> None:
    """Size under H0 and power under a shift, independent vs coupled (shared) samples."""
    from analysis.dbpa.statistics import DISTANCES

    centre, shift = np.zeros(32), np.zeros(32)
    centre[0], shift[1] = 1.0, 0.35
    print(f"simulation: k = {k}, {reps} repetitions, B = 199, rejection rate at 0.05")
    for label, coupled, delta in (("H0, independent", 0.0, 0.0), ("H0, shared (all)", 1.0, 0.0),
                                  ("H0, shared (half)", 0.5, 0.0),
                                  ("shift, independent", 0.0, 1.0),
                                  ("shift, shared (all)", 1.0, 1.0)):
        cells = []
        for distance in DISTANCES:
            rng = np.random.default_rng(1)
            rejected = 0
            for rep in range(reps):
                a = _draw(rng, k, centre)
                b = _draw(rng, k, centre)
                same = rng.random(k) < coupled
                b[same] = a[same]
                b = b + delta * shift
                rejected += permutation_test(_unit(a), _unit(b), distance=distance,
                                             permutations_count=199,
                                             seed=rep).p_value <= 0.05
            cells.append(f"{distance} {rejected / reps:.3f}")
        print(f"  {label:<20} " + "  ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-model", action="store_true", help="only the simulation")
    parser.add_argument("--items", type=int, default=6)
    parser.add_argument("--k", type=int, default=6)
    parser.add_argument("--max-tokens", type=int, default=40)
    parser.add_argument("--db", default="/tmp/paw-dbpa-seeds.db")
    args = parser.parse_args()
    simulate()
    if args.no_model:
        return
    db = open_db(args.db)
    import_demo(db)
    model = default_model(db)
    runner = Runner(db, model)
    items = [db_item for db_item in _items(db)][: args.items]
    config = {"temperature": 0.7, "max_tokens": args.max_tokens}
    arm = type("Arm", (), {"template": "neutral_cot@1"})()
    distractor = get_operator("M3_distractor_a")

    def seeds(mode: str, condition: str) -> list[int]:
        return [sample_seed(mode, 0, model.sha256, condition, i) for i in range(args.k)]

    plan = []  # (item, mode, condition name, variant, seeds)
    for item in items:
        variant = question_variant(db, distractor, item, 0)
        for mode in ("shared", "independent"):
            # The identity "perturbation": the same question, drawn as a second condition.
            plan.append((item, mode, "baseline", None, seeds(mode, "baseline")))
            plan.append((item, mode, "again", None, seeds(mode, "again")))
            plan.append((item, mode, "M3", variant, seeds(mode, distractor.id)))
    requests = {}
    for item, mode, name, variant, seed_list in plan:
        requests[(item.id, mode, name)] = [sample_request(item, arm, variant, config, s)
                                           for s in seed_list]
    every = [r for rs in requests.values() for r in rs]
    summary = runner.run(every)
    print(f"{len(items)} items x k = {args.k}, T = 0.7, {args.max_tokens} tokens; "
          f"{summary.generated} generated now ({len({runner.key(r) for r in every})} distinct)")
    runner.close()
    texts = {key: [get_generations(db, [runner.key(r)])[runner.key(r)].output or ""
                   for r in rs] for key, rs in requests.items()}
    tfidf = get_embedder("tfidf")
    for mode in ("shared", "independent"):
        rejected, ps, same_start, pairs = 0, [], 0, 0
        for item in items:
            base, again = texts[(item.id, mode, "baseline")], texts[(item.id, mode, "again")]
            vectors = embed_texts(db, tfidf, base + again)
            result = permutation_test(vectors[:args.k], vectors[args.k:], permutations_count=999,
                                      seed=item.id)
            ps.append(result.p_value)
            rejected += result.p_value <= 0.05
            edited = texts[(item.id, mode, "M3")]
            same_start += sum(a[:40] == b[:40] for a, b in zip(base, edited))
            pairs += len(base)
        print(f"{mode:<12} identity null: {rejected}/{len(items)} tests reject at 0.05 "
              f"(p: {', '.join(f'{p:.3f}' for p in ps)}); M3 edit: {same_start}/{pairs} "
              f"sample pairs start with the same 40 characters")


def _items(db):
    from store.datasets import get_items

    return [i for i in get_items(db, "demo", None) if i.kind == "mcq"]


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
