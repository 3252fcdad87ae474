"""Shared vs independent sample seeds under a true null: why `paw dbpa` defaults to independent.

The "perturbation" here is the identity: both conditions ask the same question, so
H0 (D_x = D_x') holds by construction and a valid test rejects at rate α. With shared
seeds (sample i of both conditions drawn with seed i) llama.cpp draws the same tokens,
so y'_i = y_i: P1 holds k self-pairs of similarity 1 that no re-split reproduces, and the
test rejects although nothing changed. With independent seeds (the default) the 2k
outputs are exchangeable, as the permutation test assumes.

A second line measures the coupling under a real edit (M3 distractor, a preserving
operator): how often sample i of the baseline and of the edited question begin with the
same 40 characters, shared seeds vs independent.

    .venv/bin/python bench/dbpa_seeds.py [--items 6] [--k 6] [--max-tokens 40]
"""

from __future__ import annotations

import argparse

import numpy as np

from analysis.dbpa_stats import permutation_test
from store import open_db
from store.generations import get_generations
from workbench.audit.plan import question_variant
from workbench.datasets.demo import import_demo
from workbench.dbpa.plan import sample_request
from workbench.dbpa.spec import sample_seed
from workbench.embed import embed_texts, get_embedder
from workbench.models import Runner, default_model
from workbench.perturb import get_operator


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=6)
    parser.add_argument("--k", type=int, default=6)
    parser.add_argument("--max-tokens", type=int, default=40)
    parser.add_argument("--db", default="/tmp/paw-dbpa-seeds.db")
    args = parser.parse_args()
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
