"""Fixture audits for the annotation tests, written through `tests.builders.AuditBuilder`.

`make_audit` writes a small audit whose every answer is chosen by hand:

- two arms, 'smollm2/cot' and 'qwen-7b/cot-v2' (model names the blinding tests hunt for);
- `n_items` items, options A 'Septic shock' (high-acuity), B 'Viral gastroenteritis',
  C 'Migraine', D 'Tension headache'; gold A; every baseline answers A;
- per item and arm, destructive M-block edits M2, M3, M4, M5 (all fired), whose answer is
  B on odd items (a flip; on M3/M4/M5 that flip gets the harm question) and A on even ones;
- noise the sampler must skip: an F-block edit, a shuffle and a not-fired M1 edit.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import sqlite_utils

from annotate.trust.identity import Person
from annotate.trust.people import register
from tests.builders import AuditBuilder

OPTIONS = {"A": "Septic shock", "B": "Viral gastroenteritis", "C": "Migraine",
           "D": "Tension headache"}
ARMS = ("smollm2/cot", "qwen-7b/cot-v2")
PASSPHRASE = "correct horse battery"
M_EDITS = (("M2_sex", "M2", "man", "woman"), ("M3_distractor", "M3", None, "Her cat is ill."),
           ("M4_negation", "M4", "has", "does not have"), ("M5_severity", "M5", "mild", "severe"))


def make_audit(db: sqlite_utils.Database, n_items: int = 10, *, arms=ARMS,
               families: tuple[str, ...] = ("M2", "M3", "M4", "M5"),
               audit: str = "audit-1") -> AuditBuilder:
    """Write the fixture audit described in the module docstring; returns the builder."""
    b = AuditBuilder(db, audit=audit)
    arm_ids = [b.arm(label) for label in arms]
    for i in range(n_items):
        question = f"A 50-year-old man has mild fever and confusion, case {i}. Diagnosis?"
        item = b.item(f"q{i}", gold="A", options=OPTIONS, question=question)
        for arm in arm_ids:
            b.baseline(arm, item, answer="A", output="Fever and confusion suggest sepsis. A")
            for operator, family, old, new in M_EDITS:
                if family not in families:
                    continue
                edited = (question.replace(old, new) if old else f"{question} {new}")
                ids = b.perturbed(arm, item, operator_id=operator, family=family, intent="D",
                                  answer="B" if i % 2 else "A", old=old, new=new,
                                  output=f"As smollm2 I note the {new} detail. Answer B")
                db["variants"].update(ids.variant_id, {"text": edited})
            b.perturbed(arm, item, operator_id="F1_truncate_50", family="F1", intent="D",
                        answer="B", output="truncated")
            b.perturbed(arm, item, operator_id="shuffle_a", family="shuffle", answer="C",
                        options={"A": "Migraine", "B": "Septic shock", "C": "Tension headache",
                                 "D": "Viral gastroenteritis"}, gold="B")
            b.perturbed(arm, item, operator_id="M1_unit", family="M1", intent="P", fired=False)
    return b


@pytest.fixture
def audit(db) -> AuditBuilder:
    """The fixture audit (10 items × 2 arms) in the in-memory `db`."""
    return make_audit(db)


@pytest.fixture
def people(db) -> dict[str, Person]:
    """Raters alice and bob, coordinator carol (all with `PASSPHRASE`; alice and bob
    register before any coordinator exists, which needs no coordinator's passphrase)."""
    return {"alice": register(db, "alice", "rater", PASSPHRASE),
            "bob": register(db, "bob", "rater", PASSPHRASE),
            "carol": register(db, "carol", "coordinator", PASSPHRASE)}


def named(people: dict[str, Person]) -> dict:
    """`create_set` keywords naming alice and bob as the set's raters, signed by carol."""
    return {"raters": ("alice", "bob"), "coordinator": people["carol"]}


def save_to_file(db: sqlite_utils.Database, path: Path) -> str:
    """Copy an in-memory store to a file (fast: no fsync per fixture row); returns the path."""
    db.execute("VACUUM INTO ?", [str(path)])
    return str(path)


def child_env() -> dict[str, str]:
    """Environment for subprocesses: the repo on the path, the passphrase in PAW_TEST_PW."""
    root = str(Path(__file__).resolve().parents[2])
    return {**os.environ, "PYTHONPATH": root, "PAW_TEST_PW": PASSPHRASE}
