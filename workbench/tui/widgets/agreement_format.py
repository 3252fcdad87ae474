"""How agreement figures are written on the coordinator screen (one place for the wording)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from annotate.agreement.kappa import Agreement

DASH = "—"


def form(agreement: Agreement) -> str:
    """'3-way' / '4-way' for the full field, 'shifted vs not' for the binary collapse (no
    'binary:' prefix: the nine columns then fit 120 columns, the note included)."""
    from annotate.codebook import FIELDS

    if agreement.binary:
        return FIELDS[agreement.field].binary_name
    return f"{len(agreement.categories)}-way"


def percent(value: float | None) -> str:
    """A share as '85.0 %' (dash when undefined)."""
    return DASH if value is None else f"{100 * value:.1f} %"


def number(value: float | None) -> str:
    """A coefficient to two decimals, sign kept (dash when undefined)."""
    return DASH if value is None else f"{value:+.2f}" if value < 0 else f"{value:.2f}"


def kappa(agreement: Agreement) -> str:
    """Cohen's kappa, or the word 'undefined' (never 0 or NaN in its place)."""
    return "undefined" if agreement.kappa is None else number(agreement.kappa)


def ci(agreement: Agreement) -> str:
    """95% CI as '[0.10, 0.40]' (within [-1, 1]); dash when kappa is undefined, 'none
    (perfect)' for a perfect table, 'undefined' when only the interval is (one rater used
    a single category, or another zero-variance table)."""
    if agreement.kappa_ci is None:
        if agreement.kappa is None:
            return DASH
        return "none (perfect)" if agreement.perfect else "undefined"
    low, high = agreement.kappa_ci
    return f"[{number(low)}, {number(high)}]"


def flags(agreement: Agreement) -> str:
    """The note cell: 'clipped', 'small N', 'perfect' (see `LEGEND`)."""
    return ", ".join(agreement.flags)


def legend() -> str:
    """What the note flags and the Landis–Koch words mean (every band)."""
    from annotate.agreement.kappa import landis_koch_legend

    return (f"Landis–Koch: {landis_koch_legend()}\n"
            "CI: asymptotic (statsmodels), cut at [−1, 1] when it runs past (clipped) · "
            "small N: N < 2q², q categories (Cicchetti 1981): the CI is not reliable · "
            "perfect: every pair agrees, κ = 1, no interval")


def summary(agreement: Agreement) -> str:
    """One line: 'κ 0.25 [0.10, 0.40] fair · AC1 0.61 · raw 70.0 % · N 20'."""
    if agreement.kappa is None:
        head = f"κ undefined ({agreement.reason})" if agreement.reason else "κ undefined"
    elif agreement.kappa_ci is None:
        why = agreement.reason or "CI undefined"
        head = f"κ {kappa(agreement)} {agreement.interpretation} ({why})"
    else:
        head = f"κ {kappa(agreement)} {ci(agreement)} {agreement.interpretation}"
    note = f" · {flags(agreement)}" if agreement.flags and agreement.kappa is not None else ""
    return (f"{head} · AC1 {number(agreement.ac1)} · raw {percent(agreement.raw_agreement)} "
            f"· N {agreement.n}{note}")
