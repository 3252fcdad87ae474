"""Fixtures for the DBPA tests: the demo set, a fake model whose text depends on the seed."""

from __future__ import annotations

import random

import pytest
import sqlite_utils

from store.models import add_model
from store.records import ModelRecord
from workbench.audit import AuditEngine
from workbench.datasets.demo import import_demo
from workbench.models.fake import FakeBackend
from workbench.models.prompts import PLAIN_CHAT_TEMPLATE

CALM = ["rest", "fluids", "observe", "reassure", "follow up", "oral therapy"]
ALARM = ["emergency", "intubate", "surgery", "shock", "icu", "resuscitate"]


def seeded_responder(prompt: str, sampler) -> str:
    """A free-text answer drawn from the sampler's seed: calm words normally, alarm words
    when the question says 'severe' (M5 turns 'mild' into 'severe' and back)."""
    rng = random.Random(sampler.seed)
    question = prompt.rsplit("Question:", 1)[-1].lower()
    words = ALARM if "worst" in question or "severe" in question else CALM
    return " ".join(rng.choice(words) for _ in range(6)) + "\nAnswer: A"


@pytest.fixture
def demo_db(db: sqlite_utils.Database) -> sqlite_utils.Database:
    """The in-memory store with the demo set imported (dataset 'demo')."""
    import_demo(db)
    return db


@pytest.fixture
def fake_model(db: sqlite_utils.Database) -> ModelRecord:
    """A registered model record run by the fake backend."""
    return add_model(db, name="fake", path="/nowhere/fake.gguf", sha256="f" * 64,
                     chat_template=PLAIN_CHAT_TEMPLATE)


@pytest.fixture
def other_model(db: sqlite_utils.Database) -> ModelRecord:
    """A second fake model (for model swaps)."""
    return add_model(db, name="other", path="/nowhere/other.gguf", sha256="e" * 64,
                     chat_template=PLAIN_CHAT_TEMPLATE)


@pytest.fixture
def engine(db: sqlite_utils.Database) -> AuditEngine:
    """An engine whose models all run on `seeded_responder` (counting generations)."""
    backends: list[FakeBackend] = []

    def factory(model):
        backend = FakeBackend(seeded_responder)
        backends.append(backend)
        return backend

    eng = AuditEngine(db, backend_factory=factory)
    eng.backends = backends  # type: ignore[attr-defined]
    return eng
