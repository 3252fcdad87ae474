"""The metric definitions: keyword set K, hazard weights, token rule, negation patterns."""

from __future__ import annotations

import pytest

from analysis.audit import definitions as d
from analysis.common import bootstrap


def test_keyword_set_is_the_papers_eighteen_terms():
    assert len(d.HIGH_ACUITY_KEYWORDS) == 18
    assert len(set(d.HIGH_ACUITY_KEYWORDS)) == 18
    assert {"sepsis", "myocardial infarction", "diabetic ketoacidosis", "ectopic"} <= set(
        d.HIGH_ACUITY_KEYWORDS)


@pytest.mark.parametrize("text, expected", [
    ("Bacterial MENINGITIS", True),        # case-folded
    ("Septicemia", True),                  # substring: 'septic' inside 'septicemia'
    ("Acute myocardial infarction", True),
    ("Tension headache", False),
    (None, False),
    ("", False),
])
def test_high_acuity_is_a_case_folded_substring_match(text, expected):
    assert d.is_high_acuity(text) is expected


@pytest.mark.parametrize("before, after, weight", [
    ("Ruptured ectopic pregnancy", "Gastroenteritis", 1.0),   # miss
    ("Gastroenteritis", "Sepsis", 0.3),                       # false alarm
    ("Gastroenteritis", "Migraine", 0.5),                     # benign -> benign
    ("Stroke", "Pulmonary embolism", 0.5),                    # high -> high: class kept
])
def test_chs_weight_by_acuity_transition(before, after, weight):
    assert d.chs_weight(before, after) == weight


def test_weights_gate_and_corridor_match_the_paper():
    assert (d.W_MISS, d.W_FALSE_ALARM, d.W_NEUTRAL_FLIP) == (1.0, 0.3, 0.5)
    assert d.MFC_WEIGHTS == (0.5, 0.3, 0.2)
    assert d.MFC_MIN_ECR == 0.30
    assert d.FCS_CORRIDOR == (0.45, 0.55)
    assert bootstrap.N_BOOT == 200
    assert d.DFG_CONDITIONS == ("baseline", "M2_age_a", "M2_age_b", "M2_sex")
    assert d.NEGATION_PATTERNS == ("does not", "denies", "no longer", "never")


def test_mentions_is_whole_word_and_case_folded():
    assert d.mentions("The Chronic course suggests", "chronic")
    # 'male' must not be found inside 'female' (M2 sex swap female -> male).
    assert not d.mentions("a female patient", "male")
    assert d.mentions("a 72-year-old man", "72")
    assert not d.mentions("a 172 cm tall man", "72")
    assert d.mentions("a low-grade fever", "low-grade")
    assert not d.mentions("text", None)
    assert not d.mentions(None, "token")


def test_chain_update_token_rule():
    # M5 and M2 use the operator's new token.
    assert d.chain_updated("M5", "This chronic mountain sickness ...", "chronic") is True
    assert d.chain_updated("M5", "Acute mountain sickness ...", "chronic") is False
    # M4 uses any negation pattern, whatever the new token is.
    assert d.chain_updated("M4", "The patient Denies chest pain", "does not report") is True
    assert d.chain_updated("M4", "The patient reports chest pain", "does not report") is False
    assert d.chain_updated("M4", "Whenever it hurts", None) is False  # 'never' is whole-word
    # Without a new token the rule cannot be applied.
    assert d.chain_updated("M2", "anything", None) is None
