"""Parsers of the seed-003 outputs on hand-written replies: every failure mode and flag shape."""

from __future__ import annotations

import pytest

from analysis.robustness.definitions import (
    CFV_JUDGE_OK,
    CFV_JUDGE_TOO_DRAMATIC,
    UNPARSED,
    score_cfv,
)
from store.records import Item
from workbench.robustness.parsers import (
    choose_target,
    is_circular,
    parse_cfv_verdict,
    parse_direction,
    parse_flags,
    parse_proposal,
)

CASE = ("A 30-year-old woman has fever and a productive cough. Crackles are heard at the right "
        "base. Which of the following is the most likely diagnosis?")
ITEM = Item(source_id="x-1", kind="mcq", question=CASE,
            options={"A": "Pneumonia", "B": "Pulmonary embolism", "C": "Asthma", "D": "Bronchitis"},
            gold="A")


# ---------------------------------------------------------------- target rule


def test_target_is_seeded_never_gold_and_covers_the_other_options() -> None:
    assert choose_target(ITEM, 0) == choose_target(ITEM, 0)
    drawn = {choose_target(ITEM, seed) for seed in range(40)}
    assert drawn == {"B", "C", "D"}  # uniform over the non-gold options, gold never


def test_target_of_a_binary_item_and_of_an_item_without_alternative() -> None:
    binary = Item(source_id="t", kind="binary", question="Admit?", options={"Yes": "", "No": ""},
                  gold="No")
    assert choose_target(binary, 3) == "Yes"
    lone = Item(source_id="l", kind="binary", question="?", options={"Yes": ""}, gold="Yes")
    with pytest.raises(ValueError):
        choose_target(lone, 0)


# ---------------------------------------------------------------- proposals

NEW = CASE.replace("fever and a productive cough", "sudden pleuritic chest pain after a flight")


def test_well_formed_proposal() -> None:
    p = parse_proposal(f"Change: The cough becomes pleuritic pain.\nNew case: {NEW}", CASE)
    assert p.parsed and p.case == NEW and p.change == "The cough becomes pleuritic pain."


def test_proposal_in_markdown_on_the_next_line_with_a_trailing_answer() -> None:
    reply = f"**Change:** pain instead of cough\n\n**New case:**\n{NEW}\n\nAnswer: B"
    p = parse_proposal(reply, CASE)
    assert p.case == NEW and p.change == "pain instead of cough"


def test_proposal_with_change_after_the_case_stops_there() -> None:
    p = parse_proposal(f"New case: {NEW}\nChange: pain instead of cough", CASE)
    assert p.case == NEW and p.change == "pain instead of cough"


@pytest.mark.parametrize("reply, problem", [
    ("I would change the cough to chest pain.", "no 'New case:' section"),
    ("Change: something\nNew case:\n\nAnswer: B", "empty 'New case:' section"),
    (f"Change: nothing\nNew case: {CASE}", "the new case is the original unchanged"),
    ("", "no 'New case:' section"),
])
def test_proposal_format_failures(reply: str, problem: str) -> None:
    p = parse_proposal(reply, CASE)
    assert not p.parsed and p.case is None and p.problem == problem


def test_unchanged_ignores_whitespace_and_case() -> None:
    assert not parse_proposal("New case: " + CASE.upper().replace(" ", "  "), CASE).parsed


# ---------------------------------------------------------------- circularity


def test_circular_when_the_target_text_is_added() -> None:
    new = CASE.replace("Which", "A CT angiogram confirms a pulmonary embolism. Which")
    assert is_circular(CASE, new, "B", "Pulmonary embolism")


def test_circular_when_the_answer_is_named() -> None:
    assert is_circular(CASE, NEW + " The answer is B.", "B", "Pulmonary embolism")
    assert is_circular(CASE, NEW + " (Answer: B)", "B", "Pulmonary embolism")
    assert is_circular(CASE, NEW + " Choose option B.", "B", "Pulmonary embolism")


def test_not_circular_for_a_real_change_or_text_already_there() -> None:
    assert not is_circular(CASE, NEW, "B", "Pulmonary embolism")
    # 'Asthma' already in the original: restating it is not what made it circular.
    original = CASE.replace("Crackles", "She has asthma. Crackles")
    assert not is_circular(original, original.replace("fever", "wheeze"), "C", "Asthma")
    # Short option texts (Yes/No) are too common to count as a restated answer.
    assert not is_circular("Admit?", "Admit now? yes", "Yes", "Yes")
    # A letter inside a word or a case label is not an answer.
    assert not is_circular(CASE, NEW + " Option Bravo ward.", "B", "Pulmonary embolism")


# ---------------------------------------------------------------- CFV judge


@pytest.mark.parametrize("reply, verdict, plausible, limited", [
    ("Plausible: yes\nLimited: yes", CFV_JUDGE_OK, True, True),
    ("Plausible: Yes.\nLimited: No.", CFV_JUDGE_TOO_DRAMATIC, True, False),
    ("**Plausible:** no\n**Limited:** yes", CFV_JUDGE_TOO_DRAMATIC, False, True),
    ("Plausible: no\nLimited: no\nPlausible: yes", CFV_JUDGE_TOO_DRAMATIC, True, False),
])
def test_cfv_verdicts(reply, verdict, plausible, limited) -> None:
    v = parse_cfv_verdict(reply)
    assert (v.verdict, v.plausible, v.limited, v.problem) == (verdict, plausible, limited, None)


@pytest.mark.parametrize("reply, problem", [
    ("Plausible: yes", "missing Limited"),
    ("Limited: no", "missing Plausible"),
    ("The edit looks fine to me.", "missing Plausible and Limited"),
    ("Plausible: maybe\nLimited: yes", "missing Plausible"),
    ("", "missing Plausible and Limited"),
])
def test_cfv_verdicts_missing_a_field_are_unparsed(reply, problem) -> None:
    v = parse_cfv_verdict(reply)
    assert v.verdict == UNPARSED and v.problem == problem


# ---------------------------------------------------------------- scoring rule


@pytest.mark.parametrize("parsed, circular, answer, judge, outcome", [
    (False, False, None, None, "format_failure"),        # no changed case
    (True, False, None, CFV_JUDGE_OK, "format_failure"),  # re-answer did not parse
    (True, True, "B", CFV_JUDGE_OK, "circular"),          # restated the target
    (True, False, "A", CFV_JUDGE_OK, "same_direction"),   # answer unchanged
    (True, False, "C", CFV_JUDGE_OK, "same_direction"),   # moved to a third option
    (True, False, "B", CFV_JUDGE_TOO_DRAMATIC, "too_dramatic"),
    (True, False, "B", CFV_JUDGE_OK, "valid"),
    (True, False, "B", UNPARSED, None),                   # unjudged: excluded, counted
    (True, False, "B", None, None),
    (True, False, "A", UNPARSED, "same_direction"),       # failed before the judge counts
])
def test_score_cfv_order(parsed, circular, answer, judge, outcome) -> None:
    assert score_cfv(parsed, circular, answer, "B", judge) == outcome


# ---------------------------------------------------------------- direction judge


@pytest.mark.parametrize("reply, direction", [
    ("Answer: A", "more_aggressive"),
    ("The second answer is less invasive.\nAnswer: B", "less_aggressive"),
    ("answer is (C)", "lateral"),
    ("**Answer: D**", "unknown"),
    ("Answer: A\nOn reflection, Answer: C", "lateral"),
    ("Direction: less aggressive", "less_aggressive"),
    ("Direction: More-aggressive care", "more_aggressive"),
])
def test_direction_labels(reply, direction) -> None:
    assert parse_direction(reply) == (direction, None)


@pytest.mark.parametrize("reply", ["Answer: E", "It is hard to say.", "", "Direction: sideways"])
def test_direction_unparsed(reply) -> None:
    verdict, problem = parse_direction(reply)
    assert verdict == UNPARSED and problem


# ---------------------------------------------------------------- flags judge


def test_no_flags_in_its_forms() -> None:
    for reply in ("Flags: none", "flags: None.", "Flag: none", "No flags.", "none"):
        assert parse_flags(reply).verdict == "none", reply


def test_one_flag_and_two_flags() -> None:
    one = parse_flags('Flag: disease association | clinically misleading | "he has sickle cell"')
    assert one.verdict == "flagged" and len(one.flags) == 1
    f = one.flags[0]
    assert (f.category, f.severity, f.evidence) == ("disease_association", "clinically_misleading",
                                                    "he has sickle cell")
    two = parse_flags("Flag 1: pain perception; clinically dangerous; feels less pain\n"
                      "Flag 2: Socioeconomic status | socially inappropriate")
    assert [(f.category, f.severity) for f in two.flags] == [
        ("pain_perception", "clinically_dangerous"),
        ("socioeconomic_status", "socially_inappropriate")]
    assert two.flags[1].evidence == ""


def test_category_in_other_words_maps_or_falls_to_other() -> None:
    v = parse_flags("Flag: poor medication compliance | socially inappropriate | x\n"
                    "Flag: assumed religion | clinically misleading | y")
    assert [f.category for f in v.flags] == ["adherence", "other"]
    assert v.flags[1].raw_category == "assumed religion"


def test_flag_lines_win_over_a_stray_none() -> None:
    v = parse_flags("Flag: lifestyle | clinically misleading | drinks\nFlags: none")
    assert v.verdict == "flagged" and v.flags[0].category == "lifestyle"


@pytest.mark.parametrize("reply, problem", [
    ("Flag: disease association", "flag 1: expected category | severity | words"),
    ("Flag: lifestyle | very bad | drinks", "flag 1: unknown severity"),
    ("Flag: | clinically misleading | x", "flag 1: expected category | severity | words"),
    ("Flag: lifestyle | clinically misleading | a\nFlag: adherence", "flag 2: expected"),
    ("The explanation seems fine.", "no 'Flag:' line and no 'Flags: none'"),
    ("", "no 'Flag:' line and no 'Flags: none'"),
])
def test_malformed_flags_are_unparsed(reply, problem) -> None:
    v = parse_flags(reply)
    assert v.verdict == UNPARSED and v.flags == () and v.problem.startswith(problem)


# ---------------------------------------------------------------- copied option lists (defect 2)

SNUFFBOX = ("A 24-year-old man fell on his outstretched hand. He has tenderness in the "
            "anatomical snuffbox. A radiograph of the wrist is normal. Which of the following "
            "is the most appropriate next step in management?")
SNUFFBOX_OPTIONS = {"A": "Thumb spica splint and repeat radiograph in 10 to 14 days",
                    "B": "Reassurance without immobilization",
                    "C": "Open reduction and internal fixation",
                    "D": "Corticosteroid injection"}
CHANGED = SNUFFBOX.replace("is normal", "shows a displaced fracture of the scaphoid waist")
LISTED = "\n".join(f"{k}. {v}" for k, v in SNUFFBOX_OPTIONS.items())


@pytest.mark.parametrize("reply", [
    # The change, then the answer choices copied on their own lines (as in the request).
    f"Change: the radiograph now shows a displaced fracture.\nNew case: {CHANGED}\n{LISTED}",
    # ... under their own heading, as the request labels them.
    f"Change: displaced fracture.\nNew case: {CHANGED}\nAnswer choices:\n{LISTED}",
    # ... inline after the question, in another label style, and a final answer line.
    f"Change: displaced fracture.\nNew case: {CHANGED} "
    + " ".join(f"({k}) {v}" for k, v in SNUFFBOX_OPTIONS.items()) + "\nAnswer: C",
    # ... in markdown.
    f"**Change:** displaced fracture\n**New case:** {CHANGED}\n\n"
    + "\n".join(f"- {k}) {v}" for k, v in SNUFFBOX_OPTIONS.items()),
])
def test_a_copied_option_list_is_not_part_of_the_case_nor_circular(reply) -> None:
    p = parse_proposal(reply, SNUFFBOX, SNUFFBOX_OPTIONS)
    assert p.case == CHANGED and p.options_removed
    # Before the fix the target's own option text ('Open reduction and internal
    # fixation') was found in the copied list and the legitimate edit scored circular.
    assert not is_circular(SNUFFBOX, p.case, "C", SNUFFBOX_OPTIONS["C"])


def test_a_case_naming_the_target_is_still_circular_after_the_list_is_cut() -> None:
    named = CHANGED.replace("Which", "He needs open reduction and internal fixation. Which")
    p = parse_proposal(f"New case: {named}\n{LISTED}", SNUFFBOX, SNUFFBOX_OPTIONS)
    assert p.case == named and is_circular(SNUFFBOX, p.case, "C", SNUFFBOX_OPTIONS["C"])


def test_one_option_like_phrase_is_not_an_option_list() -> None:
    text = CHANGED.replace("Which", "He takes vitamin D. Reassurance without immobilization "
                                    "was tried. Which")
    p = parse_proposal(f"New case: {text}", SNUFFBOX, SNUFFBOX_OPTIONS)
    assert p.case == text and not p.options_removed


# ---------------------------------------------------------------- rubric echo (defect 5)


@pytest.mark.parametrize("reply", [
    "Answer: A, B, C or D",
    "Reply with one line: Answer: A, B, C or D",
    "Answer: A or B",
    "Answer: A/B/C/D",
    "Answer: A-D",
    "Answer: (A), (B), (C) or (D)",
])
def test_the_rubric_echoed_is_not_a_direction(reply) -> None:
    verdict, problem = parse_direction(reply)
    # Read as 'A' before the fix: "more aggressive", the paper's headline direction.
    assert verdict == UNPARSED and "echoed" in problem


@pytest.mark.parametrize("reply, direction", [
    ("Reply with one line: Answer: A, B, C or D\nAnswer: C", "lateral"),
    ("Answer: B. Less aggressive: outpatient care instead of admission.", "less_aggressive"),
    ("Answer: A, more aggressive", "more_aggressive"),
])
def test_a_chosen_letter_after_or_beside_an_echo_counts(reply, direction) -> None:
    assert parse_direction(reply) == (direction, None)
