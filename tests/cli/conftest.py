"""Stores for the CLI tests, written by the real code: the demo set, the real audit engine and
planner, the fake backend as the model (scripted answers, so flips are known), a real file.

`fake_audit` runs a small seed-002 audit whose model answers A to every original question
and B when the question says "does not" (the M4 negation): every M4 edit of an A-baseline
is a flip, the other edits keep A.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from store import open_db
from store.models import add_model
from workbench.audit import AuditSpec, run_audit
from workbench.engine import AuditEngine
from workbench.perturb import resolve_operators
from workbench.datasets.demo import import_demo
from workbench.models.fake import FakeBackend
from workbench.models.prompts import PLAIN_CHAT_TEMPLATE

CHAIN = ("Step 1: The patient has 3 findings and we compute the score.\n"
         "Step 2: Fever and pain point to the first option.\n"
         "Step 3: Therefore the first option is best.\n")

OPERATORS = "F1_truncate_50,M2_sex,M3_distractor_a,M4_negation_a,shuffle"
ITEMS = ("demo-003", "demo-001")


def negation_responder(prompt: str, sampler) -> str:
    """Judge prompts: 'Answer: No'; direct prompts: 'A'; a negated question: B; else A."""
    tail = prompt[-400:]
    if prompt.rstrip().endswith("Assistant:") and "Does the reasoning" in tail:
        return "Answer: No"
    if "Answer with" in prompt[-200:]:
        return " A"
    if "does not" in prompt or "do not" in prompt:
        return CHAIN.replace("first option", "second option") + "Answer: B"
    return CHAIN + "Answer: A"


def run_fake_audit(path: str | Path, *, name: str | None = None, responder=negation_responder,
                   on_event=None):
    """Import the demo set into `path` (created) and run the small audit on the fake model."""
    db = open_db(path, create=True)
    import_demo(db)
    model = add_model(db, name="fake", path="/nowhere/fake.gguf", sha256="f" * 64,
                      chat_template=PLAIN_CHAT_TEMPLATE)
    engine = AuditEngine(db, backend_factory=lambda m: FakeBackend(responder))
    spec = AuditSpec(dataset="demo", models=("fake",), item_ids=ITEMS,
                     operators=resolve_operators(OPERATORS), max_tokens=400, name=name)
    try:
        outcome = run_audit(db, spec, engine=engine, judge_model=model, on_event=on_event)
    finally:
        engine.close()
    db.conn.close()
    return outcome


@pytest.fixture
def fake_audit(tmp_path) -> tuple[str, object]:
    """(database path, audit outcome) of the small fake-model audit on a real file."""
    path = str(tmp_path / "paw.db")
    return path, run_fake_audit(path)
