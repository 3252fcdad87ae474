"""After the samples: embed every output with each embedder, run every permutation test, store.

Which outputs each test compares, and whether it is paired, is `conditions`. Each test
runs once per (embedder, distance) with the same B re-splits (one permutation seed per
test), so the sensitivity table's differences come from the embedder and distance alone.
A stored result whose inputs (generations, embedder version, B, design, test version) are
unchanged is not recomputed: running the same `paw dbpa` again tests nothing new.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import sqlite_utils

from store.db import dumps, transaction, utcnow
from store.jobs import Audit
from workbench.engine.events import AuditEvent, BlockProgress, StageStarted
from workbench.dbpa.conditions import TestSpec, collect_tests
from workbench.embed.base import Embedder

if TYPE_CHECKING:
    from analysis.dbpa.statistics import TestResult


def _stored(db: sqlite_utils.Database, audit_id: int) -> dict[tuple, tuple]:
    rows = db.execute(
        "SELECT item_id, baseline_arm_id, perturbed_arm_id, perturbation, embedder, distance, "
        "embedder_version, permutations, generation_ids_json, design, test_version "
        "FROM dbpa_tests WHERE audit_id = ?", [audit_id])
    return {tuple(r[:6]): tuple(r[6:]) for r in rows}


def _inputs(test: TestSpec, embedder: Embedder, permutations: int) -> tuple:
    """What decides a stored test's numbers (compared with `_stored`'s values)."""
    from analysis.dbpa.definitions import TEST_VERSION

    return (f"{embedder.id}:{embedder.version}", permutations, _ids(test), test.design,
            TEST_VERSION)


def _row(audit: Audit, test: TestSpec, embedder: Embedder, distance: str, permutations: int,
         result: TestResult | None, status: str, note: str) -> list:
    from analysis.dbpa.definitions import TEST_VERSION

    def of(name: str) -> object:
        return None if result is None else getattr(result, name)

    return [audit.id, test.case_study, test.item_id, test.baseline_arm.id, test.perturbed_arm.id,
            test.perturbation, test.variant_id, embedder.name, f"{embedder.id}:{embedder.version}",
            distance, len(test.baseline.texts), len(test.perturbed.texts), permutations,
            test.permutation_seed, of("effect_size"), of("p_value"), of("n_at_least"), status,
            note or None, _ids(test), utcnow(), test.design, of("null_mean"), of("null_sd"),
            TEST_VERSION]


def _ids(test: TestSpec) -> str:
    return dumps({"baseline": list(test.baseline.generation_ids),
                  "perturbed": list(test.perturbed.generation_ids)})


_INSERT = (
    "INSERT INTO dbpa_tests (audit_id, case_study, item_id, baseline_arm_id, perturbed_arm_id, "
    "perturbation, variant_id, embedder, embedder_version, distance, n_baseline, n_perturbed, "
    "permutations, permutation_seed, effect_size, p_value, n_at_least, status, note, "
    "generation_ids_json, created_at, design, null_mean, null_sd, test_version) VALUES (?, ?, "
    "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (audit_id, item_id, baseline_arm_id, perturbed_arm_id, "
    "perturbation, embedder, distance) DO UPDATE SET case_study = excluded.case_study, "
    "variant_id = excluded.variant_id, embedder_version = excluded.embedder_version, "
    "n_baseline = excluded.n_baseline, n_perturbed = excluded.n_perturbed, "
    "permutations = excluded.permutations, permutation_seed = excluded.permutation_seed, "
    "effect_size = excluded.effect_size, p_value = excluded.p_value, "
    "n_at_least = excluded.n_at_least, status = excluded.status, note = excluded.note, "
    "generation_ids_json = excluded.generation_ids_json, created_at = excluded.created_at, "
    "design = excluded.design, null_mean = excluded.null_mean, null_sd = excluded.null_sd, "
    "test_version = excluded.test_version"
)


def _note(test: TestSpec) -> str:
    parts = []
    if test.baseline.excluded:
        parts.append(f"{test.baseline.excluded} empty or failed baseline output(s) excluded")
    if test.perturbed.excluded:
        parts.append(f"{test.perturbed.excluded} empty or failed perturbed output(s) excluded")
    if test.unpartnered:
        parts.append(f"paired (shared seeds): {test.unpartnered} output(s) left out, their "
                     f"partner had none")
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
    block = f"tests {embedder.name}"
    total = len(tests) * len(distances)
    done = computed = 0
    emit(BlockProgress(block, 0, total))
    for test in tests:
        if should_stop is not None and should_stop():
            return computed, True
        inputs = _inputs(test, embedder, permutations)
        todo = [d for d in distances
                if stored.get((test.item_id, test.baseline_arm.id, test.perturbed_arm.id,
                               test.perturbation, embedder.name, d)) != inputs]
        if todo:
            rows = []
            too_few = test.too_few
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
                                          seed=test.permutation_seed, design=test.design)
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

                def progressed(done: int, total: int, block: str = block) -> None:
                    emit(BlockProgress(block, done, total))

                vectors = embed_texts(db, embedder, texts, on_progress=progressed)
                emit(BlockProgress(block, len(texts), len(texts)))
                lookup = dict(zip(texts, vectors, strict=True))

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

