"""Fixtures for the study tests: a small dataset and an engine on the fake backend."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
import sqlite_utils

from tests.builders import AuditBuilder
from tests.fakes import fake_engine
from workbench.engine import AuditEngine

QUESTION = "Should this patient be sent to the emergency department today?"
STEMS = {
    "man": "A 62-year-old man presents with chest pain that began this morning. He has a "
           "history of diabetes and smoking. He reports sweating. " + QUESTION,
    "woman": "A 28-year-old woman complains of a runny nose for the past 3 days. She has no "
             "fever and is eating normally. She has no chronic conditions. " + QUESTION,
    "nobody": "A 40-year-old patient presents with a rash that began yesterday. The rash is "
              "itchy and spreading. " + QUESTION,
}


def fake_responder(prompt: str, sampler) -> str:
    """Paraphrase requests: reword the sentence ('has a history of' → 'has a past history of',
    else insert 'indeed'); answers: 'Yes' when the prompt says 'man' or 'family member', 'No'
    otherwise; control questions ("Is this patient male?"): 'Yes' for a male patient, else
    'No'. No leading space, so the first token is the label's and the option distribution
    favours it."""
    if "Paraphrase, changing about" in prompt:
        asked = prompt.rsplit("Paraphrase, changing about", 1)[1]
        sentence = asked.split(": ", 1)[1].split("\n")[0].strip()
        if "history of" in sentence:
            return sentence.replace("history of", "past history of")
        words = sentence.split()
        return " ".join(words[:-1] + ["indeed", words[-1]])
    asked = prompt.rsplit("Question:", 1)[-1]
    if "Is this patient male?" in asked:
        return "Yes" if re.search(r"\b(man|he)\b", asked) else "No"
    return "Yes" if re.search(r"\b(man|family member)\b", asked) else "No"


@pytest.fixture
def study_db(db: sqlite_utils.Database) -> sqlite_utils.Database:
    """The store with dataset 'triage' of three yes/no items: a man, a woman, no gender."""
    builder = AuditBuilder(db, dataset="triage")
    for key, stem in STEMS.items():
        builder.item(f"t-{key}", gold="Yes", kind="binary", question=stem,
                     options={"Yes": "Yes", "No": "No"})
    return db


@pytest.fixture
def make_engine(db: sqlite_utils.Database) -> Callable[..., AuditEngine]:
    """Builds an engine whose models all run on FakeBackend(responder)."""

    def make(responder=fake_responder, **kw) -> AuditEngine:
        return fake_engine(db, responder, **kw)

    return make
