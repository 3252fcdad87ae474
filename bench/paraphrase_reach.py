"""Benchmark: how many small-edit units get a token-adjusted paraphrase baseline (seed 000 §3.2).

Small edits (a race swap, age + 1) change one or two tokens, so their target fraction is at
or below the paraphrase's tolerance (0.03). Runs two real studies on a fresh store with the
embedded model and `--paraphraser table` (the deterministic paraphraser, also the LLM's
fallback), `--baselines paraphrase_adjusted`, `--max-tokens 4`:

1. the Q-Pain-style subgroup design on the `pain-demo` templates, subgroups White man /
   Black man / White woman / Black woman (the race swaps are the white/black pairs);
2. the demo triage items under `control_precision` (age + 1).

It prints, per targeted edit: units, how many have a paraphrase, how many the table can
reach at all (a rewording of `PARAPHRASE_TABLE` occurs in the prompt's body: the
fallback's reason says otherwise), the mean
target and achieved fraction, and every reason a unit got none.

    PYTHONPATH=. .venv/bin/python bench/paraphrase_reach.py
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path


def main() -> None:
    from store.db import open_db
    from store.jobs import list_jobs
    from workbench.counterfactual import StudySpec, run_study
    from workbench.counterfactual.subgroups import DEFAULT_SUBGROUPS, Subgroup
    from workbench.datasets.demo import import_demo
    from workbench.datasets.pain import PAIN_DATASET, import_pain_templates
    from workbench.engine import AuditEngine
    from workbench.engine.variants import get_variant

    keep = ("white_man", "black_man", "white_woman", "black_woman")
    subgroups = tuple(Subgroup(k, dict(f)) for k, f in DEFAULT_SUBGROUPS if k in keep)
    specs = [
        StudySpec(dataset=PAIN_DATASET, targets=(), subgroups=subgroups,
                  baselines=("paraphrase_adjusted",), paraphraser="table", max_tokens=4),
        StudySpec(dataset="demo", targets=("control_precision",),
                  item_ids=tuple(f"triage-{i:03d}" for i in range(1, 17)),
                  baselines=("paraphrase_adjusted",), paraphraser="table", max_tokens=4),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        db = open_db(Path(tmp) / "paw.db")
        import_demo(db)
        import_pain_templates(db)
        engine = AuditEngine(db, threads=1)
        start = time.perf_counter()
        rows: dict[str, list] = defaultdict(list)
        try:
            for spec in specs:
                outcome = run_study(db, spec, engine=engine)
                for job in list_jobs(db, outcome.study_id, role="paraphrase"):
                    if job.sample_index != 0:
                        continue
                    variant = get_variant(db, job.variant_id)
                    target = get_variant(db, variant.details["reference_variant_id"])
                    rows[target.operator_id].append((variant, target))
        finally:
            engine.close()
        seconds = time.perf_counter() - start
    print(f"--paraphraser table, {seconds:.0f} s")
    print("target                          units  paraphrased  reachable  target_mean  "
          "achieved_mean  within_tol")
    reasons: Counter = Counter()
    for operator in sorted(rows):
        pairs = rows[operator]
        fired = [v for v, _ in pairs if v.fired]
        unreachable = "no rewording of the paraphrase table occurs in the text"
        reach = sum(v.details.get("fallback", {}).get("reason") != unreachable
                    for v, _ in pairs)
        for variant, _ in pairs:
            if not variant.fired:
                reasons[f"{operator}: {variant.reason}"] += 1
        tmean = statistics.mean(v.details["target_fraction"] for v, _ in pairs)
        amean = statistics.mean(v.token_change_fraction for v in fired) if fired else float(
            "nan")
        within = sum(bool(v.details.get("within_tolerance")) for v, _ in pairs)
        print(f"{operator:<30} {len(pairs):>6}  {len(fired):>11}  {reach:>9}  {tmean:>11.3f}"
              f"  {amean:>13.3f}  {within:>10}")
    for reason, n in reasons.most_common():
        print(f"  none ({n}): {reason}")


if __name__ == "__main__":
    main()
