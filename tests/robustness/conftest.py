"""Fixtures for the robustness tests: demo items, a scripted fake model, a fake embedder."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import sqlite_utils

from tests.fakes import fake_engine
from workbench.engine import AuditEngine
from workbench.embed.base import Embedder
from workbench.robustness.prompts import CFV_JUDGE_RUBRIC, DIRECTION_RUBRIC, FLAGS_RUBRIC


def _last_user(prompt: str) -> str:
    return prompt.rsplit("User: ", 1)[-1]


def scripted(prompt: str, sampler) -> str:
    """A fake model with a known answer for every role (plain chat template prompts).

    - CFV proposal: changes the case to one that names no option ('New case: …').
    - CoT answers: 'A' for the baseline, 'B' when a Black prefix is present (a change),
      'C' for a CFV changed case.
    - Judges: CFV 'Plausible: yes / Limited: yes'; direction 'Answer: A' (more
      aggressive); flags one disease-association flag on Black prefixes, else none.
    """
    last = _last_user(prompt)
    if CFV_JUDGE_RUBRIC[:60] in prompt:
        return "Plausible: yes\nLimited: yes"
    if DIRECTION_RUBRIC[:60] in prompt:
        return "Answer: A"
    if FLAGS_RUBRIC[:60] in prompt:
        if "Black" in last.split("\n", 1)[0]:
            return 'Flag: disease association | clinically misleading | "Black"'
        return "Flags: none"
    if "Target answer:" in last:
        return ("Change: The main finding is replaced.\n"
                "New case: A patient has a changed finding for the test. "
                "Which of the following is the most likely diagnosis?")
    if "a changed finding for the test" in last:
        return "Step 1: The changed finding points elsewhere.\nAnswer: C"
    if "Black" in last:
        return "Step 1: The prefix changes my mind.\nAnswer: B"
    return "Step 1: The findings point to the first option.\nAnswer: A"


class FakeEmbedder(Embedder):
    """A deterministic embedder of the shared interface for fast tests: letter counts."""

    name = "fake-letters"
    id = "fake-letters"
    version = "1"

    def __init__(self, cacheable: bool = True) -> None:
        self.cacheable = cacheable
        self.calls: list[int] = []

    def dim_hint(self) -> int:
        return 26

    def _embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(len(texts))
        out = np.zeros((len(texts), 26), dtype=np.float32)
        for row, text in enumerate(texts):
            for ch in text.lower():
                if "a" <= ch <= "z":
                    out[row, ord(ch) - 97] += 1
        return out


@pytest.fixture
def make_engine(db: sqlite_utils.Database) -> Callable[..., AuditEngine]:
    """Builds an engine whose models all run on FakeBackend(responder)."""

    def make(responder=scripted, **kw) -> AuditEngine:
        return fake_engine(db, responder, **kw)

    return make


@pytest.fixture
def marked(monkeypatch):
    """The direction prompt names the prefix only through its answers; mark male_black's
    prompt by its answer text so the scripted judge can tell the two Black prefixes apart."""
    from workbench.robustness import plan

    original = plan.direction_request

    def marked_request(item, variant, baseline, prefixed, config):
        request = original(item, variant, baseline, prefixed, config)
        if variant.operator_id == "demo_prefix_male_black":
            messages = list(request.messages)
            messages[-1] = dict(messages[-1], content=messages[-1]["content"] +
                                " PREFIX-male-black")
            object.__setattr__(request, "messages", tuple(messages))
        return request

    monkeypatch.setattr(plan, "direction_request", marked_request)
    monkeypatch.setattr("workbench.robustness.execute.direction_request", marked_request)
