"""The LLM paraphraser's measure-and-retry loop and its fallback, on scripted outputs (fast).

The real-model run of the same loop is in test_study_real.py.
"""

from __future__ import annotations

import random

import pytest

from store.records import Item
from workbench.engine.variants import Variant
from workbench.counterfactual.paraphrase import (
    PROMPT_ID,
    Task,
    check_rewrite,
    clean_output,
    finish,
    paraphrase_messages,
    run_tasks,
    sentence_spans,
    split_question,
)
from workbench.counterfactual.plan import unit_of
from workbench.perturb.tokenize import WordTokenizer, token_change_fraction

STEM = ("A 62-year-old man presents with chest pain that began this morning. He has a history "
        "of type 2 diabetes and smoking. He reports sweating and nausea with the pain. Should "
        "this patient be sent to the emergency department today?")
TOK = WordTokenizer()


def _target(text: str, **details) -> Variant:
    return Variant(id=7, key="k7", item_id=1, operator_id="gender_swap", family="demographic",
                   intent=None, locus=None, target="question", seed=0,
                   source_generation_id=None, fired=True, reason=None, text=text, options=None,
                   gold=None, old="man", new="woman", token_change_fraction=None,
                   details=details)


def _task(target_fraction: float, stem: str = STEM) -> Task:
    item = Item("q1", "binary", stem, {"Yes": "Yes", "No": "No"}, "Yes", id=1)
    unit = unit_of(item, _target(stem.replace("man", "woman")))
    return Task(unit, "key", stem, len(TOK.tokenize(stem)), target_fraction,
                sentence_spans(stem, TOK), random.Random(0))


def sentence_of(request) -> str:
    """The sentence an attempt asks to rewrite (after the prompt's ': ')."""
    return request.messages[-1]["content"].split(": ", 1)[1]


class Scripted:
    """A paraphraser that rewrites the asked sentence with the attempt's scripted function."""

    def __init__(self, rewrites) -> None:
        self.rewrites = rewrites
        self.batches: list[list] = []

    def __call__(self, requests):
        self.batches.append(requests)
        attempt = len(self.batches) - 1
        rewrite = self.rewrites[attempt]
        return [(f"key{attempt}-{i}", None if rewrite is None else rewrite(sentence_of(r)))
                for i, r in enumerate(requests)]


def same(sentence: str) -> str:
    return sentence


def to_she(sentence: str) -> str:
    return "She " + sentence.split(" ", 1)[1]


def wordy(sentence: str) -> str:
    return sentence.rstrip(".") + ", as noted by the nurse in the clinic record this morning."


def one_word(sentence: str) -> str:
    words = sentence.split()
    return " ".join(words[:-1] + ["indeed " + words[-1]])


def test_spans_never_include_the_final_question():
    spans = sentence_spans(STEM, TOK)
    chosen = [STEM[a:b] for a, b, _ in spans]
    assert chosen == ["A 62-year-old man presents with chest pain that began this morning.",
                      "He has a history of type 2 diabetes and smoking.",
                      "He reports sweating and nausea with the pain."]
    body, question = split_question(STEM)
    assert question == " Should this patient be sent to the emergency department today?"
    assert body + question == STEM
    assert split_question("One sentence only.") == ("One sentence only.", "")


def test_output_cleaning():
    assert clean_output('Sure! Here is the paraphrase:\n"He has had diabetes for years"',
                        "He has diabetes.") == "He has had diabetes for years."
    assert clean_output("Paraphrase: He feels sick.\nMore text", "x.") == "He feels sick."
    assert clean_output("\n\n", "x.") == ""


@pytest.mark.parametrize("rewrite, problem", [
    ("", "empty output"),
    ("He has a history of type 2 diabetes and smoking.", "unchanged"),
    ("He has a history of type 1 diabetes and smoking.", "a number changed"),
    ("He has no history of type 2 diabetes and smoking.", "a negation changed"),
    ("She has a history of type 2 diabetes and smoking.", "a gendered term changed"),
    ("John has a history of type 2 diabetes and smoking.", "a gendered term changed"),
    ("He, like Dr Smith, has type 2 diabetes and smokes.", "a new name appeared (Dr)"),
    ("He has type 2 diabetes.", "length changed more than twofold"),
    ("He has a past history of type 2 diabetes and smoking.", None),
    ("Smoking and type 2 diabetes are in his history.", "a gendered term changed"),
])
def test_meaning_checks(rewrite, problem):
    original = "He has a history of type 2 diabetes and smoking."
    assert check_rewrite(original, rewrite, STEM) == problem


def test_measure_and_retry_accepts_the_first_attempt_within_tolerance():
    task = _task(0.03)
    script = Scripted([same,       # unchanged → retry
                       to_she,     # a gendered term changed → retry
                       wordy,      # about 12 tokens of 45: outside 0.03 ± 0.02 → retry
                       one_word,   # one token: 1/46 ≈ 0.022, within tolerance
                       same])      # never asked
    assert run_tasks([task], script, TOK, tolerance=0.02, max_attempts=5)
    assert [a["status"] for a in task.attempts] == [
        "unchanged", "a gendered term changed", "outside tolerance", "accepted"]
    assert len(script.batches) == 4  # stopped as soon as one was accepted
    accepted = task.accepted
    assert accepted is not None and accepted["attempt"] == 3
    assert accepted["fraction"] == pytest.approx(
        token_change_fraction(STEM, accepted["text"], TOK), abs=1e-6)
    result = finish(task, TOK, 0.02, "llm:fake")
    assert result.fired and result.details["source"] == "llm"
    assert result.details["within_tolerance"]
    assert result.token_change_fraction == pytest.approx(accepted["fraction"])
    assert result.details["reference_variant_id"] == 7
    assert result.text.endswith("today?")  # the question is never rewritten
    request = script.batches[0][0]
    assert request.template == PROMPT_ID and request.sampler.seed == 0
    assert script.batches[1][0].sampler.seed == 1  # each retry draws anew


def test_bounded_retries_then_the_deterministic_fallback_is_recorded():
    task = _task(0.05)
    script = Scripted([same] * 3)
    run_tasks([task], script, TOK, tolerance=0.03, max_attempts=3)
    assert len(task.attempts) == 3 and task.accepted is None
    result = finish(task, TOK, 0.03, "llm:fake")
    assert result.fired
    assert result.details["source"] == "fallback"
    # The table rewords the body only ("presents with", "began"), never the question.
    assert result.text.endswith("Should this patient be sent to the emergency department today?")
    assert result.text != STEM
    assert result.details["fallback"]["fraction"] == pytest.approx(
        token_change_fraction(STEM, result.text, TOK), abs=1e-6)
    assert result.details["achieved_fraction"] == result.token_change_fraction


def test_fallback_without_table_words_keeps_the_closest_valid_attempt():
    stem = "A 30-year-old man has a cough. He smokes daily. Should he see a doctor today?"
    task = _task(0.05, stem)
    script = Scripted([lambda x: one_word(one_word(x)), one_word])
    run_tasks([task], script, TOK, tolerance=0.001, max_attempts=2)
    assert [a["status"] for a in task.attempts] == ["outside tolerance"] * 2
    result = finish(task, TOK, 0.001, "llm:fake")
    assert result.details["source"] == "llm_closest"
    assert not result.details["within_tolerance"]
    closest = min(task.attempts, key=lambda a: abs(a["fraction"] - 0.05))
    assert result.text == closest["text"]


def test_nothing_valid_and_no_table_word_is_not_fired():
    stem = "A 30-year-old man has a cough. He smokes daily. Should he see a doctor today?"
    task = _task(0.05, stem)
    run_tasks([task], Scripted([to_she] * 2), TOK, tolerance=0.01, max_attempts=2)
    result = finish(task, TOK, 0.01, "llm:fake")
    assert not result.fired and result.details["source"] == "none"
    assert "no valid paraphrase" in result.reason


def test_failed_generations_and_a_stop_are_recorded():
    task = _task(0.05)
    run_tasks([task], Scripted([None, None]), TOK, tolerance=0.03, max_attempts=2)
    assert [a["status"] for a in task.attempts] == ["generation failed"] * 2
    stopped = _task(0.05)
    assert not run_tasks([stopped], Scripted([None]), TOK, 0.03, 2, should_stop=lambda: True)
    assert stopped.attempts == []


def test_the_prompt_asks_for_about_as_many_words_as_the_target():
    messages = paraphrase_messages("He has diabetes.", 2)
    assert messages[0]["role"] == "system"
    assert messages[-1] == {"role": "user",
                            "content": "Paraphrase, changing about 2 words: He has diabetes."}
    assert "changing about 1 word:" in paraphrase_messages("x", 1)[-1]["content"]
