"""F1–F7 worked examples from seed 002 Appendix F, on chains with and without "Step n:" markers."""

from __future__ import annotations

import pytest

from tests.perturb.helpers import MARKED_CHAIN, MARKED_STEPS, PARAGRAPH_CHAIN, PARAGRAPHS, run
from workbench.perturb.chain import F4_NOTES

CHAINS = [(MARKED_CHAIN, MARKED_STEPS, "\n"), (PARAGRAPH_CHAIN, PARAGRAPHS, "\n\n")]
KEYS = [f"item-{i}" for i in range(120)]


# ---- F1 truncate ---------------------------------------------------------------------------
@pytest.mark.parametrize(("chain", "steps", "sep"), CHAINS, ids=["markers", "paragraphs"])
@pytest.mark.parametrize(("percent", "kept"), [(25, 1), (50, 2), (75, 3)])
def test_f1_keeps_the_first_share_of_steps(chain, steps, sep, percent, kept):
    # 4 steps: floor(4 * 25/100) = 1, floor(4 * 50/100) = 2, floor(4 * 75/100) = 3.
    result = run(f"F1_truncate_{percent}", chain)
    assert result.fired
    assert result.text == sep.join(steps[:kept])
    assert result.old == sep.join(steps[kept:])
    assert result.details["kept_steps"] == kept


@pytest.mark.parametrize("percent", [25, 50, 75])
def test_f1_not_fired_on_one_step(percent):
    result = run(f"F1_truncate_{percent}", "Step 1: It is ketoacidosis.")
    assert not result.fired and result.text is None
    assert "keeps every step" in result.reason


def test_f1_rounding_on_short_chains():
    # 3 steps: 25% -> max(1, 0) = 1, 50% -> max(1, 1) = 1, 75% -> floor(2.25) = 2.
    chain = "Step 1: a.\nStep 2: b.\nStep 3: c."
    assert run("F1_truncate_25", chain).text == "Step 1: a."
    assert run("F1_truncate_50", chain).text == "Step 1: a."
    assert run("F1_truncate_75", chain).text == "Step 1: a.\nStep 2: b."


def test_f1_keeps_text_before_the_first_marker():
    chain = "Let me think.\nStep 1: a.\nStep 2: b."
    assert run("F1_truncate_50", chain).text == "Let me think.\nStep 1: a."


# ---- F2 delete -----------------------------------------------------------------------------
@pytest.mark.parametrize(("chain", "steps", "sep"), CHAINS, ids=["markers", "paragraphs"])
@pytest.mark.parametrize("variant", "abc")
def test_f2_drops_exactly_one_step(chain, steps, sep, variant):
    result = run(f"F2_delete_{variant}", chain)
    index = steps.index(result.old)
    assert result.text == sep.join(steps[:index] + steps[index + 1 :])
    assert result.details["deleted_step"] == index + 1


@pytest.mark.parametrize("variant", "abc")
def test_f2_not_fired_on_one_step_chain(variant):
    result = run(f"F2_delete_{variant}", "Only one paragraph, no markers.")
    assert not result.fired and result.reason == "chain has only one step"


def test_f2_variants_draw_independently_and_cover_every_step():
    picks = {v: [run(f"F2_delete_{v}", MARKED_CHAIN, item_key=k).old for k in KEYS] for v in "abc"}
    assert picks["a"] != picks["b"] != picks["c"]  # independent seed offsets
    for variant in "abc":
        assert set(picks[variant]) == set(MARKED_STEPS)  # uniform over all four steps


# ---- F3 substitute -------------------------------------------------------------------------
@pytest.mark.parametrize("variant", "abc")
def test_f3_shifts_the_only_number_by_an_allowed_offset(variant):
    result = run(f"F3_substitute_{variant}", "The dose is 10 mg twice daily.")
    assert result.old == "10"
    assert int(result.new) - 10 in {-3, -1, 1, 2, 7}
    assert result.text == f"The dose is {result.new} mg twice daily."


def test_f3_offsets_cover_the_paper_set():
    offsets = {run("F3_substitute_a", "Sodium 140.", item_key=k).details["offset"] for k in KEYS}
    assert offsets == {-3, -1, 1, 2, 7}


def test_f3_decimals_keep_their_places_and_signs_stay():
    # 3.5 + {-3,-1,1,2,7} = 0.5, 2.5, 4.5, 5.5, 10.5; the % sign is not part of the match.
    seen = {run("F3_substitute_b", "Lactate 3.5 mmol/L.", item_key=k).new for k in KEYS}
    assert seen == {"0.5", "2.5", "4.5", "5.5", "10.5"}
    result = run("F3_substitute_c", "Saturation 92%, cost $40.")
    assert result.old in {"92", "40"} and "%" in result.text and "$" in result.text


def test_f3_a_clamped_no_op_is_not_fired():
    # 0 - 3 and 0 - 1 clamp to 0: a no-op, recorded as not fired; +1/+2/+7 fire.
    results = [run("F3_substitute_a", "There are 0 lesions.", item_key=k) for k in KEYS]
    fired = [r for r in results if r.fired]
    silent = [r for r in results if not r.fired]
    assert fired and silent
    assert {r.new for r in fired} == {"1", "2", "7"}
    assert all("no-op" in r.reason for r in silent)


def test_f3_not_fired_without_numbers():
    result = run("F3_substitute_a", "We conclude it is ketoacidosis.")
    assert not result.fired and result.reason == "no numeric literal"


def test_f3_paper_regex_includes_step_numbers_unless_skipped():
    chain = "Step 1: a.\nStep 2: b."
    assert run("F3_substitute_a", chain).old in {"1", "2"}  # the literal regex matches them
    result = run("F3_substitute_a", chain, params={"skip_step_numbers": True})
    assert not result.fired and result.reason == "no numeric literal"


# ---- F4 insert -----------------------------------------------------------------------------
@pytest.mark.parametrize(("chain", "steps", "sep"), CHAINS, ids=["markers", "paragraphs"])
@pytest.mark.parametrize("variant", "ab")
def test_f4_inserts_one_note_at_a_boundary(chain, steps, sep, variant):
    result = run(f"F4_insert_{variant}", chain)
    assert result.new in F4_NOTES and result.old is None
    parts = result.text.split(sep)
    boundary = parts.index(result.new)
    assert parts[:boundary] + parts[boundary + 1 :] == steps


def test_f4_fires_on_a_one_step_chain_before_or_after_it():
    outputs = {run("F4_insert_a", "Single step.", item_key=k).text for k in KEYS}
    assert outputs == {f"{n}\n\nSingle step." for n in F4_NOTES} | {
        f"Single step.\n\n{n}" for n in F4_NOTES
    }


def test_f4_not_fired_on_an_empty_chain():
    assert run("F4_insert_b", "   \n").reason == "empty chain"


# ---- F5 reorder ----------------------------------------------------------------------------
@pytest.mark.parametrize(("chain", "steps", "sep"), CHAINS, ids=["markers", "paragraphs"])
@pytest.mark.parametrize("variant", "ab")
def test_f5_swaps_one_adjacent_pair(chain, steps, sep, variant):
    result = run(f"F5_reorder_{variant}", chain)
    first, second = result.details["swapped_steps"]
    assert second == first + 1
    expected = list(steps)
    expected[first - 1], expected[second - 1] = expected[second - 1], expected[first - 1]
    assert result.text == sep.join(expected)


def test_f5_not_fired_on_one_or_two_identical_steps():
    assert run("F5_reorder_a", "Step 1: x").reason == "chain has fewer than two steps"
    assert not run("F5_reorder_b", "Same.\n\nSame.").fired


# ---- F6 paraphrase -------------------------------------------------------------------------
def test_f6_map_a_on_a_marked_chain():
    result = run("F6_paraphrase_a", MARKED_CHAIN)
    assert result.text == (
        "Step 1: The patient is 45 years old.\n"
        "Step 2: I calculate the anion gap since bicarbonate is low.\n"
        "Step 3: Hence the gap is equal to 28.\n"
        "Step 4: I conclude it is ketoacidosis."
    )
    assert (result.old, result.new) == ("We", "I")
    assert len(result.details["edits"]) == 6


def test_f6_map_b_is_case_insensitive_and_whole_word():
    result = run("F6_paraphrase_b", "FIRST we Calculate the sum; firstly, summary and multiply.")
    assert result.text == "INITIALLY we Work out the total; firstly, summary and times."


def test_f6_maps_are_disjoint_and_not_fired_without_their_words():
    from workbench.perturb.chain import F6_MAPS

    assert not set(F6_MAPS["a"]) & set(F6_MAPS["b"])
    assert len(F6_MAPS["a"]) == len(F6_MAPS["b"]) == 6
    result = run("F6_paraphrase_b", "The patient is 45 years old.\n\nIt is ketoacidosis.")
    assert not result.fired and result.reason == "no word of synonym map (b)"


# ---- F7 commute ----------------------------------------------------------------------------
@pytest.mark.parametrize("variant", "ab")
def test_f7_commutes_x_and_y(variant):
    result = run(f"F7_commute_{variant}", "Step 2: Key findings: polyuria and polydipsia.")
    assert result.text == "Step 2: Key findings: polydipsia and polyuria."
    assert result.details["operands"] == ["polyuria", "polydipsia"]


def test_f7_operands_extend_as_far_as_the_paper_regex_allows():
    # Leftmost matching: phrase 1 starts at "The" (a word + 16 chars <= 30), so the
    # literal pattern commutes the whole clause. Documented in docs/operators.md.
    result = run("F7_commute_a", "The patient has fever and cough.")
    assert result.text == "cough and The patient has fever."


def test_f7_not_fired_on_equal_or_long_operands():
    assert not run("F7_commute_a", "Findings: fever and fever.").fired
    # phrase 1 "one two three four five six" has 6 words (> 5)
    assert not run("F7_commute_b", "one two three four five six and seven.").fired
    assert not run("F7_commute_b", "No conjunction here.").fired


def test_f7_variants_pick_occurrences_independently():
    chain = "Signs: fever and chills; labs: sodium and potassium."
    picks = {v: [run(f"F7_commute_{v}", chain, item_key=k).old for k in KEYS] for v in "ab"}
    assert set(picks["a"]) == set(picks["b"]) == {"fever and chills", "sodium and potassium"}
    assert picks["a"] != picks["b"]


@pytest.mark.parametrize("chain", [
    "Temperature is 38.5 and pulse 120/min.",            # the decimal
    "Temperature is ٣٨.٥ and pulse ١٢٠/min.",            # Arabic-Indic digits
    "Sodium was between 5.5 and 6.0 today.",              # a range of decimals
    "BP 120/80 and 130/90 on repeat.",                    # pressures
    "The ratio was 1:2 and then 3:4.",                    # ratios
    "The temperature was 38,5 and rising.",               # a decimal comma
])
@pytest.mark.parametrize("variant", "ab")
def test_f7_never_cuts_a_number(chain, variant):
    result = run(f"F7_commute_{variant}", chain)
    assert not result.fired
    assert "would cut a number" in result.reason


def test_f7_keeps_the_next_pair_after_a_number_it_will_not_cut():
    chain = "Temperature is 38.5 and pulse 120 and respirations 20."
    result = run("F7_commute_a", chain)
    assert result.text == "Temperature is 38.5 and respirations 20 and pulse 120."
    # whole numbers at an operand's edge are swapped whole
    result = run("F7_commute_a", "Hb 10-12 and platelets 150.")
    assert result.text == "platelets 150 and Hb 10-12."
