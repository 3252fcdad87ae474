"""Answer parsing, garbage detection, label tokens and the option distribution (no model)."""

from __future__ import annotations

import math

import pytest

from workbench.models.answers import (
    label_token_candidates,
    logsumexp,
    option_distribution,
    parse_answer,
)

LETTERS = ("A", "B", "C", "D")


@pytest.mark.parametrize("output, expected", [
    ("Step 1: ST elevation inferior.\nAnswer: A", "A"),
    ("The answer is (C).", "C"),
    ("**Answer: D**", "D"),
    ("Answer: B. Left circumflex", "B"),
    # the last cue wins (the tail of the response)
    ("Answer: A would be wrong because ...\nAnswer: C", "C"),
])
def test_parse_finds_last_answer_line(output: str, expected: str) -> None:
    parsed = parse_answer(output, LETTERS)
    assert (parsed.answer, parsed.status) == (expected, "ok")
    assert output[parsed.start:parsed.end] == expected


def test_parse_rejects_article_and_unknown_letter() -> None:
    # 'A patient' is the article, and E is not one of the labels.
    assert parse_answer("Answer: A patient with chest pain", LETTERS).status == "no_answer"
    assert parse_answer("Answer: E", LETTERS).answer is None


def test_parse_statuses_empty_garbage_no_answer() -> None:
    assert parse_answer("", LETTERS).status == "empty"
    assert parse_answer("  \n ", LETTERS).status == "empty"
    assert parse_answer("12 34 ,,, ###", LETTERS).status == "garbage"
    assert parse_answer("\ufffd\ufffd\ufffdab", LETTERS).status == "garbage"
    assert parse_answer("I think it is the heart.", LETTERS).status == "no_answer"


def test_parse_direct_leading_label_only_when_asked() -> None:
    assert parse_answer(" C. Panic attack", LETTERS, leading=True).answer == "C"
    assert parse_answer(" C. Panic attack", LETTERS).status == "no_answer"
    assert parse_answer(" A patient", LETTERS, leading=True).status == "no_answer"


def test_parse_word_labels_case_insensitive_canonical() -> None:
    parsed = parse_answer("Reasoning...\nAnswer: yes", ("Yes", "No", "Maybe"))
    assert (parsed.answer, parsed.status) == ("Yes", "ok")
    assert parse_answer(" No", ("Yes", "No"), leading=True).answer == "No"


def test_candidates_take_both_spellings_and_drop_shared_tokens() -> None:
    # Character tokenizer: " A" -> [32, 65], "A" -> [65]; the space token 32 starts every
    # label, so it is dropped, leaving each letter's own token.
    def tokenize(text: str) -> list[int]:
        return [ord(c) for c in text]

    assert label_token_candidates(("A", "B"), tokenize) == {"A": (65,), "B": (66,)}
    # Words also get lowercase forms: "Yes" -> 'Y', 'y'; "No" -> 'N', 'n'.
    assert label_token_candidates(("Yes", "No"), tokenize) == {
        "Yes": (ord("Y"), ord("y")), "No": (ord("N"), ord("n"))}


def test_candidates_fail_when_labels_cannot_be_told_apart() -> None:
    with pytest.raises(ValueError, match="shares its first token"):
        label_token_candidates(("Ab", "Ac"), lambda text: [ord(text.strip()[0])])


def test_distribution_combines_spellings_by_logsumexp() -> None:
    # A: tokens 1 (logit 2) and 2 (logit 2) -> log(e^2 + e^2) = 2 + ln 2
    # B: token 3 (logit 2 + ln 2)            -> equal to A, so P(A) = P(B) = 1/2
    candidates = {"A": (1, 2), "B": (3,)}
    probs, combined = option_distribution(candidates, {1: 2.0, 2: 2.0, 3: 2.0 + math.log(2)})
    assert combined["A"] == pytest.approx(2 + math.log(2))
    assert probs == pytest.approx({"A": 0.5, "B": 0.5})
    # softmax of (0, ln 3) = (1/4, 3/4)
    probs, _ = option_distribution({"A": (1,), "B": (2,)}, {1: 0.0, 2: math.log(3)})
    assert probs == pytest.approx({"A": 0.25, "B": 0.75})
    assert sum(probs.values()) == pytest.approx(1.0)


def test_logsumexp_handles_large_and_empty() -> None:
    assert logsumexp([1000.0, 1000.0]) == pytest.approx(1000 + math.log(2))
    assert logsumexp([]) == -math.inf
