"""Fixtures for the audit tests: demo items, a fake model and an engine on the fake backend."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import sqlite_utils

from tests.fakes import fake_engine
from workbench.engine import AuditEngine

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
def make_engine(db: sqlite_utils.Database) -> Callable[..., AuditEngine]:
    """Builds an engine whose models all run on a new FakeBackend(responder, **kw)."""

    def make(responder=fake_responder, **kw) -> AuditEngine:
        return fake_engine(db, responder, **kw)

    return make
