"""The reports' rounding rule: half away from zero at the printed precision, float noise absorbed."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from analysis.common.render import count_mark, display_frame, format_number, markdown_table
from analysis.common.rounding import format_rounded, rounded, sign_at


def test_half_away_from_zero_not_the_binary_half_even():
    # 0.125 is exact in binary; Python's format rounds it half-even to "0.12". A reader (and
    # the paper) rounds it to 0.13; −0.125 to −0.13.
    assert f"{0.125:.2f}" == "0.12"
    assert format_rounded(0.125, 2) == "0.13"
    assert format_rounded(-0.125, 2) == "-0.13"
    assert format_rounded(Fraction(1, 8), 2) == "0.13"
    # 0.545 is 0.54499999999999992894572642398998… in binary; the decimal it stands for
    # rounds to 0.55 (and Fraction(109, 200), its exact value, does too).
    assert format_rounded(0.545, 2) == "0.55" and format_rounded(Fraction(109, 200), 2) == "0.55"


def test_float_noise_is_absorbed_and_zero_has_no_sign():
    # A Δ of exactly 0 (3/5 − mean(2/5, 4/5)) computed in floats:
    noise = 3 / 5 - (2 / 5 + 4 / 5) / 2
    assert noise != 0.0 and abs(noise) < 1e-15
    assert format_rounded(noise * 100, 1) == "0.0"  # not "-0.0"
    assert format_rounded(-0.0, 1) == "0.0"
    assert sign_at(noise, 1) == 0 and sign_at(-5.55e-15, 1) == 0
    assert sign_at(-0.04, 1) == 0  # prints "0.0": not negative
    assert sign_at(-0.05, 1) == -1  # prints "-0.1"
    # 0.1 + 0.2 = 0.30000000000000004; 3 × 0.1 = 0.30000000000000004; 1/8 computed inexactly
    assert rounded(0.1 + 0.2, 2) == Decimal("0.30")
    assert format_rounded(0.12499999999999999, 2) == "0.13"


def test_format_number_uses_the_rule_everywhere():
    assert format_number(0.125) == "0.13"
    assert format_number(np.float64(0.125)) == "0.13"
    assert format_number(-5.55e-15, 1) == "0.0"
    assert format_number(0.00042, "p") == "4.2e-04"
    assert format_number(0.0125, "p") == "0.013"  # half away from zero at three decimals
    assert format_number(float("nan")) == "–"
    assert format_number(7) == "7" and format_number(True) == "yes"


def test_a_rate_carries_its_count_and_a_shared_count_column_is_not_repeated():
    frame = pd.DataFrame({"arm": ["x", "y"], "acc": [0.5507, 0.125], "acc_low": [0.4, 0.0],
                          "acc_high": [0.7, 0.3], "acc_n": [25, 8], "rate": [0.1, 0.2],
                          "rate_n": [8, 9], "n_items": [8, 9]}).set_index("arm")
    frame.attrs["n_of"] = {"rate": "n_items"}
    shown = display_frame(frame)
    assert list(shown.columns) == ["Acc.", "rate", "n items"]  # companions folded in
    assert shown.loc["x", "Acc."] == "0.55 [0.40, 0.70] " + count_mark(25)
    assert count_mark(25) == "ⁿ⁼²⁵"
    assert shown.loc["y", "Acc."] == "0.13 [0.00, 0.30] ⁿ⁼⁸"
    assert shown.loc["x", "rate"] == "0.10"  # its n equals the row's n column
    frame.loc["y", "rate_n"] = 7
    assert display_frame(frame).loc["y", "rate"] == "0.20 ⁿ⁼⁷"  # differs: shown


def test_bold_cells_and_row_marks():
    frame = pd.DataFrame({"arm": ["x", "y"], "acc": [0.5, 0.7]}).set_index("arm")
    frame.attrs["bold"] = [("y", "acc")]
    frame.attrs["row_marks"] = {"x": "∗"}
    text = markdown_table(frame)
    assert "| x∗ | 0.50 |" in text and "| y | **0.70** |" in text
    from analysis.common.render import html_table

    html = html_table(frame)
    assert "<td><b>0.70</b></td>" in html and "<th>x∗</th>" in html
    frame.attrs["headers"] = {"acc": "Accuracy <%>"}
    assert "<th>Accuracy &lt;%&gt;</th>" in html_table(frame)


@pytest.mark.parametrize("value", [float("inf"), float("nan")])
def test_rounding_refuses_what_has_no_decimal(value):
    with pytest.raises(ValueError):
        rounded(value, 2)
