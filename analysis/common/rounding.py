"""The reports' one rounding rule: half away from zero at the printed precision, noise absorbed.

A report prints a rate with two decimals and a percentage with one; a reader checks a
threshold ("FCS in [0.45, 0.55]", "ΔAcc < 0", "|ΔAcc| ≤ 1.6 pp") on what is printed. So every
decision of that kind is taken on the value rounded exactly as it is printed, by
`rounded`, and every printed number goes through the same function:

1. an exact value (`fractions.Fraction`, an int) is rounded exactly;
2. a float is first rounded to `NOISE_DECIMALS` decimal places (half-even), which absorbs
   the binary noise of sums and differences (a Δ of exactly 0 computed as −5.55e-15, an
   FCS of 0.55 computed as 0.5500000000000001), then
3. rounded to the printed precision **half away from zero** (0.125 → 0.13, −0.125 → −0.13,
   as a reader rounds by hand; Python's own `format` rounds the binary value half-even, so
   0.125 would print "0.12").

A zero result is always +0: nothing prints as "-0.0".
"""

from __future__ import annotations

import math
import numbers
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from fractions import Fraction

NOISE_DECIMALS: int = 12
"""Decimal places a float is rounded to before the printed precision (float noise of the
reports' magnitudes, rates in [0, 1] and percentages up to 100, is below 1e-13)."""


def rounded(value: float | Fraction | Decimal, decimals: int) -> Decimal:
    """`value` rounded half away from zero to `decimals` places (see the module docstring).

    Args:
        value: a finite number (float, int, Fraction or Decimal).
        decimals: places after the decimal point (≥ 0).

    Returns:
        The rounded value as a Decimal with exactly `decimals` places; never −0.

    Raises:
        ValueError: `value` is NaN or infinite.
    """
    quantum = Decimal(1).scaleb(-decimals)
    if isinstance(value, numbers.Integral):
        value = Fraction(int(value))
    if isinstance(value, Fraction):
        scaled = abs(value) * 10 ** decimals
        whole = math.floor(scaled + Fraction(1, 2))
        result = Decimal(whole if value >= 0 else -whole).scaleb(-decimals)
    else:
        if not isinstance(value, Decimal):
            value = float(value)  # numpy scalars too
            if not math.isfinite(value):
                raise ValueError(f"cannot round {value!r}")
            value = Decimal(repr(value)).quantize(Decimal(1).scaleb(-NOISE_DECIMALS),
                                                  ROUND_HALF_EVEN)
        result = value.quantize(quantum, ROUND_HALF_UP)
    result = result.quantize(quantum)
    return result.copy_abs() if result == 0 else result


def sign_at(value: float | Fraction, decimals: int) -> int:
    """−1, 0 or +1: the sign of `value` as printed with `decimals` places (0 for NaN)."""
    if not isinstance(value, (Fraction, Decimal, numbers.Integral)) and math.isnan(value):
        return 0
    r = rounded(value, decimals)
    return 0 if r == 0 else (1 if r > 0 else -1)


def format_rounded(value: float | Fraction, decimals: int) -> str:
    """The printed text of `value` with `decimals` places under the rounding rule."""
    return f"{rounded(value, decimals):.{decimals}f}"
