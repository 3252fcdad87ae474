"""Tokenizer, token-change fraction, step and sentence splitting, final-answer stripping."""

from __future__ import annotations

from functools import lru_cache

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.perturb import split_steps, strip_final_answer, token_change_fraction
from workbench.perturb.segments import split_chain, split_sentences
from workbench.perturb.tokenize import CallableTokenizer, WordTokenizer, token_edit_distance


def reference_distance(a: tuple, b: tuple) -> int:
    """Textbook recursive Levenshtein (no prefix/suffix trimming), for cross-checking."""

    @lru_cache(maxsize=None)
    def d(i: int, j: int) -> int:
        if i == 0 or j == 0:
            return i + j
        return min(d(i - 1, j) + 1, d(i, j - 1) + 1, d(i - 1, j - 1) + (a[i - 1] != b[j - 1]))

    return d(len(a), len(b))


def test_edit_distance_hand_values():
    assert token_edit_distance(list("kitten"), list("sitting")) == 3  # k->s, e->i, +g
    assert token_edit_distance(["a", "b", "c"], ["a", "x", "c"]) == 1
    assert token_edit_distance(["a", "b"], []) == 2


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from("abc"), max_size=8), st.lists(st.sampled_from("abc"), max_size=8))
def test_edit_distance_matches_the_textbook_recursion(a, b):
    assert token_edit_distance(a, b) == reference_distance(tuple(a), tuple(b))


def test_token_change_fraction_hand_values():
    assert token_change_fraction("a b c d", "a b x d") == 1 / 4
    # 2 inserted tokens; the longer sequence has 4 tokens -> 2/4
    assert token_change_fraction("a b", "x y a b") == 0.5
    assert token_change_fraction("", "") == 0.0
    assert WordTokenizer().tokenize("Hi, 3.5 mg.") == ["Hi", ",", "3", ".", "5", "mg", "."]
    chars = CallableTokenizer(list)
    assert token_change_fraction("ab", "ac", chars) == 0.5


def test_split_steps_markers_and_paragraphs():
    assert split_steps("Step 1: a\nStep 2: b\n\nmore b\nStep 3: c") == [
        "Step 1: a", "Step 2: b\n\nmore b", "Step 3: c"]
    assert split_steps("Intro.\nstep 1: a. STEP 2: b.") == ["step 1: a.", "STEP 2: b."]
    assert split_steps("p1\n\n \n p2\n\np3") == ["p1", "p2", "p3"]
    assert split_steps("one paragraph\nwith two lines") == ["one paragraph\nwith two lines"]
    assert split_steps("  \n ") == []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["Step 1:", "Step 2:", "a", " ", "\n", "\n\n", "."]),
                max_size=30).map("".join))
def test_split_chain_rejoins_to_the_original(chain):
    split = split_chain(chain)
    assert split.join(split.steps) == chain
    assert all(step == step.strip() and step for step in split.steps)


def test_strip_final_answer():
    assert strip_final_answer("Step 1: x\nStep 2: y\nAnswer: B\n") == "Step 1: x\nStep 2: y"
    assert strip_final_answer("x\n\n**Final answer:** (C)") == "x"
    assert strip_final_answer("x\nTherefore, the answer is D.") == "x"
    assert strip_final_answer("so it is the kidney. Answer: C.") == "so it is the kidney."
    assert strip_final_answer("Step 1: the answer depends on x\nStep 2: y") == (
        "Step 1: the answer depends on x\nStep 2: y")


def test_split_sentences():
    sentences, seps = split_sentences("A 45-year-old man. Temp 38.5 C. Which is it?")
    assert sentences == ["A 45-year-old man.", "Temp 38.5 C.", "Which is it?"]
    assert seps == [" ", " "]
