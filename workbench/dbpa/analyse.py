"""After the samples: embed every output with each embedder, run every permutation test, store.

A test compares the baseline condition's outputs with a perturbed condition's for one
item: an operator's edit on the same arm (case study "perturbation"), or the second
model's baseline outputs (case study "model_swap"). Each test runs once per (embedder,
distance) with the same B re-splits (one permutation seed per test), so the sensitivity
table's differences come from the embedder and distance alone. A stored result whose
inputs (generations, embedder version, B) are unchanged is not recomputed: running the
same `paw dbpa` again tests nothing new.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sqlite_utils

from store.db import dumps, transaction, utcnow
from store.generations import Generation, get_generations
from store.jobs import Arm, Audit, Job, list_arms, list_jobs
from workbench.audit.events import AuditEvent, BlockProgress, StageStarted
from workbench.embed.base import Embedder

if TYPE_CHECKING:
    from analysis.dbpa.statistics import TestResult


@dataclass(frozen=True)
class Condition:
    """The usable outputs of one condition of one item."""

    generation_ids: tuple[int, ...]
    texts: tuple[str, ...]
    excluded: int


@dataclass(frozen=True)
class TestSpec:
    """One test: which outputs against which."""

    case_study: str
    item_id: int
    baseline_arm: Arm
    perturbed_arm: Arm
    perturbation: str
    variant_id: int | None
    baseline: Condition
    perturbed: Condition

    @property
    def permutation_seed(self) -> int:
        """One seed per test (not per embedder or distance)."""
        text = dumps([self.case_study, self.item_id, self.baseline_arm.label,
                      self.perturbed_arm.label, self.perturbation])
        return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def _condition(jobs: list[Job], generations: dict[str, Generation]) -> Condition:
    ids, texts, excluded = [], [], 0
    for job in sorted(jobs, key=lambda j: j.sample_index):
        gen = generations.get(job.generation_key or "")
        if gen is None or gen.parse_status == "error" or not (gen.output or "").strip():
            excluded += 1  # an empty or failed output says nothing about meaning
            continue
        ids.append(gen.id)
        texts.append(gen.output)
    return Condition(tuple(ids), tuple(texts), excluded)


def collect_tests(db: sqlite_utils.Database, audit: Audit) -> list[TestSpec]:
    """Every test of an analysis, with the outputs each condition has now."""
    arms = list_arms(db, audit.id)
    jobs = [j for j in list_jobs(db, audit.id) if j.status in ("done", "pending", "error")]
    generations = get_generations(db, [j.generation_key for j in jobs if j.generation_key])
    groups: dict[tuple[int, int, int | None], list] = {}
    for job in jobs:
        groups.setdefault((job.arm_id, job.item_id, job.variant_id), []).append(job)
    variants = {row[0]: row[1] for row in db.execute(
        "SELECT DISTINCT v.id, v.operator_id FROM variants v JOIN jobs j ON j.variant_id = v.id "
        "WHERE j.audit_id = ?", [audit.id])}
    tests: list[TestSpec] = []
    items = sorted({key[1] for key in groups})
    for arm in arms:
        for item in items:
            baseline = groups.get((arm.id, item, None))
            if not baseline:
                continue
            base = _condition(baseline, generations)
            for (arm_id, item_id, variant_id), group in groups.items():
                if arm_id != arm.id or item_id != item or variant_id is None:
                    continue
                tests.append(TestSpec("perturbation", item, arm, arm, variants[variant_id],
                                      variant_id, base, _condition(group, generations)))
    if audit.config.get("model_swap") and len(arms) == 2:
        reference, candidate = arms
        for item in items:
            a, b = groups.get((reference.id, item, None)), groups.get((candidate.id, item, None))
            if a and b:
                tests.append(TestSpec("model_swap", item, reference, candidate, "model_swap",
                                      None, _condition(a, generations),
                                      _condition(b, generations)))
    return tests


def _stored(db: sqlite_utils.Database, audit_id: int) -> dict[tuple, tuple]:
    rows = db.execute(
        "SELECT item_id, baseline_arm_id, perturbed_arm_id, perturbation, embedder, distance, "
        "embedder_version, permutations, generation_ids_json FROM dbpa_tests WHERE audit_id = ?",
        [audit_id])
    return {tuple(r[:6]): (r[6], r[7], r[8]) for r in rows}


def _row(audit: Audit, test: TestSpec, embedder: Embedder, distance: str, permutations: int,
         result: TestResult | None, status: str, note: str) -> list:
    return [audit.id, test.case_study, test.item_id, test.baseline_arm.id, test.perturbed_arm.id,
            test.perturbation, test.variant_id, embedder.name, f"{embedder.id}:{embedder.version}",
            distance, len(test.baseline.texts), len(test.perturbed.texts), permutations,
            test.permutation_seed, None if result is None else result.effect_size,
            None if result is None else result.p_value,
            None if result is None else result.n_at_least, status, note or None,
            _ids(test), utcnow()]


def _ids(test: TestSpec) -> str:
    return dumps({"baseline": list(test.baseline.generation_ids),
                  "perturbed": list(test.perturbed.generation_ids)})


_INSERT = (
    "INSERT INTO dbpa_tests (audit_id, case_study, item_id, baseline_arm_id, perturbed_arm_id, "
    "perturbation, variant_id, embedder, embedder_version, distance, n_baseline, n_perturbed, "
    "permutations, permutation_seed, effect_size, p_value, n_at_least, status, note, "
    "generation_ids_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
    "?, ?, ?, ?) ON CONFLICT (audit_id, item_id, baseline_arm_id, perturbed_arm_id, "
    "perturbation, embedder, distance) DO UPDATE SET case_study = excluded.case_study, "
    "variant_id = excluded.variant_id, embedder_version = excluded.embedder_version, "
    "n_baseline = excluded.n_baseline, n_perturbed = excluded.n_perturbed, "
    "permutations = excluded.permutations, permutation_seed = excluded.permutation_seed, "
    "effect_size = excluded.effect_size, p_value = excluded.p_value, "
    "n_at_least = excluded.n_at_least, status = excluded.status, note = excluded.note, "
    "generation_ids_json = excluded.generation_ids_json, created_at = excluded.created_at"
)


def _note(test: TestSpec) -> str:
    parts = []
    if test.baseline.excluded:
        parts.append(f"{test.baseline.excluded} empty or failed baseline output(s) excluded")
    if test.perturbed.excluded:
        parts.append(f"{test.perturbed.excluded} empty or failed perturbed output(s) excluded")
    return "; ".join(parts)


def run_tests(db: sqlite_utils.Database, audit: Audit, embedder: Embedder,
              tests: list[TestSpec],
              vectors_of: Callable[[TestSpec], tuple], distances: list[str],
              permutations: int, emit: Callable[[AuditEvent], None],
              should_stop: Callable[[], bool] | None = None) -> tuple[int, bool]:
    """Run (or skip, when stored with the same inputs) every test × distance for one embedder.

    Returns:
        (tests computed now, whether stopped).
    """
    from analysis.dbpa.statistics import permutation_test

    stored = _stored(db, audit.id)
    version = f"{embedder.id}:{embedder.version}"
    block = f"tests {embedder.name}"
    total = len(tests) * len(distances)
    done = computed = 0
    emit(BlockProgress(block, 0, total))
    for test in tests:
        if should_stop is not None and should_stop():
            return computed, True
        todo = [d for d in distances
                if stored.get((test.item_id, test.baseline_arm.id, test.perturbed_arm.id,
                               test.perturbation, embedder.name, d))
                != (version, permutations, _ids(test))]
        if todo:
            rows = []
            too_few = len(test.baseline.texts) < 2 or len(test.perturbed.texts) < 2
            base_vectors, pert_vectors = (None, None) if too_few else vectors_of(test)
            for distance in todo:
                note = _note(test)
                if too_few:
                    reason = "fewer than 2 non-empty outputs in a condition: no test"
                    rows.append(_row(audit, test, embedder, distance, permutations, None,
                                     "too_few", "; ".join(filter(None, [note, reason]))))
                    continue
                result = permutation_test(base_vectors, pert_vectors, distance=distance,
                                          permutations_count=permutations,
                                          seed=test.permutation_seed)
                status = "identical" if result.identical else "ok"
                if result.identical:
                    same = "every output has the same embedding: ω = 0 on every split, p = 1"
                    note = "; ".join(filter(None, [note, same]))
                rows.append(_row(audit, test, embedder, distance, permutations, result, status,
                                 note))
            with transaction(db) as conn:
                for row in rows:
                    conn.execute(_INSERT, row)
            computed += len(rows)
        done += len(distances)
        emit(BlockProgress(block, done, total))
    return computed, False


def analyse(db: sqlite_utils.Database, audit: Audit, emit: Callable[[AuditEvent], None],
            should_stop: Callable[[], bool] | None = None,
            threads: int | None = None) -> tuple[int, bool]:
    """Embed the analysis's outputs with each configured embedder and run its tests.

    Returns:
        (tests computed now, whether stopped).
    """
    from workbench.embed import embed_texts, get_embedder

    config = audit.config
    tests = collect_tests(db, audit)
    computed = 0
    for spec in config["embedders"]:
        with get_embedder(spec, db, threads=threads) as embedder:
            lookup: dict[str, object] = {}
            if embedder.cacheable:
                texts = sorted({t for test in tests for t in test.baseline.texts
                                + test.perturbed.texts})
                emit(StageStarted(f"embed {embedder.name}", embedder.name, len(texts)))
                block = f"embed {embedder.name}"
                vectors = embed_texts(db, embedder, texts, on_progress=lambda d, t, b=block:
                                      emit(BlockProgress(b, d, t)))
                emit(BlockProgress(block, len(texts), len(texts)))
                lookup = dict(zip(texts, vectors))

            def vectors_of(test: TestSpec, embedder=embedder, lookup=lookup) -> tuple:
                import numpy as np

                if not embedder.cacheable:  # TF-IDF: fitted on this test's pooled outputs
                    pooled = embed_texts(db, embedder, test.baseline.texts + test.perturbed.texts)
                    n0 = len(test.baseline.texts)
                    return pooled[:n0], pooled[n0:]
                return (np.vstack([lookup[t] for t in test.baseline.texts]),
                        np.vstack([lookup[t] for t in test.perturbed.texts]))

            made, stopped = run_tests(db, audit, embedder, tests, vectors_of,
                                      list(config["distances"]), int(config["permutations"]),
                                      emit, should_stop)
            computed += made
            if stopped:
                return computed, True
    return computed, False

