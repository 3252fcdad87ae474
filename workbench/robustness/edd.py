"""EDD inputs: embed each stored answer's explanation and keep the vector in `embeddings`.

The explanation of an answer is its CoT output without the final 'Answer: X' line(s)
(`plan.explanation`). Each explanation is embedded once per embedder and stored against
its generation under the name `<embedder>#explanation` (`analysis.fragility
.explanation_embedder`), so a re-run embeds nothing and the report computes EDD from the
stored vectors (`analysis.fragility_definitions.edd`). The embedder comes from the shared
embedder interface (`workbench.embed`), named by the run's `embedder` setting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import sqlite_utils

from analysis.fragility import explanation_embedder
from analysis.fragility_definitions import ROLE_BASELINE, ROLE_DEMOGRAPHIC
from store.db import transaction, utcnow
from store.generations import get_generations
from store.jobs import list_jobs
from workbench.audit.events import AuditEvent, BlockProgress, StageStarted
from workbench.audit.plan import Plan
from workbench.robustness.plan import explanation

BATCH = 16
"""Explanations embedded per call (and stored per transaction)."""


class TextEmbedder(Protocol):
    """What EDD needs of an embedder: a stable name and a batch `embed`."""

    name: str

    def embed(self, texts: Sequence[str]) -> Any:
        """One vector per text (a 2-D float array)."""


def pending_explanations(db: sqlite_utils.Database, audit_id: int, name: str
                         ) -> list[tuple[int, str]]:
    """(generation id, explanation) of every stored answer without a vector named `name`."""
    jobs = [j for j in list_jobs(db, audit_id, status="done")
            if j.role in (ROLE_BASELINE, ROLE_DEMOGRAPHIC) and j.generation_key]
    gens = get_generations(db, [j.generation_key or "" for j in jobs])
    have = {row[0] for row in db.execute(
        "SELECT e.generation_id FROM embeddings e JOIN generations g ON g.id = e.generation_id "
        "JOIN jobs j ON j.generation_key = g.key WHERE j.audit_id = ? AND e.embedder = ?",
        [audit_id, name])}
    out, seen = [], set()
    for job in jobs:
        gen = gens.get(job.generation_key or "")
        if gen is None or gen.id in have or gen.id in seen or gen.parse_status == "error":
            continue
        seen.add(gen.id)
        text = explanation(gen)
        if text.strip():  # an empty explanation has no embedding; its question gets no EDD
            out.append((gen.id, text))
    return out


def store_vectors(db: sqlite_utils.Database, name: str, ids: Sequence[int], vectors: Any) -> int:
    """Store float32 vectors against generations (existing ones are kept); returns new rows."""
    import numpy as np

    array = np.asarray(vectors, dtype=np.float32)
    added = 0
    with transaction(db) as conn:
        for gid, vector in zip(ids, array):
            cursor = conn.execute(
                "INSERT OR IGNORE INTO embeddings (generation_id, embedder, dim, vector, "
                "created_at) VALUES (?, ?, ?, ?, ?)",
                [gid, name, int(vector.size), vector.tobytes(), utcnow()])
            added += cursor.rowcount
    return added


def embed_explanations(db: sqlite_utils.Database, audit_id: int, embedder: TextEmbedder,
                       emit: Callable[[AuditEvent], None] | None = None) -> int:
    """Embed every stored explanation of a run that has no vector yet.

    Returns:
        How many vectors were stored now.
    """
    emit = emit or (lambda event: None)
    name = explanation_embedder(embedder.name)
    todo = pending_explanations(db, audit_id, name)
    emit(StageStarted("EDD embeddings", embedder.name, len(todo)))
    added = 0
    for start in range(0, len(todo), BATCH):
        chunk = todo[start:start + BATCH]
        vectors = embedder.embed([text for _, text in chunk])
        added += store_vectors(db, name, [gid for gid, _ in chunk], vectors)
        emit(BlockProgress("EDD", start + len(chunk), len(todo)))
    return added
