"""Fixtures for the runner tests: a few hand-written items and the embedded model."""

from __future__ import annotations

import pytest
import sqlite_utils

from store.datasets import add_items, ensure_dataset, get_items
from store.records import Item

VIGNETTES = [
    Item(source_id="mi", kind="mcq",
         question="A 60-year-old man has crushing chest pain radiating to the left arm and "
                  "ST elevation in leads II, III and aVF. Which artery is most likely occluded?",
         options={"A": "Right coronary artery", "B": "Left circumflex artery",
                  "C": "Left anterior descending artery", "D": "Left main coronary artery"},
         gold="A"),
    Item(source_id="dka", kind="mcq",
         question="A 19-year-old with type 1 diabetes has vomiting, deep rapid breathing and a "
                  "glucose of 480 mg/dL. What is the first step in treatment?",
         options={"A": "Intravenous normal saline", "B": "Oral metformin",
                  "C": "Subcutaneous glargine", "D": "Sodium bicarbonate"},
         gold="A"),
    Item(source_id="triage", kind="binary",
         question="A 70-year-old woman has sudden weakness of the right arm and slurred speech "
                  "that began 30 minutes ago. Should she go to the emergency department now?",
         options={"Yes": "Yes", "No": "No"}, gold="Yes"),
]


def add_vignettes(db: sqlite_utils.Database, name: str = "vignettes",
                  items: list[Item] | None = None) -> list[Item]:
    """Store the hand-written items in a dataset and return them with their ids."""
    dataset = ensure_dataset(db, name, "jsonl")
    add_items(db, dataset, items if items is not None else VIGNETTES)
    return get_items(db, name)


@pytest.fixture
def items(db: sqlite_utils.Database) -> list[Item]:
    """The three hand-written items stored in dataset 'vignettes' of the in-memory store."""
    return add_vignettes(db)
