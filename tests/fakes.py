"""Fake-backend helpers shared by the engine-level tests (audit, study, DBPA, robustness).

The fake never replaces the real model in the tests that matter; it gives fast tests of
planning, resume and storage a scripted model (`workbench.models.fake.FakeBackend`).
"""

from __future__ import annotations

import sqlite_utils

from store.models import add_model
from store.records import ModelRecord
from workbench.engine import AuditEngine
from workbench.models.fake import FakeBackend, Responder
from workbench.models.prompts import PLAIN_CHAT_TEMPLATE


def fake_engine(db: sqlite_utils.Database, responder: Responder, **kw) -> AuditEngine:
    """An engine whose every model runs on a new `FakeBackend(responder, **kw)`; the backends
    it built are kept in `engine.backends` (tests inspect their calls)."""
    backends: list[FakeBackend] = []

    def factory(model: ModelRecord) -> FakeBackend:
        backend = FakeBackend(responder, **kw)
        backends.append(backend)
        return backend

    engine = AuditEngine(db, backend_factory=factory)
    engine.backends = backends  # type: ignore[attr-defined]
    return engine


def fake_model_record(db: sqlite_utils.Database, name: str = "fake",
                      sha_char: str = "f") -> ModelRecord:
    """A registered model record for the fake backend (plain chat template)."""
    return add_model(db, name=name, path=f"/nowhere/{name}.gguf", sha256=sha_char * 64,
                     chat_template=PLAIN_CHAT_TEMPLATE)
