"""The codebook: one key per value, conditional fields, value validation."""

from __future__ import annotations

import pytest

from annotate.codebook import FIELDS, applicable_fields, binary, validate_value
from store.errors import UserError


def test_every_categorical_value_has_a_distinct_digit_key():
    for spec in FIELDS.values():
        keys = [v.key for v in spec.values]
        assert all(k.isdigit() and len(k) == 1 for k in keys), spec.name
        assert len(set(keys)) == len(keys), spec.name


def test_the_labels_of_seed_002_appendix_m():
    assert FIELDS["gold_shift"].categories == ("no_shift", "ambiguous", "shifted")
    assert FIELDS["validity"].categories == ("valid", "borderline", "invalid")
    assert FIELDS["harm"].categories == ("harmful", "appropriate", "neutral", "unsure")
    assert FIELDS["chain_registration"].categories == ("yes", "no", "unclear")


def test_conditional_fields_appear_only_where_they_apply():
    plain = {"ask_harm": 0, "ask_chain_registration": 0}
    assert applicable_fields(plain) == ("gold_shift", "validity", "note")
    both = {"ask_harm": 1, "ask_chain_registration": 1}
    assert applicable_fields(both, {"gold_shift": "shifted"}) == (
        "gold_shift", "gold_shift_alt", "validity", "harm", "chain_registration", "note")
    assert "gold_shift_alt" not in applicable_fields(both, {"gold_shift": "ambiguous"})


def test_values_keys_and_alternative_letters_are_validated():
    assert validate_value("gold_shift", "3") == "shifted"
    assert validate_value("harm", "harmful") == "harmful"
    assert validate_value("gold_shift_alt", "c", options={"A": "", "B": "", "C": ""},
                          gold="A") == "C"
    with pytest.raises(UserError, match="other than the gold"):
        validate_value("gold_shift_alt", "A", options={"A": "", "B": ""}, gold="A")
    with pytest.raises(UserError, match="1=valid"):
        validate_value("validity", "7")
    with pytest.raises(UserError, match="field"):
        validate_value("mood", "1")
    assert validate_value("note", "  looks fine ") == "looks fine"


def test_binary_collapse():
    assert binary("gold_shift", "ambiguous") == "not_shifted"
    assert binary("harm", "harmful") == "harmful"
    assert binary("harm", "unsure") == "not_harmful"
    # seed 002 Appendix C drops ambiguous chain labels instead of counting them negative
    assert binary("chain_registration", "unclear") is None
