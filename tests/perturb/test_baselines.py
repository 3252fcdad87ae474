"""Seed-000 baselines and controls, seed-003 demographic prefixes, and the option shuffle."""

from __future__ import annotations

import itertools
import random

import pytest

from tests.perturb.helpers import run
from workbench.perturb import OPERATORS, Paraphrase, WordTokenizer, token_change_fraction
from workbench.perturb.baselines import FIXED_SENTENCES
from workbench.perturb.paraphrase import PARAPHRASE_TABLE

STEM = (
    "A 28-year-old man presents to the emergency department with chest pain. He is otherwise "
    "healthy and denies fever. The physician notes that the pain began approximately 2 hours "
    "ago and the examination reveals tenderness. Which of the following is the most likely "
    "diagnosis?"
)
OPTIONS = {"A": "Costochondritis", "B": "Pericarditis", "C": "Pneumothorax", "D": "Myocarditis"}


# ---- fixed sentence ------------------------------------------------------------------------
def test_fixed_sentence_default_and_named_sentences():
    assert run("fixed_sentence", STEM).text == f"This patient record has been reviewed. {STEM}"
    named = run("fixed_sentence", STEM, params={"sentence": "family_member"})
    assert named.text == f"A family member came with me to the appointment. {STEM}"
    custom = run("fixed_sentence", STEM, params={"sentence": "The clinic is busy today."})
    assert custom.text.startswith("The clinic is busy today. A 28")
    # seed 000 prints "This profile has been viewed" without a full stop; one is added.
    assert run("fixed_sentence_profile_viewed", "Q?").text == "This profile has been viewed. Q?"
    assert set(FIXED_SENTENCES) == {"family_member", "profile_viewed", "record_reviewed"}


# ---- demographic prefixes ------------------------------------------------------------------
def test_six_demographic_prefixes():
    ids = [i for i in OPERATORS if i.startswith("demo_prefix_")]
    expected = {f"demo_prefix_{s}_{r}" for s in ("male", "female")
                for r in ("white", "black", "hispanic")}
    assert set(ids) == expected and len(ids) == 6
    for sex, race in itertools.product(("male", "female"), ("White", "Black", "Hispanic")):
        result = run(f"demo_prefix_{sex}_{race.lower()}", STEM)
        assert result.text == f"The patient is a 45-year-old {race} {sex}. {STEM}"


# ---- option shuffle ------------------------------------------------------------------------
def test_option_shuffle_permutes_and_remaps_gold():
    result = run("option_shuffle", "Stem?", options=OPTIONS, gold="B")
    assert result.fired and result.text == "Stem?"
    assert list(result.options) == list(OPTIONS)  # same letters, same order
    assert sorted(result.options.values()) == sorted(OPTIONS.values())
    assert result.options != OPTIONS  # never the identity
    assert result.options[result.gold] == OPTIONS["B"]  # gold follows its content
    assert (result.old, result.new) == ("B", result.gold)


def test_option_shuffle_is_fixed_per_item_and_covers_every_non_identity_permutation():
    def perm(key: str) -> tuple[str, ...]:
        return tuple(run("option_shuffle", "Q", options=OPTIONS, item_key=key).options.values())

    assert perm("item-7") == perm("item-7")
    seen = {perm(f"item-{i}") for i in range(600)}
    # 4! = 24 permutations minus the identity = 23
    assert len(seen) == 23 and tuple(OPTIONS.values()) not in seen


def test_option_shuffle_not_fired_cases():
    assert not run("option_shuffle", "Q", options=None).fired
    assert not run("option_shuffle", "Q", options={"A": "x"}).fired
    assert run("option_shuffle", "Q", options={"A": "x", "B": "x"}).reason == (
        "all options have the same text")


# ---- recall and precision controls ---------------------------------------------------------
def test_recall_control_swaps_gender_and_asks_the_sex_question():
    stem = "A 45-year-old man presents with cough. He smokes and his wife is worried. What next?"
    result = run("control_recall", stem)
    assert result.text == (
        "A 45-year-old woman presents with cough. She smokes and her husband is worried. "
        "Is this patient male?")
    # A plain Yes/No question, as seed 000's authors ask it (not lettered options).
    assert result.options == {"Yes": "Yes", "No": "No"}
    assert result.gold == "No"  # now a woman
    assert result.details["control_baseline_text"] == (
        "A 45-year-old man presents with cough. He smokes and his wife is worried. "
        "Is this patient male?")
    assert result.details["control_baseline_gold"] == "Yes"
    assert (result.old, result.new) == ("man", "woman")


def test_recall_control_resolves_her():
    result = run("control_recall", "She gave her keys to her son. I told her.")
    assert result.text == "He gave his keys to his daughter. I told him. Is this patient male?"


def test_recall_control_not_fired_without_gendered_terms():
    assert not run("control_recall", "A 45-year-old patient presents with cough.").fired


def test_precision_control_adds_one_year():
    result = run("control_precision", "A 28-year-old woman has a rash. Which drug?")
    assert result.text == "A 29-year-old woman has a rash. Is this patient male?"
    assert (result.old, result.new) == ("28", "29")
    assert result.gold == result.details["control_baseline_gold"] == "No"
    assert run("control_precision", "She is 28 years old.").new == "29"
    assert not run("control_precision", "A woman has a rash.").fired


# ---- token-adjusted paraphrase -------------------------------------------------------------
@pytest.mark.parametrize("target", [0.05, 0.10, 0.20])
def test_paraphrase_reaches_the_target_within_tolerance(target):
    result = run("paraphrase_token_adjusted", STEM, params={"target_fraction": target})
    assert result.fired
    achieved = token_change_fraction(STEM, result.text, WordTokenizer())  # measured again
    assert abs(achieved - target) <= 0.03
    assert result.details["achieved_fraction"] == pytest.approx(achieved, abs=1e-6)
    assert result.token_change_fraction == pytest.approx(achieved, abs=1e-6)


def test_paraphrase_keeps_numbers_negations_and_demographics():
    protected = ["28-year-old", "man", "He", "denies", "2", "hours", "chest pain"]
    for key in range(30):
        result = run("paraphrase_token_adjusted", STEM, item_key=str(key),
                     params={"target_fraction": 0.15})
        for word in protected:
            assert word in result.text


def test_paraphrase_table_has_no_protected_terms():
    banned = {"no", "not", "denies", "never", "without", "man", "woman", "male", "female",
              "he", "she", "his", "her", "year", "old", "mild", "severe", "acute", "chronic"}
    for source, target in PARAPHRASE_TABLE:
        words = set(source.lower().split()) | set(target.lower().split())
        assert not words & banned, (source, target)
        assert not any(ch.isdigit() for ch in source + target)


def test_paraphrase_strict_and_lenient_when_the_target_is_out_of_reach():
    text = "The physician examined him."  # one rewording possible: 1/5 tokens = 0.2
    strict = run("paraphrase_token_adjusted", text, params={"target_fraction": 0.6})
    assert not strict.fired and strict.reason.startswith("could not reach 0.600")
    lenient = run("paraphrase_token_adjusted", text,
                  params={"target_fraction": 0.6, "strict": False})
    assert lenient.fired and lenient.details["within_tolerance"] is False
    assert lenient.text == "The doctor examined him."


def test_paraphrase_uses_the_supplied_tokenizer_and_paraphraser():
    class CharTokenizer:
        def tokenize(self, text: str) -> list[str]:
            return list(text)

    class Echo:
        name = "echo"

        def paraphrase(self, text, *, target_fraction, tolerance, tokenizer, rng):
            assert isinstance(rng, random.Random)
            new = text.upper()
            fraction = token_change_fraction(text, new, tokenizer)
            return Paraphrase(new, fraction, abs(fraction - target_fraction) <= tolerance)

    result = run("paraphrase_token_adjusted", "ab", tokenizer=CharTokenizer(),
                 params={"target_fraction": 1.0, "paraphraser": Echo()})
    assert result.text == "AB" and result.details["paraphraser"] == "echo"
    assert result.token_change_fraction == 1.0  # both characters changed


@pytest.mark.parametrize("target", [0.01, 0.02, 0.03])
def test_paraphrase_tries_rewordings_when_the_target_is_within_the_tolerance(target):
    # a race swap or age + 1 changes one token: its target is at or below the tolerance, and
    # the baseline still rewords (the tolerance decides acceptance, not whether to try)
    result = run("paraphrase_token_adjusted", STEM, params={"target_fraction": target})
    assert result.fired and result.text != STEM and result.details["edits"]
    achieved = token_change_fraction(STEM, result.text, WordTokenizer())
    assert 0 < achieved <= target + 0.03


def test_paraphrase_failure_reasons_are_true():
    none = run("paraphrase_token_adjusted", "A cough for 2 days.",
               params={"target_fraction": 0.02})
    assert not none.fired
    assert none.reason == "no rewording of the paraphrase table occurs in the text"
    # "physician" -> "doctor" alone changes 1 of 5 tokens (the full stop is one)
    big = run("paraphrase_token_adjusted", "The physician examined him.",
              params={"target_fraction": 0.02, "tolerance": 0.01})
    assert not big.fired
    assert big.reason == ("each of the 1 applicable rewordings alone changes more than 0.030 "
                          "of the tokens (the least 0.200)")
