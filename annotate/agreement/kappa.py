"""Two-rater agreement on one confusion table: Cohen's kappa, its 95% CI, Gwet's AC1.

Pure arithmetic on integer counts; no store. Kappa and its asymptotic variance (Fleiss,
Cohen & Everitt 1969 — the formula of `statsmodels.stats.inter_rater.cohens_kappa`, term
for term) are computed in exact fractions, then the SE is the square root of that
variance. statsmodels is the reference: the tests compare kappa, SE and interval with it
on every table up to N = 10 (2×2), 5 (3×3) and 3 (4×4) and on random larger ones. It is
not called at run time because its float variance can come out as -7e-17 for an exact 0,
and because building its results object costs ~6 ms a table (scipy distributions are
frozen for every call), which would dominate a coordinator recomputation of ~80 tables.
Results are cached by table, so a recomputation after one new label only computes the few
tables that label changed. Every degenerate case is decided on integers or exact
fractions, never on a float:

- **undefined kappa**: no pair (N = 0), or chance agreement p_e = 1 (both raters used one
  and the same category) — kappa is 0/0;
- **perfect agreement** (every pair on the diagonal, two or more categories used): kappa is
  exactly 1 and its asymptotic variance is exactly 0, so no interval is reported — a
  zero-width [1, 1] would claim a certainty that N cases cannot give;
- **zero variance** otherwise (one rater used a single category, which forces kappa = 0; or
  a few complete-disagreement tables): kappa is reported, the interval is not;
- **clipped**: the Wald interval kappa ± 1.96·SE can run past the bounds of kappa; it is cut
  at [-1, 1] and flagged (the method is not bounded by itself);
- **small N**: N < 2q² (q = categories of the table), below which the asymptotic standard
  error is not reliable (Cicchetti & Fleiss 1977; Cicchetti 1981, Applied Psychological
  Measurement 5:101-104: "the minimal N required ... can be approximated by 2k²"). Their
  simulations cover 3 ≤ k ≤ 10; PAW applies the same rule to binary tables (N < 8).

AC1 (Gwet 2008), with q counting every category of the field, used or not:

    p_a  = sum_k n_kk / n ;  pi_k = (n_k+ + n_+k) / (2 n)
    p_e  = sum_k pi_k (1 - pi_k) / (q - 1) ;  AC1 = (p_a - p_e) / (1 - p_e)
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from store.errors import UserError

Z_95 = 1.959963984540054
"""Two-sided 95% normal quantile (what statsmodels uses for its kappa interval)."""

LANDIS_KOCH: tuple[tuple[float, str], ...] = (
    (0.20, "slight"), (0.40, "fair"), (0.60, "moderate"), (0.80, "substantial"),
    (1.0, "almost perfect"),
)
"""Upper bounds (inclusive) of the Landis & Koch (1977) bands from 0; below 0 is 'poor'."""


def landis_koch_legend() -> str:
    """Every Landis & Koch band in one line: '< 0 poor · 0.00–0.20 slight · … '."""
    parts, low = ["< 0 poor"], 0.0
    for upper, words in LANDIS_KOCH:
        parts.append(f"{low:.2f}–{upper:.2f} {words}")
        low = upper
    return " · ".join(parts)


def landis_koch(kappa: float | None) -> str:
    """Landis & Koch wording for a kappa ('undefined' for None)."""
    if kappa is None:
        return "undefined"
    if kappa < -1e-12:  # float noise around an exact 0 is still 'slight'
        return "poor"
    for upper, words in LANDIS_KOCH:
        if kappa <= upper + 1e-12:
            return words
    return "almost perfect"


def min_reliable_n(q: int) -> int:
    """2q²: the smallest N at which kappa's asymptotic SE is trusted (see module docstring)."""
    return 2 * q * q


@dataclass(frozen=True)
class Agreement:
    """Agreement of two raters on one field (one stratum, or all cases).

    Attributes:
        field: label field.
        binary: True for the binary collapse (e.g. shifted vs not).
        stratum: None for every case, else the stratum filter used.
        rater_a: rows of `confusion`.
        rater_b: columns of `confusion`.
        categories: category order of `confusion`.
        n: cases labelled by both raters.
        confusion: counts, rows rater_a, columns rater_b.
        raw_agreement: share of the n cases with the same label (None when n = 0).
        kappa: Cohen's kappa (None when undefined).
        kappa_se: its asymptotic standard error (None when zero or undefined).
        kappa_ci: 95% confidence interval within [-1, 1] (None when not estimable).
        ac1: Gwet's AC1 (None when n = 0).
        state: 'ok' or 'undefined' (kappa undefined; see `reason`).
        reason: why kappa or its interval is not given ('' when both are).
        interpretation: Landis & Koch wording of kappa.
        perfect: every pair agrees (kappa exactly 1, no interval).
        ci_clipped: the Wald interval ran past -1 or 1 and was cut there.
        small_n: n < 2q², too few for the asymptotic interval to be trusted.
    """

    field: str
    binary: bool
    stratum: str | None
    rater_a: str
    rater_b: str
    categories: tuple[str, ...]
    n: int
    confusion: tuple[tuple[int, ...], ...]
    raw_agreement: float | None
    kappa: float | None
    kappa_se: float | None
    kappa_ci: tuple[float, float] | None
    ac1: float | None
    state: str
    reason: str
    interpretation: str
    perfect: bool = False
    ci_clipped: bool = False
    small_n: bool = False

    @property
    def label(self) -> str:
        """Display name, e.g. 'gold_shift (shifted vs not)' or 'gold_shift (3-way)'."""
        return table_label(self.field, self.binary, len(self.categories))

    @property
    def flags(self) -> tuple[str, ...]:
        """Short flags for a table's note column: 'perfect', 'clipped', 'small N'."""
        out = []
        if self.perfect:
            out.append("perfect")
        if self.ci_clipped:
            out.append("clipped")
        if self.small_n and self.n:
            out.append("small N")
        return tuple(out)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (`paw agreement --json`)."""
        out = asdict(self)
        out["label"] = self.label
        out["flags"] = list(self.flags)
        out["min_reliable_n"] = min_reliable_n(len(self.categories))
        return out


def cohen_kappa(table: list[list[int]]) -> float | None:
    """Cohen's kappa of a square confusion table, computed exactly; None when undefined
    (no pair, or chance agreement 1). The one formula behind `from_table` and the
    κ-over-labels series (`annotate.agreement.kappa_series`).
    """
    q = len(table)
    n = sum(sum(row) for row in table)
    diagonal = sum(table[k][k] for k in range(q))
    expected = sum(sum(table[k]) * sum(row[k] for row in table)
                   for k in range(q))  # n² · p_e, an integer
    return kappa_of_counts(n, diagonal, expected)


def kappa_of_counts(n: int, diagonal: int, expected: int) -> float | None:
    """Cohen's kappa from a table's pair count `n`, its diagonal sum and Σ r_k c_k (row
    times column totals: n² · p_e), exactly; None when undefined. `cohen_kappa` and the
    running prefix tables of `annotate.agreement.kappa_series` both end here."""
    if n == 0 or expected == n * n:
        return None
    # kappa = (p_o − p_e)/(1 − p_e) = (n·Σn_kk − Σ r_k c_k)/(n² − Σ r_k c_k), exactly:
    # int / int is correctly rounded: the same float as float(Fraction(...)).
    return (n * diagonal - expected) / (n * n - expected)


def gwet_ac1(table: list[list[int]]) -> float | None:
    """Gwet's AC1 of a square confusion table (None when it is empty).

    Args:
        table: counts, rows one rater, columns the other, the same category order; every
            category of the field must have a row, used or not (q = len(table)).
    """
    q = len(table)
    n = sum(sum(row) for row in table)
    if n == 0 or q < 2:
        return None
    p_a = sum(table[k][k] for k in range(q)) / n
    shares = [(sum(table[k]) + sum(row[k] for row in table)) / (2 * n) for k in range(q)]
    p_e = sum(pi * (1 - pi) for pi in shares) / (q - 1)
    return (p_a - p_e) / (1 - p_e)


def exact_kappa_variance(table: list[list[int]]) -> Fraction:
    """Fleiss–Cohen–Everitt asymptotic variance of kappa, in exact fractions.

    The same terms as statsmodels' `cohens_kappa` (A + B − C over n(1 − p_e)²), so that
    'the variance is 0' is decided exactly rather than on float noise. Needs p_e < 1.
    """
    return _variance(tuple(tuple(row) for row in table))


@lru_cache(maxsize=16384)
def _variance(table: tuple[tuple[int, ...], ...]) -> Fraction:
    q = len(table)
    n = sum(sum(row) for row in table)
    # Every sum starts at Fraction(0) rather than the int 0, so the declared type is what
    # runs: exact fractions throughout, the variance included.
    zero = Fraction(0)
    p = [[Fraction(c, n) for c in row] for row in table]
    rows = [sum(p[i], zero) for i in range(q)]
    cols = [sum((p[i][j] for i in range(q)), zero) for j in range(q)]
    p_o = sum((p[k][k] for k in range(q)), zero)
    p_e = sum((rows[k] * cols[k] for k in range(q)), zero)
    kappa = (p_o - p_e) / (1 - p_e)
    term_a = sum((p[i][i] * (1 - (rows[i] + cols[i]) * (1 - kappa)) ** 2 for i in range(q)),
                 zero)
    term_b = (1 - kappa) ** 2 * sum((p[i][j] * (cols[i] + rows[j]) ** 2
                                     for i in range(q) for j in range(q) if i != j), zero)
    term_c = (kappa - p_e * (1 - kappa)) ** 2
    return (term_a + term_b - term_c) / (1 - p_e) ** 2 / n


def from_table(table: list[list[int]], categories: tuple[str, ...], *, field: str = "",
               binary: bool = False, stratum: str | None = None, rater_a: str = "A",
               rater_b: str = "B") -> Agreement:
    """Agreement statistics of one confusion table (rows rater A, columns rater B).

    See the module docstring for every degenerate case and how it is reported.
    """
    q = len(categories)
    n = sum(sum(row) for row in table)
    base: dict[str, Any] = {
        "field": field, "binary": binary, "stratum": stratum, "rater_a": rater_a,
        "rater_b": rater_b, "categories": tuple(categories), "n": n,
        "confusion": tuple(tuple(row) for row in table), "small_n": n < min_reliable_n(q)}
    if n == 0:
        return Agreement(**base, raw_agreement=None, kappa=None, kappa_se=None, kappa_ci=None,
                         ac1=None, state="undefined",
                         reason="no case labelled by both raters yet",
                         interpretation="undefined")
    diagonal = sum(table[k][k] for k in range(q))
    rows = [sum(table[k]) for k in range(q)]
    cols = [sum(row[k] for row in table) for k in range(q)]
    raw, ac1 = diagonal / n, gwet_ac1(table)
    kappa = cohen_kappa(table)
    if kappa is None:
        used = [c for k, c in enumerate(categories) if rows[k] or cols[k]]
        return Agreement(**base, raw_agreement=raw, kappa=None, kappa_se=None, kappa_ci=None,
                         ac1=ac1, state="undefined",
                         reason=f"only one category used so far ({', '.join(used)}): "
                                "chance agreement is 1",
                         interpretation="undefined")
    if diagonal == n:
        return Agreement(**base, raw_agreement=raw, kappa=kappa, kappa_se=None,
                         kappa_ci=None, ac1=ac1, state="ok",
                         reason=f"perfect agreement on all {n} cases: the asymptotic variance "
                                "is 0, so no interval is given",
                         interpretation=landis_koch(kappa), perfect=True)
    variance = exact_kappa_variance(table)
    if variance <= 0:
        constant = min(sum(1 for r in rows if r), sum(1 for c in cols if c)) == 1
        why = ("a rater used one category only" if constant
               else "the asymptotic variance of this table is 0")
        return Agreement(**base, raw_agreement=raw, kappa=kappa, kappa_se=None, kappa_ci=None,
                         ac1=ac1, state="ok", reason=f"confidence interval undefined ({why})",
                         interpretation=landis_koch(kappa))
    se = math.sqrt(variance)  # Fraction -> float, then the root: no negative noise possible
    low, high = kappa - Z_95 * se, kappa + Z_95 * se
    clipped = low < -1 or high > 1
    return Agreement(**base, raw_agreement=raw, kappa=kappa, kappa_se=se,
                     kappa_ci=(max(-1.0, low), min(1.0, high)), ac1=ac1, state="ok",
                     reason="", interpretation=landis_koch(kappa), ci_clipped=clipped)


def from_pairs(pairs: list[tuple[str, str]], categories: tuple[str, ...], *, field: str = "",
               binary: bool = False, stratum: str | None = None, rater_a: str = "A",
               rater_b: str = "B") -> Agreement:
    """Agreement statistics of (rater_a value, rater_b value) pairs over `categories`.

    Raises:
        UserError: a value outside `categories`.
    """
    index = {c: i for i, c in enumerate(categories)}
    table = [[0] * len(categories) for _ in categories]
    for a, b in pairs:
        if a not in index or b not in index:
            raise UserError(f"{field}: value outside {categories}: {(a, b)}")
        table[index[a]][index[b]] += 1
    return from_table(table, categories, field=field, binary=binary, stratum=stratum,
                      rater_a=rater_a, rater_b=rater_b)


def table_label(name: str, binary: bool, n_categories: int) -> str:
    """An agreement table's display name: 'gold_shift (shifted vs not)' for the binary
    form, 'gold_shift (3-way)' for the full field (`Agreement.label`, the κ figures)."""
    from annotate.codebook import field as field_spec

    if binary:
        return f"{name} ({field_spec(name).binary_name})"
    return f"{name} ({n_categories}-way)"
