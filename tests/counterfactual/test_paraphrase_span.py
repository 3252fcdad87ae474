"""Paraphrases that span several sentences (the dose-response design's 'fit' span) and the
extended table fallback that reaches higher token-change levels (fast, word tokenizer).

The real-model run is tests/counterfactual/test_dose_real.py.
"""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest

from store.records import Item
from tests.counterfactual.test_paraphrase import Scripted, _target, sentence_of
from workbench.counterfactual import StudySpec
from workbench.counterfactual.attempts import (
    INITIAL_CHANGE_RATE,
    Task,
    choose_window,
    fit_requests,
    sentence_spans,
    split_question,
    windows,
)
from workbench.counterfactual.checks import check_rewrite
from workbench.counterfactual.paraphrase import finish, paraphrase_key_extra, run_tasks
from workbench.counterfactual.plan import unit_of
from workbench.perturb.paraphrase import PARAPHRASE_TABLE, TableParaphraser
from workbench.perturb.paraphrase_rules import EXTENDED_TABLE, EXTRA_RULES
from workbench.perturb.tokenize import WordTokenizer, token_change_fraction

TOK = WordTokenizer()
LONG = ("A 62-year-old man calls his primary care office because of pressure-like chest pain "
        "at rest that began this morning and has lasted 40 minutes. He has a history of "
        "hypertension and smoking. He reports sweating and nausea with the pain. He has no "
        "shortness of breath and can walk normally. His wife noticed that his symptoms "
        "have not improved. Should this patient be sent to the emergency department today?")
QUESTION = " Should this patient be sent to the emergency department today?"
NUMBER = re.compile(r"\d+")
NEGATION = re.compile(r"\b(?:no|not|never|without|denies|cannot)\b", re.IGNORECASE)
GENDERED = re.compile(r"\b(?:he|she|his|her|him|man|woman|wife|husband)\b", re.IGNORECASE)


def _fit_task(target: float, text: str = LONG) -> Task:
    item = Item("q1", "binary", text, {"Yes": "Yes", "No": "No"}, "Yes", id=1)
    unit = unit_of(item, _target(text))
    return Task(unit, "key", text, len(TOK.tokenize(text)), target,
                sentence_spans(text, TOK), random.Random(0), span="fit")


def _size(task: Task, run) -> int:
    return sum(task.spans[i][2] for i in run)


def test_windows_are_every_run_of_consecutive_sentences():
    assert windows(3) == [(0,), (0, 1), (0, 1, 2), (1,), (1, 2), (2,)]


@pytest.mark.parametrize("target", [0.05, 0.1, 0.2, 0.4, 0.6])
def test_the_run_fits_the_target_and_never_holds_the_question(target):
    task = _fit_task(target)
    run = choose_window(task)
    desired = target * task.tokens / INITIAL_CHANGE_RATE
    best = min(abs(_size(task, r) - desired) for r in windows(len(task.spans)))
    # within a tenth of the wanted size of the best run (ties are drawn, seeded)
    assert abs(_size(task, run) - desired) <= best + 0.1 * desired + 1e-9
    assert all(not LONG[task.spans[i][0]:task.spans[i][1]].endswith("?") for i in run)


def test_a_higher_target_takes_more_sentences():
    small, large = choose_window(_fit_task(0.05)), choose_window(_fit_task(0.4))
    assert len(small) == 1 and len(large) > 1
    assert _size(_fit_task(0.4), large) > _size(_fit_task(0.05), small)


def test_each_sentence_of_the_run_is_one_request_sized_to_its_share():
    task = _fit_task(0.3)
    requests, run = fit_requests(task, attempt=0)
    assert len(requests) == len(run) > 1
    asked = [sentence_of(r) for r in requests]
    assert asked == [LONG[task.spans[i][0]:task.spans[i][1]] for i in run]
    joint, run2 = fit_requests(_fit_task(0.3), attempt=0, joint=True)
    assert len(joint) == 1 and sentence_of(joint[0]) == LONG[
        task.spans[run2[0]][0]:task.spans[run2[-1]][1]]


def past(sentence: str) -> str:
    """A meaning-keeping rewrite that changes a few words of any sentence."""
    return "Notably, " + sentence[0].lower() + sentence[1:].replace(" and ", " as well as ")


def test_rewrites_that_pass_are_spliced_in_and_the_whole_prompt_is_measured():
    task = _fit_task(0.6)
    calls = []

    def script(requests):
        calls.append(requests)
        out = []
        for i, request in enumerate(requests):
            sentence = sentence_of(request)
            # the sentence with the wife: a gendered term changed → kept as it was
            out.append((f"k{i}", sentence.replace("wife", "husband") if "wife" in sentence
                        else past(sentence)))
        return out

    assert run_tasks([task], script, TOK, tolerance=0.01, max_attempts=2)
    first = task.attempts[0]
    assert len(first["checks"]) == len(first["sentences"]) == len(calls[0])
    assert "passed" in first["checks"]
    assert first["fraction"] == pytest.approx(token_change_fraction(LONG, first["text"], TOK),
                                              abs=1e-6)
    assert first["text"].endswith(QUESTION) and "wife" in first["text"]
    result = finish(task, TOK, 0.01, "llm:fake")
    assert result.fired and result.details["span"] == "fit"
    assert result.token_change_fraction == pytest.approx(
        token_change_fraction(LONG, result.text, TOK), abs=1e-6)


def test_every_extra_rule_keeps_numbers_negations_and_gender():
    sources = [s for s, _ in PARAPHRASE_TABLE]
    assert EXTENDED_TABLE[:len(PARAPHRASE_TABLE)] == PARAPHRASE_TABLE
    assert len(EXTENDED_TABLE) > 2 * len(PARAPHRASE_TABLE)
    for source, target in EXTRA_RULES:
        sentence = f"The patient {source} it."
        rewrite = f"The patient {target} it."
        problem = check_rewrite(sentence, rewrite, sentence)
        assert problem in (None, "length changed more than twofold"), (source, problem)
        assert source not in sources or dict(EXTENDED_TABLE)[source] != target


def test_the_extended_table_reaches_high_levels_keeping_the_facts():
    body, question = split_question(LONG)
    assert question == QUESTION
    result = TableParaphraser(EXTENDED_TABLE).paraphrase(
        body, target_fraction=0.4, tolerance=0.03, tokenizer=TOK, rng=random.Random(0))
    assert result.text is not None and result.fraction >= 0.35
    assert result.fraction == pytest.approx(token_change_fraction(body, result.text, TOK))
    for pattern in (NUMBER, GENDERED):
        assert Counter(m.lower() for m in pattern.findall(body)) == Counter(
            m.lower() for m in pattern.findall(result.text))
    assert len(NEGATION.findall(body)) == len(NEGATION.findall(result.text))
    assert check_rewrite(body, result.text, LONG) is None
    # the original table alone reaches far less on the same vignette
    plain = TableParaphraser().paraphrase(body, target_fraction=0.4, tolerance=0.03,
                                          tokenizer=TOK, rng=random.Random(0))
    assert plain.fraction < 0.35


def test_the_table_stops_at_the_first_set_within_tolerance():
    body, _ = split_question(LONG)
    result = TableParaphraser(EXTENDED_TABLE).paraphrase(
        body, target_fraction=0.1, tolerance=0.02, tokenizer=TOK, rng=random.Random(3))
    assert result.within_tolerance and result.reason is None
    assert abs(result.fraction - 0.1) <= 0.02
    assert len(result.edits) < len(EXTENDED_TABLE)


def test_the_table_says_how_far_it_got():
    body, _ = split_question(LONG)
    result = TableParaphraser(EXTENDED_TABLE).paraphrase(
        body, target_fraction=0.9, tolerance=0.03, tokenizer=TOK, rng=random.Random(0))
    assert not result.within_tolerance
    assert result.reason.startswith(f"reached {result.fraction:.3f} of 0.900 ± 0.030")


def test_a_fit_fallback_records_the_shortfall_and_keeps_the_question():
    task = _fit_task(0.9)  # beyond any rewording: every LLM attempt rejected
    assert run_tasks([task], Scripted([lambda s: s] * 2), TOK, tolerance=0.03, max_attempts=2)
    result = finish(task, TOK, 0.03, "llm:fake")
    assert result.fired and result.details["source"] == "fallback"
    assert not result.details["within_tolerance"]
    assert result.details["fallback"]["reason"].startswith("reached")
    assert result.text.endswith(QUESTION)
    assert result.token_change_fraction == pytest.approx(
        token_change_fraction(LONG, result.text, TOK), abs=1e-6)
    sentence_task = _fit_task(0.9)
    sentence_task.span = "sentence"  # the main design's fallback keeps the original table
    assert run_tasks([sentence_task], Scripted([lambda s: s] * 2), TOK, 0.03, 2)
    plain = finish(sentence_task, TOK, 0.03, "llm:fake")
    assert plain.token_change_fraction < result.token_change_fraction


def test_the_main_design_keeps_its_config_and_keys():
    main = StudySpec(dataset="triage")
    assert main.span == "sentence" and "paraphrase_span" not in main.config()
    dose = StudySpec(dataset="triage", targets=(), baselines=("paraphrase_adjusted",),
                     levels=(0.05, 0.4))
    assert dose.span == "fit" and dose.config()["paraphrase_span"] == "fit"
    old_dose = StudySpec(dataset="triage", targets=(), baselines=("paraphrase_adjusted",),
                         levels=(0.05, 0.4), paraphrase_span="sentence")
    assert "paraphrase_span" not in old_dose.config()  # the config (and name) of before
    assert old_dose.study_name != dose.study_name
    unit = unit_of(Item("q1", "binary", LONG, None, "Yes", id=1), _target(LONG))

    class Model:
        sha256 = "abc"

    extra = paraphrase_key_extra(unit, Model(), "llm", main.config())
    assert extra == ["paraphrase", "k7", "abc", "llm", 0.03, 4, "paw_paraphrase@1"]
    assert paraphrase_key_extra(unit, Model(), "llm", old_dose.config()) == extra
    fit = paraphrase_key_extra(unit, Model(), "llm", dose.config())
    assert fit[:len(extra)] == extra and fit[len(extra):] == ["span:fit:each"]
