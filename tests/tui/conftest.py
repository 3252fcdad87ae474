"""Fixture store for the TUI tests: a small synthetic audit, one annotation set, two raters
and a coordinator, all written through the annotate API and tests/builders.py."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from annotate.sets.audit import create_set
from annotate.trust.identity import Person
from annotate.trust.people import register
from store import open_db
from tests.builders import AuditBuilder

SET_NAME = "pilot"
PASSPHRASE = "correct horse battery"

MODEL_NAMES = ("smollm2", "qwen2.5-7b")
"""Model names in the fixture; a rater's screen must never show them."""

ARM_LABELS = ("smollm2/cot", "qwen2.5-7b/cot")
"""Arm labels in the fixture (model/template)."""

OPTIONS = {
    "A": "Acute myocardial infarction",
    "B": "Stable angina",
    "C": "Gastro-oesophageal reflux",
    "D": "Musculoskeletal chest pain",
}

# (operator, family, intent, original stem, edited stem, arm index, answer after the edit).
# Every baseline answers A (the gold). Families decide the conditional fields:
# M3/M4/M5 destructive flips get the harm question; M2/M4/M5 get chain registration.
CASES = [
    ("M3_negation", "M3", "D",
     "A 54-year-old man has crushing chest pain and ST elevation. Diagnosis?",
     "A 54-year-old man has no crushing chest pain and ST elevation. Diagnosis?", 0, "B"),
    ("M2_sex", "M2", "P",
     "A 61-year-old woman has crushing chest pain at rest. Diagnosis?",
     "A 61-year-old man has crushing chest pain at rest. Diagnosis?", 1, "A"),
    ("M3_hedge", "M3", "D",
     "A 47-year-old man has sudden chest pain with sweating. Diagnosis?",
     "A 47-year-old man has possibly sudden chest pain with sweating. Diagnosis?", 0, "A"),
    ("M5_severity", "M5", "D",
     "A 70-year-old man has acute severe chest pain. Diagnosis?",
     "A 70-year-old man has chronic mild chest pain. Diagnosis?", 1, "C"),
    ("M4_vitals", "M4", "D",
     "A 66-year-old woman has chest pain, BP 90/60. Diagnosis?",
     "A 66-year-old woman has chest pain, BP 120/80. Diagnosis?", 0, "A"),
    ("M2_age", "M2", "P",
     "A 58-year-old man has chest pain after exertion. Diagnosis?",
     "A 38-year-old man has chest pain after exertion. Diagnosis?", 1, "A"),
]


@dataclass(frozen=True)
class Fixture:
    """The on-disk store and the people registered in it."""

    db_path: str
    alice: Person
    bob: Person
    carol: Person
    """The coordinator."""


@pytest.fixture(autouse=True)
def frozen_refresh_time(monkeypatch):
    """The workbench's status lines say "refreshed HH:MM:SS" at a fixed time in every TUI
    test, so a snapshot is the same on every run (tests/tui/test_follow.py checks the real
    clock's text through the function it imported)."""
    monkeypatch.setattr("workbench.tui.follow.refreshed_text",
                        lambda at=None: "refreshed 12:00:00")


@pytest.fixture
def annotation_db(tmp_path) -> Fixture:
    """A real WAL file with 6 cases (2 harm cases, 4 chain cases) and three people."""
    path = str(tmp_path / "paw.db")
    db = open_db(path)
    builder = AuditBuilder(db, audit="chest-pain-audit")
    arms = [builder.arm(label) for label in ARM_LABELS]
    for n, (operator, family, intent, stem, edited, arm, after) in enumerate(CASES):
        item = builder.item(f"q{n}", gold="A", options=OPTIONS, question=stem)
        # Create the variant first with its real edited text; perturbed() then reuses it.
        builder.variant(item, operator_id=operator, family=family, intent=intent, text=edited)
        builder.baseline(arms[arm], item, answer="A",
                         output=f"I am {MODEL_NAMES[arm]}. The answer is A")
        builder.perturbed(arms[arm], item, operator_id=operator, family=family, intent=intent,
                          answer=after,
                          output=f"As {MODEL_NAMES[arm]} I note the edit; answer {after}")
    alice = register(db, "alice", "rater", PASSPHRASE)
    bob = register(db, "bob", "rater", PASSPHRASE)
    carol = register(db, "carol", "coordinator", PASSPHRASE)
    create_set(db, builder.audit_id, size=len(CASES), per_family=None, seed=7, name=SET_NAME,
               raters=("alice", "bob"), coordinator=carol)
    db.conn.close()
    return Fixture(path, alice, bob, carol)


@dataclass(frozen=True)
class Clinic:
    """The store of `tests.tui.clinic`: a long MCQ, a yes/no, a harm and a chain case."""

    db_path: str
    alice: Person
    bob: Person
    carol: Person


@pytest.fixture
def clinic_db(tmp_path) -> Clinic:
    """`tests.tui.clinic.build` in a fresh WAL file."""
    from tests.tui.clinic import build

    path = str(tmp_path / "clinic.db")
    people = build(path)
    return Clinic(path, people["alice"], people["bob"], people["carol"])
