"""Inter-rater agreement per label field and stratum: Cohen's kappa (95% CI), Gwet's AC1.

Coordinator-side only: nothing here is reachable from a rater's session. Kappa and its
confidence interval come from `statsmodels.stats.inter_rater.cohens_kappa`; AC1 is
computed here (Gwet 2008):

    p_a  = sum_k n_kk / n                      (raw agreement)
    pi_k = (n_k+ + n_+k) / (2 n)               (mean share of category k)
    p_e  = sum_k pi_k (1 - pi_k) / (q - 1)     (q = categories of the field, used or not)
    AC1  = (p_a - p_e) / (1 - p_e)

Kappa is reported as undefined (not 0, not NaN) when no case was labelled by both raters,
or when chance agreement is 1 (both raters used one and the same category so far).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, replace
from typing import Any

import sqlite_utils

from annotate.codebook import AGREEMENT_FIELDS, binary_categories
from annotate.codebook import binary as binary_value
from annotate.codebook import field as field_spec
from store.errors import UserError

STRATUM_DIMENSIONS: tuple[str, ...] = ("family", "dataset", "model")
"""Components of a case's stratum key 'family|dataset|model', in order."""

LANDIS_KOCH: tuple[tuple[float, str], ...] = (
    (0.20, "slight"), (0.40, "fair"), (0.60, "moderate"), (0.80, "substantial"),
    (1.0, "almost perfect"),
)
"""Upper bounds (inclusive) of the Landis & Koch (1977) bands from 0; below 0 is 'poor'."""


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
        kappa_se: its asymptotic standard error (statsmodels).
        kappa_ci: 95% confidence interval (None when undefined).
        ac1: Gwet's AC1 (None when n = 0).
        state: 'ok' or 'undefined' (kappa undefined; see `reason`).
        reason: why kappa is undefined ('' when ok).
        interpretation: Landis & Koch wording of kappa.
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

    @property
    def label(self) -> str:
        """Display name, e.g. 'gold_shift (shifted vs not)' or 'gold_shift (3-way)'."""
        if self.binary:
            return f"{self.field} ({field_spec(self.field).binary_name})"
        return f"{self.field} ({len(self.categories)}-way)"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (`paw agreement --json`)."""
        out = asdict(self)
        out["label"] = self.label
        return out


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
    n = len(pairs)
    base = dict(field=field, binary=binary, stratum=stratum, rater_a=rater_a, rater_b=rater_b,
                categories=tuple(categories), n=n,
                confusion=tuple(tuple(row) for row in table))
    if n == 0:
        return Agreement(**base, raw_agreement=None, kappa=None, kappa_se=None, kappa_ci=None,
                         ac1=None, state="undefined",
                         reason="no case labelled by both raters yet",
                         interpretation="undefined")
    raw = sum(table[k][k] for k in range(len(categories))) / n
    ac1 = gwet_ac1(table)
    p_e = sum((sum(table[k]) / n) * (sum(row[k] for row in table) / n)
              for k in range(len(categories)))
    if p_e >= 1 - 1e-12:
        used = [c for k, c in enumerate(categories) if sum(table[k]) or
                sum(row[k] for row in table)]
        return Agreement(**base, raw_agreement=raw, kappa=None, kappa_se=None, kappa_ci=None,
                         ac1=ac1, state="undefined",
                         reason=f"only one category used so far ({', '.join(used)}): "
                                "chance agreement is 1",
                         interpretation="undefined")
    from statsmodels.stats.inter_rater import cohens_kappa

    with warnings.catch_warnings():
        # statsmodels divides by a zero variance when one rater used a single category;
        # the kappa is still defined, only its CI is not (reported as such below).
        warnings.simplefilter("ignore", RuntimeWarning)
        result = cohens_kappa(table)
    kappa = float(result.kappa)
    kappa = 0.0 if abs(kappa) < 1e-12 else kappa  # p_o == p_e up to float noise
    se = float(result.std_kappa)
    reason, ci = "", (float(result.kappa_low), float(result.kappa_upp))
    rows_used = sum(1 for row in table if sum(row))
    columns_used = sum(1 for k in range(len(categories)) if sum(row[k] for row in table))
    # One constant rater forces kappa = 0 and statsmodels' SE to 0: a [0, 0] interval
    # would claim a certainty the data do not have.
    if not math.isfinite(se) or min(rows_used, columns_used) == 1:
        se, ci = None, None
        reason = "confidence interval undefined (a rater used one category only)"
    return Agreement(**base, raw_agreement=raw, kappa=kappa, kappa_se=se, kappa_ci=ci, ac1=ac1,
                     state="ok", reason=reason, interpretation=landis_koch(kappa))


def _stratum_matches(stratum: str, wanted: str | None) -> bool:
    if wanted is None:
        return True
    if "=" in wanted:
        dim, _, value = wanted.partition("=")
        if dim not in STRATUM_DIMENSIONS:
            raise UserError(f"stratum: expected one of {', '.join(STRATUM_DIMENSIONS)}=VALUE "
                            f"or a full stratum, got {wanted!r}")
        parts = stratum.split("|")
        return parts[STRATUM_DIMENSIONS.index(dim)] == value
    return stratum == wanted


def set_raters(db: sqlite_utils.Database, set_id: int) -> list[tuple[int, str]]:
    """(id, name) of raters with labels in the set, most-labelled first (ties by id)."""
    return [(r[0], r[1]) for r in db.execute(
        "SELECT p.id, p.name, COUNT(DISTINCT e.case_id) AS n FROM label_events e "
        "JOIN people p ON p.id = e.person_id JOIN annotation_cases c ON c.id = e.case_id "
        "WHERE c.set_id = ? AND p.role = 'rater' GROUP BY p.id ORDER BY n DESC, p.id",
        [set_id])]


def rater_pair(db: sqlite_utils.Database, set_id: int, raters: tuple[str, str] | None = None,
               ) -> tuple[tuple[int, str], tuple[int, str]] | None:
    """The two raters compared: ((id, name) of A, (id, name) of B), or None if not two.

    Default: the two who labelled most cases, the lower id as A (rows of the confusion).
    """
    known = set_raters(db, set_id)
    if raters is not None:
        by_name = {name: (pid, name) for pid, name in known}
        if raters[0] not in by_name or raters[1] not in by_name:
            return None
        return by_name[raters[0]], by_name[raters[1]]
    if len(known) < 2:
        return None
    first, second = sorted(known[:2])  # stable row/column order: lower id is rater A
    return first, second


def agreement_table(db: sqlite_utils.Database, set_name: str, field: str, binary: bool = False,
                    stratum: str | None = None, raters: tuple[str, str] | None = None,
                    ) -> Agreement:
    """Agreement of the set's two raters on `field`, from their current labels.

    Args:
        db: the store.
        set_name: the annotation set.
        field: a categorical field (gold_shift, validity, harm, chain_registration).
        binary: collapse to the field's binary (shifted vs not, harmful vs not, ...).
        stratum: None for all cases, 'family=M3' / 'dataset=X' / 'model=Y' for one
            component, or a full 'family|dataset|model' key.
        raters: the two rater names (default: the two who labelled most cases).

    Returns:
        An `Agreement`, with state 'undefined' (and a reason) when kappa cannot be computed.
    """
    from annotate.events import all_current_labels
    from annotate.sets import get_set

    spec = field_spec(field)
    if field not in AGREEMENT_FIELDS:
        raise UserError(f"field: expected one of {', '.join(AGREEMENT_FIELDS)}, got {field!r}")
    the_set = get_set(db, set_name)
    categories = binary_categories(field) if binary else spec.categories
    pair = rater_pair(db, the_set.id, raters)
    if pair is None:
        names = raters or ("?", "?")
        empty = from_pairs([], categories, field=field, binary=binary, stratum=stratum,
                           rater_a=names[0], rater_b=names[1])
        return replace(empty, reason="fewer than two raters have labelled this set yet")
    (a_id, a_name), (b_id, b_name) = pair
    labels = all_current_labels(db, the_set.id)
    pairs = []
    for case_id, stratum_key in db.execute(
            "SELECT id, stratum FROM annotation_cases WHERE set_id = ? ORDER BY id",
            [the_set.id]):
        if not _stratum_matches(stratum_key, stratum):
            continue
        va = labels.get((case_id, a_id), {}).get(field)
        vb = labels.get((case_id, b_id), {}).get(field)
        if binary:
            va, vb = binary_value(field, va), binary_value(field, vb)
        if va is not None and vb is not None:
            pairs.append((va, vb))
    return from_pairs(pairs, categories, field=field, binary=binary, stratum=stratum,
                      rater_a=a_name, rater_b=b_name)


def strata_values(db: sqlite_utils.Database, set_name: str, dimension: str) -> list[str]:
    """Distinct values of one stratum dimension ('family', 'dataset', 'model') in a set."""
    from annotate.sets import get_set

    if dimension not in STRATUM_DIMENSIONS:
        raise UserError(f"by: expected one of {', '.join(STRATUM_DIMENSIONS)}, got {dimension!r}")
    position = STRATUM_DIMENSIONS.index(dimension)
    return sorted({key.split("|")[position] for key in get_set(db, set_name).strata})


def all_agreements(db: sqlite_utils.Database, set_name: str, by: str | None = None,
                   raters: tuple[str, str] | None = None) -> list[Agreement]:
    """Full and binary agreement for every categorical field (coordinator screen, CLI).

    Args:
        db: the store.
        set_name: the annotation set.
        by: also break down by one stratum dimension ('family', 'dataset', 'model').
        raters: the two rater names (default: the two who labelled most).

    Returns:
        For each field in `AGREEMENT_FIELDS`: the full table then the binary one, over all
        cases; then (if `by`) the same per value of that dimension.
    """
    strata: list[str | None] = [None]
    if by is not None:
        strata += [f"{by}={value}" for value in strata_values(db, set_name, by)]
    out = []
    for stratum in strata:
        for name in AGREEMENT_FIELDS:
            out.append(agreement_table(db, set_name, name, False, stratum, raters))
            out.append(agreement_table(db, set_name, name, True, stratum, raters))
    return out


@dataclass(frozen=True)
class RaterProgress:
    """How far one rater is through a set (coordinator screen)."""

    name: str
    done: int
    started: int
    total: int
    last_label_at: str | None


def progress(db: sqlite_utils.Database, set_name: str) -> list[RaterProgress]:
    """Per rater: cases with every asked field labelled (note excepted), cases touched."""
    from annotate.codebook import applicable_fields
    from annotate.events import all_current_labels
    from annotate.sets import get_set

    the_set = get_set(db, set_name)
    cases = {r["id"]: r for r in db.query(
        "SELECT id, ask_harm, ask_chain_registration FROM annotation_cases WHERE set_id = ?",
        [the_set.id])}
    labels = all_current_labels(db, the_set.id)
    out = []
    for person_id, name in db.execute(
            "SELECT DISTINCT p.id, p.name FROM people p LEFT JOIN annotation_orders o "
            "ON o.person_id = p.id AND o.set_id = ? LEFT JOIN label_events e "
            "ON e.person_id = p.id WHERE p.role = 'rater' AND (o.set_id IS NOT NULL OR "
            "e.case_id IN (SELECT id FROM annotation_cases WHERE set_id = ?)) ORDER BY p.name",
            [the_set.id, the_set.id]):
        done = started = 0
        for case_id, case in cases.items():
            mine = labels.get((case_id, person_id))
            if not mine:
                continue
            started += 1
            needed = [f for f in applicable_fields(case, mine) if f != "note"]
            done += all(f in mine for f in needed)
        last = db.execute(
            "SELECT MAX(e.created_at) FROM label_events e JOIN annotation_cases c "
            "ON c.id = e.case_id WHERE c.set_id = ? AND e.person_id = ?",
            [the_set.id, person_id]).fetchone()[0]
        out.append(RaterProgress(name, done, started, len(cases), last))
    return out
