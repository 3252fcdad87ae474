"""M1–M6 worked examples from seed 002 Appendix F, including the not-fired cases."""

from __future__ import annotations

import pytest

from analysis.audit.definitions import NEGATION_PATTERNS
from tests.perturb.helpers import run
from workbench.perturb.question import M3_DISTRACTORS

KEYS = [f"q-{i}" for i in range(120)]
STEM = "A 45-year-old man presents with chest pain. He smokes. ECG is normal. What is next?"


# ---- M1 fact ablation ----------------------------------------------------------------------
@pytest.mark.parametrize("variant", "ab")
def test_m1_drops_a_sentence_but_never_the_last_two(variant):
    dropped = {run(f"M1_ablation_{variant}", STEM, item_key=k).old for k in KEYS}
    # 4 sentences, the final two protected: only sentences 1 and 2 can go.
    assert dropped == {"A 45-year-old man presents with chest pain.", "He smokes."}
    result = run(f"M1_ablation_{variant}", "First fact. Second fact. Which one?")
    assert result.text == "Second fact. Which one?"  # 3 sentences: only the first can go


@pytest.mark.parametrize("variant", "ab")
def test_m1_not_fired_under_three_sentences(variant):
    result = run(f"M1_ablation_{variant}", "A 45-year-old man has chest pain. What is next?")
    assert not result.fired and "fewer than three" in result.reason


# ---- M2 demographic ------------------------------------------------------------------------
@pytest.mark.parametrize("variant", "ab")
@pytest.mark.parametrize(
    ("age", "allowed"),
    [(45, {5, 12, 75, 85}), (18, {5, 12, 75, 85}), (60, {5, 12, 75, 85}),
     (17, {55, 65, 72}), (3, {55, 65, 72}), (61, {8, 14, 17}), (90, {8, 14, 17})],
)
def test_m2_age_crosses_the_bracket(variant, age, allowed):
    result = run(f"M2_age_{variant}", f"A {age}-year-old man presents with chest pain.")
    assert result.old == str(age) and int(result.new) in allowed
    assert result.text == f"A {result.new}-year-old man presents with chest pain."


def test_m2_age_regex_forms_and_independent_variants():
    assert run("M2_age_a", "A 45 year old man.").old == "45"
    assert run("M2_age_a", "A 45-year old man.").old == "45"
    assert not run("M2_age_a", "A 45-years-old man.").fired  # "years" is not in the regex
    a = [run("M2_age_a", STEM, item_key=k).new for k in KEYS]
    b = [run("M2_age_b", STEM, item_key=k).new for k in KEYS]
    assert set(a) == set(b) == {"5", "12", "75", "85"} and a != b


def test_m2_age_not_fired_without_an_age():
    result = run("M2_age_b", "A man presents with chest pain.")
    assert not result.fired and result.reason == "no N-year-old age"


def test_m2_sex_flips_every_marker_and_keeps_case():
    result = run("M2_sex", "A 45-year-old man; Male sex. The boy and the woman.")
    assert result.text == "A 45-year-old woman; Female sex. The girl and the man."
    assert (result.old, result.new) == ("man", "woman")
    assert run("M2_sex", "A female infant").text == "A male infant"
    # whole words only: human, manage, females' prefixes are untouched
    assert not run("M2_sex", "A human manages the mandible.").fired


def test_m2_sex_not_fired_without_a_marker():
    assert run("M2_sex", "A 45-year-old patient.").reason.startswith("no sex marker")


# ---- M3 distractor -------------------------------------------------------------------------
@pytest.mark.parametrize("variant", "ab")
def test_m3_prepends_one_of_five_and_always_fires(variant):
    seen = set()
    for key in KEYS:
        result = run(f"M3_distractor_{variant}", STEM, item_key=key)
        assert result.text == f"{result.new} {STEM}"
        seen.add(result.new)
    assert seen == set(M3_DISTRACTORS)
    assert run(f"M3_distractor_{variant}", "").fired


# ---- M4 negation ---------------------------------------------------------------------------
@pytest.mark.parametrize("variant", "ab")
def test_m4_paper_example(variant):
    result = run(f"M4_negation_{variant}", "A 30-year-old woman presents with fever")
    assert result.text == "A 30-year-old woman does not present with fever"
    assert (result.old, result.new) == ("presents with", "does not present with")
    assert result.details["chain_update_patterns"] == list(NEGATION_PATTERNS)


def test_m4_scan_orders_diverge():
    stem = "He has a history of asthma and complains of wheeze."
    # (a): presents with, reports, has a history of, ... -> "has a history of" first
    assert run("M4_negation_a", stem).text == (
        "He does not have a history of asthma and complains of wheeze.")
    # (b): complains of, has a history of, reports, presents with -> "complains of" first
    assert run("M4_negation_b", stem).text == (
        "He has a history of asthma and does not complain of wheeze.")
    assert run("M4_negation_b", "She reports pain.").text == "She does not report pain."


def test_m4_not_fired_without_a_hinge_phrase():
    for text in ["Presents with fever.", "She misreports pain.", "No hinge here."]:
        result = run("M4_negation_a", text)
        assert not result.fired and result.reason == "no clinical hinge phrase"


# ---- M5 severity ---------------------------------------------------------------------------
@pytest.mark.parametrize("variant", "ab")
def test_m5_acute_mountain_sickness(variant):
    stem = "Which drug is given to prevent acute mountain sickness?"
    result = run(f"M5_severity_{variant}", stem)
    assert result.text == "Which drug is given to prevent chronic mountain sickness?"
    assert (result.old, result.new) == ("acute", "chronic")


@pytest.mark.parametrize(
    ("stem", "a", "b"),
    [
        ("moderate asthma", "severe asthma", "mild asthma"),  # the 'moderate' targets differ
        ("mild pain, chronic course", "severe pain, chronic course", "mild pain, acute course"),
        ("a low-grade fever", "a high-grade fever", "a high-grade fever"),
        ("a high-grade lesion", "a low-grade lesion", "a low-grade lesion"),
        ("severe and acute", "mild and acute", "severe and chronic"),
    ],
)
def test_m5_tables_and_scan_orders(stem, a, b):
    assert run("M5_severity_a", stem).text == a
    assert run("M5_severity_b", stem).text == b


def test_m5_not_fired_without_a_qualifier():
    for text in ["Subacute thyroiditis.", "Severe pain.", "Mildly raised."]:
        assert run("M5_severity_a", text).reason == "no severity qualifier"


# ---- M6 temporal ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("stem", "a", "b"),
    [
        ("Cough for the past 3 days.", "Cough for the past three weeks.",
         "Cough for the past several months."),
        ("Cough for the past five days.", "Cough for the past three weeks.",
         "Cough for the past several months."),
        ("Fever since yesterday.", "Fever since last year.", "Fever since last month."),
        ("Pain began a few days ago.", "Pain began several years ago.",
         "Pain began over a year ago."),
        ("Worse over the last week.", "Worse over the last six months.",
         "Worse over the last year."),
        ("For two weeks.", "For two years.", "For two years."),
        ("Rash since two weeks, fever yesterday.", "Rash since two weeks, fever last year.",
         "Rash since two years, fever yesterday."),
        ("Seen last month.", None, "Seen several years ago."),
        ("Began this morning.", None, "Began last spring."),
    ],
)
def test_m6_patterns_in_scan_order(stem, a, b):
    result_a, result_b = run("M6_temporal_a", stem), run("M6_temporal_b", stem)
    assert result_a.text == a and result_b.text == b
    if a is None:
        assert result_a.reason == "no time phrase"


def test_m6_not_fired_without_a_time_phrase():
    assert not run("M6_temporal_b", "A 45-year-old man with chest pain.").fired
