"""Which outputs a DBPA test compares, and whether they are paired (shared sample seeds).

A test compares the baseline condition's outputs of one item with another condition's:
an operator's edit on the same arm (case study `perturbation`), the second model's
baseline (`model_swap`), or the baseline asked again with independent seeds (`identity`,
the control whose rejection rate is the empirical false-positive rate).

**Pairing is read from the stored seeds.** When sample i of both conditions was drawn
with the same seed (`--seeds shared`, or a model swap under shared seeds), y_i and y'_i
are coupled and only the two members of a pair are exchangeable under H0: the test is
`paired` (`analysis.dbpa.design`), over the pairs whose two outputs are both usable. Any
other test is `unpaired`, over every usable output.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

import sqlite_utils

from store.db import dumps
from store.generations import Generation, get_generations
from store.jobs import Arm, Audit, Job, list_arms, list_jobs
from analysis.dbpa.definitions import DbpaRole
from workbench.dbpa.spec import IDENTITY


@dataclass(frozen=True)
class Condition:
    """The usable outputs of one condition of one item, and every planned sample's seed.

    Attributes:
        generation_ids: the usable outputs' generations, in sample order.
        texts: their texts.
        sample_indices: their sample indices.
        excluded: planned samples without a usable output (empty, failed, missing).
        seeds: sample index → sampler seed, over every planned sample.
    """

    generation_ids: tuple[int, ...]
    texts: tuple[str, ...]
    sample_indices: tuple[int, ...]
    excluded: int
    seeds: dict[int, int] = field(default_factory=dict)

    def keep(self, indices: set[int]) -> Condition:
        """Only the outputs of these sample indices."""
        chosen = [i for i, s in enumerate(self.sample_indices) if s in indices]
        return replace(self, generation_ids=tuple(self.generation_ids[i] for i in chosen),
                       texts=tuple(self.texts[i] for i in chosen),
                       sample_indices=tuple(self.sample_indices[i] for i in chosen))


@dataclass(frozen=True)
class TestSpec:
    """One test: which outputs against which, and how they are re-split.

    Attributes:
        design: 'paired' (outputs restricted to complete pairs) or 'unpaired'.
        unpartnered: usable outputs left out of a paired test because their partner (the
            other condition's sample with the same seed) has no usable output.
    """

    case_study: str
    item_id: int
    baseline_arm: Arm
    perturbed_arm: Arm
    perturbation: str
    variant_id: int | None
    baseline: Condition
    perturbed: Condition
    design: str = "unpaired"
    unpartnered: int = 0

    @property
    def permutation_seed(self) -> int:
        """One seed per test, the same for every embedder and distance: a hash of the
        test's identity (case study, item, arms, perturbation), not of the analysis seed."""
        text = dumps([self.case_study, self.item_id, self.baseline_arm.label,
                      self.perturbed_arm.label, self.perturbation])
        return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)

    @property
    def too_few(self) -> bool:
        """Fewer than 2 usable outputs (pairs) in a condition: no test."""
        return len(self.baseline.texts) < 2 or len(self.perturbed.texts) < 2


def condition_of(jobs: list[Job], generations: dict[str, Generation]) -> Condition:
    """The usable outputs of a condition's jobs (an empty or failed output says nothing
    about meaning, so it is excluded and counted)."""
    ids: list[int] = []
    texts: list[str] = []
    indices: list[int] = []
    excluded = 0
    for job in sorted(jobs, key=lambda j: j.sample_index):
        gen = generations.get(job.generation_key or "")
        if gen is None or gen.parse_status == "error" or not (gen.output or "").strip():
            excluded += 1
            continue
        ids.append(gen.id)
        texts.append(gen.output or "")  # not empty: checked above
        indices.append(job.sample_index)
    seeds = {job.sample_index: int(job.seed) for job in jobs if job.seed is not None}
    return Condition(tuple(ids), tuple(texts), tuple(indices), excluded, seeds)


def paired_up(test: TestSpec) -> TestSpec:
    """The test as it will be run: paired over complete pairs when every planned sample
    index of the two conditions shares its seed, else unpaired as it is."""
    a, b = test.baseline.seeds, test.perturbed.seeds
    if not a or a.keys() != b.keys() or any(a[i] != b[i] for i in a):
        return test
    both = set(test.baseline.sample_indices) & set(test.perturbed.sample_indices)
    left_out = len(test.baseline.texts) + len(test.perturbed.texts) - 2 * len(both)
    return replace(test, baseline=test.baseline.keep(both), perturbed=test.perturbed.keep(both),
                   design="paired", unpartnered=left_out)


def collect_tests(db: sqlite_utils.Database, audit: Audit) -> list[TestSpec]:
    """Every test of an analysis, with the outputs each condition has now (paired where
    the seeds are shared)."""
    arms = list_arms(db, audit.id)
    jobs = [j for j in list_jobs(db, audit.id) if j.status in ("done", "pending", "error")]
    generations = get_generations(db, [j.generation_key for j in jobs if j.generation_key])
    groups: dict[tuple[int, int, str, int | None], list[Job]] = {}
    for job in jobs:
        groups.setdefault((job.arm_id, job.item_id, job.role, job.variant_id), []).append(job)
    variants = {row[0]: row[1] for row in db.execute(
        "SELECT DISTINCT v.id, v.operator_id FROM variants v JOIN jobs j ON j.variant_id = v.id "
        "WHERE j.audit_id = ?", [audit.id])}
    tests: list[TestSpec] = []
    items = sorted({key[1] for key in groups})
    for arm in arms:
        for item in items:
            baseline = groups.get((arm.id, item, DbpaRole.BASELINE, None))
            if not baseline:
                continue
            base = condition_of(baseline, generations)
            for (arm_id, item_id, role, variant_id), group in groups.items():
                if arm_id != arm.id or item_id != item or role != DbpaRole.PERTURBED \
                        or variant_id is None:
                    continue
                tests.append(TestSpec("perturbation", item, arm, arm, variants[variant_id],
                                      variant_id, base, condition_of(group, generations)))
            again = groups.get((arm.id, item, DbpaRole.IDENTITY, None))
            if again:
                tests.append(TestSpec("identity", item, arm, arm, IDENTITY, None, base,
                                      condition_of(again, generations)))
    if audit.config.get("model_swap") and len(arms) == 2:
        reference, candidate = arms
        for item in items:
            a = groups.get((reference.id, item, DbpaRole.BASELINE, None))
            b = groups.get((candidate.id, item, DbpaRole.BASELINE, None))
            if a and b:
                tests.append(TestSpec("model_swap", item, reference, candidate, "model_swap",
                                      None, condition_of(a, generations),
                                      condition_of(b, generations)))
    return [paired_up(test) for test in tests]
