"""Fixtures for the DBPA tests: the demo set, a fake model whose text depends on the seed."""

from __future__ import annotations

import random

import pytest
import sqlite_utils

from store.records import ModelRecord
from tests.fakes import fake_engine, fake_model_record
from workbench.engine import AuditEngine

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
def other_model(db: sqlite_utils.Database) -> ModelRecord:
    """A second fake model (for model swaps)."""
    return fake_model_record(db, "other", "e")


@pytest.fixture
def engine(db: sqlite_utils.Database) -> AuditEngine:
    """An engine whose models all run on `seeded_responder` (counting generations)."""
    return fake_engine(db, seeded_responder)
