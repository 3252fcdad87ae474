"""Every F and M operator is total over any text a model can produce (issue 27, criterion 4).

A model's chain is not a well-formed clinical text: Gemma 3 270M wrote a chain of 112 "1"s,
which made F3 raise `decimal.InvalidOperation` inside `plan_fblock` and aborted `paw audit`
(and its resume). These properties feed every F and M operator numbers of any length
(past Python's 4,300-digit int conversion limit and the 28-digit decimal context), empty
and blank chains, decimal digits of other scripts, and one token repeated 1,000 times.
Each operator must return, deterministically, either an edit or `not fired` with a reason.
"""

from __future__ import annotations

import unicodedata
from decimal import MAX_EMAX, Decimal, localcontext

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.fakes import fake_model_record
from workbench.perturb import F_BLOCK, M_BLOCK, OPERATORS
from workbench.perturb.chain import F3_OFFSETS, NUMBER

PAPER_OPERATORS = [*F_BLOCK, *M_BLOCK]

# Decimal digits of several scripts (ASCII, Arabic-Indic, Devanagari, fullwidth, Bengali,
# mathematical bold): `\d` matches all of them.
DIGITS = "0123456789" "٠١٢٣٤٥٦٧٨٩" "०१२३४५६७८९" "０１２３４５６７８９" "০১২৩৪৫৬৭৮৯" "𝟎𝟏𝟐𝟑𝟒𝟓"
NUMBERS = st.one_of(
    st.text(alphabet=DIGITS, min_size=1, max_size=6000),
    st.builds(lambda a, b: f"{a}.{b}", st.text(alphabet="0123456789", min_size=1, max_size=3000),
              st.text(alphabet="0123456789", min_size=1, max_size=3000)),
    st.integers(1, 6000).map(lambda n: "1" * n),
)
TOKENS = ["1", "1 ", "0", "9.9", "Step 1:", "Step 1: ", "\n", "\n\n", " ", "and ", "fever and ",
          "we ", "Therefore ", "mild ", "45-year-old ", "man ", "reports ", "yesterday ",
          "٣", ".", "?", "A", "Answer: B", "é", "\u200b", "🙂", "\x00"]
REPEATED = st.builds(lambda token, n: token * n, st.sampled_from(TOKENS),
                     st.sampled_from([1, 2, 999, 1000, 1001]))
TEXTS = st.one_of(
    st.sampled_from(["", " ", "\n", "\n\n\n", "\t \n"]),
    NUMBERS,
    NUMBERS.map(lambda n: f"Step 1: the dose is {n} mg.\nStep 2: give {n}."),
    REPEATED,
    st.lists(st.one_of(NUMBERS, st.sampled_from(TOKENS)), max_size=12).map("".join),
    st.text(max_size=200),
)
SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("op_id", PAPER_OPERATORS)
@SETTINGS
@given(text=TEXTS, seed=st.integers(0, 2**32))
@example(text="1" * 112, seed=0)            # the Gemma 3 chain of issue 27
@example(text="1" * 5000, seed=0)           # past int()'s 4,300-digit limit
@example(text="", seed=0)
@example(text="1 " * 1000, seed=3)
def test_operator_is_total(op_id: str, text: str, seed: int) -> None:
    op = OPERATORS[op_id]
    first = op.apply(text, seed=seed, item_key="item")
    assert first == op.apply(text, seed=seed, item_key="item")  # deterministic
    if first.fired:
        assert first.text is not None and first.text != text and first.reason is None
        assert 0.0 <= first.token_change_fraction <= 1.0
    else:
        assert first.text is None and first.reason  # says why


def _value(literal: str) -> Decimal:
    return Decimal("".join(c if c == "." else str(unicodedata.decimal(c)) for c in literal))


@pytest.mark.parametrize("variant", "abc")
@SETTINGS
@given(number=NUMBERS, seed=st.integers(0, 2**32))
@example(number="1" * 112, seed=0)
@example(number="0.0000001", seed=1)
def test_f3_shifts_a_number_of_any_length_exactly(variant: str, number: str, seed: int) -> None:
    result = OPERATORS[f"F3_substitute_{variant}"].apply(f"Dose {number} mg", seed=seed,
                                                         item_key="x")
    (match,) = NUMBER.finditer(f"Dose {number} mg")  # one literal: the one picked
    old = match.group(0)
    offset = result.details["offset"]
    with localcontext() as exact:  # enough digits that nothing is rounded
        exact.prec, exact.Emax = 2 * len(old) + 10, MAX_EMAX
        expected = max(_value(old) + offset, Decimal(0))
        if expected == _value(old):
            assert not result.fired and "no-op" in result.reason
            return
        assert result.fired and result.old == old and offset in F3_OFFSETS
        assert _value(result.new) == expected  # exact, whatever the length
    assert "E" not in result.new and result.new.count(".") == old.count(".")
    if "." in old:  # the decimal places are kept
        assert len(result.new.split(".")[1]) == len(old.split(".")[1])
    scripts = {ord(c) - unicodedata.decimal(c) for c in old if c != "."}
    if len(scripts) == 1:  # written in the literal's own digits
        assert {ord(c) - unicodedata.decimal(c) for c in result.new if c != "."} == scripts
    assert result.text == f"Dose {result.new} mg"


def test_a_degenerate_baseline_chain_plans_its_f_block_without_crashing(db, demo_db) -> None:
    """`plan_fblock` on a baseline chain of 112 "1"s (what crashed `paw audit`), then a resume."""
    from tests.fakes import fake_engine
    from workbench.audit import AuditSpec, run_audit
    from workbench.perturb import resolve_operators

    fake_model_record(db)

    def degenerate(prompt: str, sampler) -> str:
        return " A" if "Answer with" in prompt[-200:] else "1" * 112

    spec = AuditSpec(dataset="demo", models=("fake",), item_ids=("demo-001",),
                     operators=resolve_operators("F"), max_tokens=200)
    outcome = run_audit(db, spec, engine=fake_engine(db, degenerate), judge=False)
    assert not outcome.stopped
    rows = {r[0]: (r[1], r[2]) for r in db.execute(
        "SELECT operator_id, fired, text FROM variants WHERE operator_id LIKE 'F3%'")}
    assert set(rows) == {"F3_substitute_a", "F3_substitute_b", "F3_substitute_c"}
    for fired, text in rows.values():
        # 111…1 shifted by -3/-1/+1/+2/+7: never clamped, so every variant fires.
        assert fired == 1 and len(text) == 112 and text != "1" * 112
    again = run_audit(db, spec, engine=fake_engine(db, degenerate), judge=False)
    assert again.generated == 0  # the resume finds everything done


def test_a_plugin_operator_that_raises_records_not_fired_with_the_reason() -> None:
    from dataclasses import replace

    def broken(text, ctx):
        raise ValueError(f"cannot parse {text[:5]!r}")

    plugin = replace(OPERATORS["F2_delete_a"], id="my_op", fn=broken, source="entry point x")
    result = plugin.apply("1" * 112)
    assert not result.fired and result.text is None
    assert result.reason == "operator raised ValueError: cannot parse '11111'"
    builtin = replace(OPERATORS["F2_delete_a"], fn=broken)  # a built-in's raise is a bug
    with pytest.raises(ValueError):
        builtin.apply("x")
