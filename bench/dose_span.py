"""Benchmark: how far the dose-response paraphrases reach (seed 000 §4.1, Figures 2 and 3).

Runs `paw study --dataset demo --items triage-001,…,triage-008 --dose-levels paper
--max-tokens 4 --attempts 2 --threads 1` (the eight first demo triage items; there is no
dataset named 'triage') on a fresh store and prints, per level: units, paraphrased
units, achieved mean token-change fraction (the audited model's tokenizer), share within
tolerance, the paraphrases' sources, and how often the LLM's rewrites passed the meaning
checks (per requested rewrite).

    PYTHONPATH=. .venv/bin/python bench/dose_span.py                       # fit span, LLM
    PYTHONPATH=. .venv/bin/python bench/dose_span.py --paraphraser table
    PYTHONPATH=. .venv/bin/python bench/dose_span.py --span sentence       # as before
    PYTHONPATH=. .venv/bin/python bench/dose_span.py --request joint       # one request/run
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--paraphraser", default="default")
    parser.add_argument("--span", choices=("sentence", "fit"), default="fit")
    parser.add_argument("--request", choices=("each", "joint"), default="each")
    parser.add_argument("--limit", type=int, default=8)
    parser.add_argument("--attempts", type=int, default=2)
    parser.add_argument("--levels", default="paper")
    args = parser.parse_args()

    from store.db import open_db
    from store.jobs import list_jobs
    from workbench.engine import AuditEngine
    from workbench.engine.variants import get_variant
    from workbench.counterfactual import StudySpec, attempts, run_study
    from workbench.counterfactual.dose import resolve_levels
    from workbench.datasets.demo import import_demo

    attempts.SPAN_REQUEST = args.request
    with tempfile.TemporaryDirectory() as tmp:
        db = open_db(Path(tmp) / "paw.db")
        import_demo(db)
        engine = AuditEngine(db, threads=1)
        items = tuple(f"triage-{i:03d}" for i in range(1, args.limit + 1))
        spec = StudySpec(dataset="demo", targets=(), baselines=("paraphrase_adjusted",),
                         levels=resolve_levels(args.levels), item_ids=items, max_tokens=4,
                         max_attempts=args.attempts, paraphraser=args.paraphraser,
                         paraphrase_span=args.span)
        start = time.perf_counter()
        try:
            outcome = run_study(db, spec, engine=engine)
        finally:
            engine.close()
        seconds = time.perf_counter() - start
        rows: dict[float, list] = defaultdict(list)
        checks: Counter = Counter()
        for job in list_jobs(db, outcome.study_id, role="paraphrase"):
            if job.sample_index != 0:
                continue
            variant = get_variant(db, job.variant_id)
            level = get_variant(db, variant.details["reference_variant_id"]).details[
                "dose_level"]
            rows[level].append(variant)
            for attempt in variant.details.get("attempts", []):
                verdicts = attempt.get("checks") or [
                    "passed" if "fraction" in attempt else attempt["status"]]
                checks.update("passed" if v == "passed" else "rejected" for v in verdicts)
    print(f"span {args.span}, request {args.request}, paraphraser {args.paraphraser}, "
          f"{seconds:.0f} s, {outcome.generated} generations")
    print("level  units  paraphrased  achieved_mean  within_tol  sources")
    for level in sorted(rows):
        variants = rows[level]
        fired = [v for v in variants if v.fired]
        mean = statistics.mean(v.token_change_fraction for v in fired) if fired else float("nan")
        within = sum(bool(v.details.get("within_tolerance")) for v in variants) / len(variants)
        sources = Counter(v.details.get("source") for v in variants)
        print(f"{level:<6g} {len(variants):>5}  {len(fired):>11}  {mean:>13.3f}  "
              f"{within:>10.2f}  {dict(sources)}")
    total = sum(checks.values())
    if total:
        print(f"LLM rewrites passing the meaning checks: {checks['passed']} of {total} "
              f"({checks['passed'] / total:.0%})")


if __name__ == "__main__":
    main()
