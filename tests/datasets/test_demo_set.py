"""The shipped demo set: well-formed items that together fire every M-block trigger."""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

import pytest

DEMO_PACKAGE = "workbench.datasets.demo"

# Trigger patterns of the M-block operators, seed 002 Appendix F (written out here from the
# paper's word lists, not imported from workbench.perturb, so the data is checked against
# the paper and not against our own implementation of it).
AGE = re.compile(r"(\d{1,3})[- ]*year[- ]*old", re.IGNORECASE)  # M2 age-a/age-b, verbatim


def _words(*words: str) -> dict[str, re.Pattern[str]]:
    return {w: re.compile(rf"\b{re.escape(w)}\b", re.IGNORECASE) for w in words}


SEX = _words("man", "woman", "boy", "girl", "male", "female")  # M2 sex flip
HINGES = _words("presents with", "reports", "has a history of", "complains of")  # M4
SEVERITY = _words("mild", "moderate", "severe", "acute", "chronic",
                  "low-grade", "high-grade")  # M5 (a) and (b) share these seven
TEMPORAL = {  # union of the M6 (a) five and (b) seven phrases
    "for the past N days": re.compile(r"\bfor the past \d+ days\b", re.IGNORECASE),
    **_words("over the last week", "a few days ago", "yesterday", "two weeks",
             "last month", "this morning"),
}

MIN_ITEMS_PER_TRIGGER = 2
"""Every trigger must fire on at least this many items (the issue asks for >= 1; two keep a
per-operator firing rate from resting on a single vignette)."""

SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")


def _load(filename: str) -> list[dict[str, Any]]:
    text = resources.files(DEMO_PACKAGE).joinpath(filename).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def age_bracket(age: int) -> str:
    """The M2 bracket of an age: '<18' (pediatric), '>60' (geriatric) or '18-60'."""
    return "<18" if age < 18 else ">60" if age > 60 else "18-60"


def trigger_counts(questions: list[str]) -> dict[str, int]:
    """How many questions contain each M-block trigger (an item counts once per trigger).

    Args:
        questions: question stems.

    Returns:
        Counts keyed by trigger name: age brackets as `age <18` etc., then the phrases.
    """
    counts: dict[str, int] = {f"age {b}": 0 for b in ("<18", "18-60", ">60")}
    for question in questions:
        for bracket in {age_bracket(int(m.group(1))) for m in AGE.finditer(question)}:
            counts[f"age {bracket}"] += 1
    for table in (SEX, HINGES, SEVERITY, TEMPORAL):
        for name, pattern in table.items():
            counts[name] = sum(bool(pattern.search(q)) for q in questions)
    return counts


@pytest.fixture(scope="module")
def mcq() -> list[dict[str, Any]]:
    return _load("vignettes.jsonl")


@pytest.fixture(scope="module")
def binary() -> list[dict[str, Any]]:
    return _load("triage.jsonl")


def test_sizes_and_kinds(mcq, binary):
    assert len(mcq) >= 40 and all(r["kind"] == "mcq" for r in mcq)
    assert len(binary) >= 10 and all(r["kind"] == "binary" for r in binary)


def test_ids_unique_across_both_files(mcq, binary):
    ids = [r["id"] for r in mcq + binary]
    assert len(ids) == len(set(ids))


def test_each_item_is_well_formed(mcq, binary):
    for r in mcq + binary:
        assert set(r) == {"id", "kind", "question", "options", "answer", "subject",
                          "rationale"}, r["id"]
        assert len(r["options"]) >= 2, r["id"]
        assert r["answer"] in r["options"], r["id"]
        assert r["question"].strip() and r["subject"].strip(), r["id"]
        assert r["rationale"].strip(), r["id"]
        texts = [t.strip().lower() for t in r["options"].values()]
        assert all(texts) and len(set(texts)) == len(texts), f"{r['id']}: repeated option"


def test_mcq_labels_are_consecutive_letters(mcq):
    for r in mcq:
        assert list(r["options"]) in (list("ABCD"), list("ABCDE")), r["id"]


def test_triage_items_ask_the_triage_question_and_are_balanced(binary):
    for r in binary:
        assert r["options"] == {"Yes": "Yes", "No": "No"}, r["id"]
        assert r["question"].endswith(
            "Should this patient be sent to the emergency department today?"), r["id"]
    n_yes = sum(r["answer"] == "Yes" for r in binary)
    # "Balanced-ish": neither answer may be under a third of the items.
    assert len(binary) / 3 <= n_yes <= 2 * len(binary) / 3, f"{n_yes} Yes of {len(binary)}"


def test_no_two_items_share_a_stem(mcq, binary):
    stems = [r["question"] for r in mcq + binary]
    assert len(stems) == len(set(stems))


def test_every_m_block_trigger_fires(mcq, binary):
    counts = trigger_counts([r["question"] for r in mcq + binary])
    missing = {name: n for name, n in counts.items() if n < MIN_ITEMS_PER_TRIGGER}
    assert not missing, f"triggers under {MIN_ITEMS_PER_TRIGGER} items: {missing}; all: {counts}"


def test_stems_that_make_the_a_and_b_variants_diverge(mcq, binary):
    questions = [r["question"] for r in mcq + binary]

    def n_with_two(table: dict[str, re.Pattern[str]]) -> int:
        return sum(sum(bool(p.search(q)) for p in table.values()) >= 2 for q in questions)

    # M4 (a) and (b) scan the hinge table in opposite orders; M5 likewise for severity.
    assert n_with_two(HINGES) >= 2
    assert n_with_two(SEVERITY) >= 2
    # M5 (a) and (b) map "moderate" to different targets.
    assert sum(bool(SEVERITY["moderate"].search(q)) for q in questions) >= 2


def test_most_stems_let_fact_ablation_fire(mcq, binary):
    # M1 protects the last two sentences and does not fire on stems under three sentences.
    questions = [r["question"] for r in mcq + binary]
    n_long = sum(len(SENTENCE_END.split(q.strip())) >= 3 for q in questions)
    assert n_long >= 0.9 * len(questions), f"{n_long} of {len(questions)} have >= 3 sentences"
