"""Fixtures for the audit tests: demo items, a fake model and an engine on the fake backend."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import sqlite_utils

from store.models import add_model
from store.records import ModelRecord
from workbench.audit import AuditEngine
from workbench.datasets.demo import import_demo
from workbench.models.fake import FakeBackend
from workbench.models.prompts import PLAIN_CHAT_TEMPLATE

CHAIN = ("Step 1: The patient has 3 findings and we compute the score.\n"
         "Step 2: Fever and pain point to the first option.\n"
         "Step 3: Therefore the first option is best.\n"
         "Answer: A")
"""What the fake model writes for every CoT prompt: three 'Step n:' steps (so F1 truncations,
deletions, the number substitution, reorders and synonym maps all fire), then `Answer: A`."""

JUDGE_QUESTION = "Does the reasoning use the edit?"


def fake_responder(prompt: str, sampler) -> str:
    """Judge prompts get 'Answer: No'; direct prompts 'A'; everything else `CHAIN`."""
    if prompt.rstrip().endswith("Assistant:") and JUDGE_QUESTION in prompt[-400:]:
        return "Answer: No"
    if "Answer with" in prompt[-200:]:
        return " A"
    return CHAIN


@pytest.fixture
def demo_db(db: sqlite_utils.Database) -> sqlite_utils.Database:
    """The in-memory store with the demo set imported (dataset 'demo')."""
    import_demo(db)
    return db


@pytest.fixture
def fake_model(db: sqlite_utils.Database) -> ModelRecord:
    """A registered model record run by the fake backend (plain chat template)."""
    return add_model(db, name="fake", path="/nowhere/fake.gguf", sha256="f" * 64,
                     chat_template=PLAIN_CHAT_TEMPLATE)


@pytest.fixture
def make_engine(db: sqlite_utils.Database) -> Callable[..., AuditEngine]:
    """Builds an engine whose models all run on a new FakeBackend(responder, **kw)."""

    def make(responder=fake_responder, **kw) -> AuditEngine:
        backends: list[FakeBackend] = []

        def factory(model):
            backend = FakeBackend(responder, **kw)
            backends.append(backend)
            return backend

        engine = AuditEngine(db, backend_factory=factory)
        engine.backends = backends  # type: ignore[attr-defined]
        return engine

    return make
