"""Inter-rater agreement per label field and stratum, and progress, read from the label log.

Coordinator-side only: nothing here is reachable from a rater's session. The statistics of
one table (kappa, its CI, AC1, the undefined and degenerate states) are in
`annotate.kappa`; this module reads the labels and builds the tables.

The label log is read once per recomputation, never once per table: `LabelLog` folds the
append-only `label_events` of a set into every rater's current labels and, when kept
between calls (the coordinator screen keeps one), `refresh` reads only the events added
since. Event ids are assigned under the write lock in commit order, so "id greater than
the last one seen" is exactly what is new.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import sqlite_utils

from annotate.codebook import (
    AGREEMENT_FIELDS,
    agreement_fields,
    applicable_fields,
    binary_categories,
)
from annotate.codebook import binary as binary_value
from annotate.codebook import field as field_spec
from annotate.kappa import (
    LANDIS_KOCH,
    Agreement,
    from_pairs,
    from_table,
    gwet_ac1,
    landis_koch,
    landis_koch_legend,
)
from store.errors import UserError

__all__ = [
    "LANDIS_KOCH", "STRATUM_DIMENSIONS", "Agreement", "LabelLog", "RaterProgress",
    "agreement_table", "all_agreements", "from_pairs", "from_table", "gwet_ac1",
    "landis_koch", "landis_koch_legend", "progress", "rater_pair", "set_raters",
    "strata_values",
]

STRATUM_DIMENSIONS: tuple[str, ...] = ("family", "dataset", "model")
"""Components of a case's stratum key 'family|dataset|model', in order."""


@dataclass(frozen=True)
class SetCase:
    """One case of a set as the coordinator's computations need it."""

    id: int
    code: str
    stratum: str
    ask_harm: int
    ask_chain_registration: int


class LabelLog:
    """Every rater's current labels in one set, folded from the append-only label log.

    Args:
        set_id: the annotation set.
    """

    def __init__(self, set_id: int) -> None:
        self.set_id = set_id
        """The set whose events are folded."""
        self.last_id = 0
        """Id of the newest event folded in."""
        self.last_label_at: dict[int, str] = {}
        """person id -> creation time of their newest event in the set."""
        self.events_per_person: dict[int, int] = {}
        """person id -> events folded (a cheap activity count)."""
        self._raw: dict[tuple[int, int], dict[str, str | None]] = {}
        self._derived: dict[tuple[int, int], dict[str, str]] = {}
        self._cases: list[SetCase] | None = None
        self._by_id: dict[int, SetCase] = {}
        self.fields: tuple[str, ...] | None = None
        """The set's agreement fields (`codebook.agreement_fields`), once cases are read."""
        self.started: dict[int, set[int]] = {}
        """person id -> ids of the cases they have a current label on."""
        self.done: dict[int, set[int]] = {}
        """person id -> ids of the cases with every asked field labelled (note excepted)."""

    def cases(self, db: sqlite_utils.Database) -> list[SetCase]:
        """The set's cases, read once (a set's case list never changes after creation)."""
        if self._cases is None:
            from annotate.codebook import agreement_fields

            self._cases = set_cases(db, self.set_id)
            self._by_id = {case.id: case for case in self._cases}
            self.fields = agreement_fields(self._cases)
        return self._cases

    def refresh(self, db: sqlite_utils.Database) -> int:
        """Fold in the events added since the last call; returns how many there were."""
        from annotate.events import _derive

        touched: set[tuple[int, int]] = set()
        count = 0
        for event_id, case_id, person_id, name, value, created in db.execute(
                "SELECT e.id, e.case_id, e.person_id, e.field, e.value, e.created_at "
                "FROM label_events e JOIN annotation_cases c ON c.id = e.case_id "
                "WHERE c.set_id = ? AND e.id > ? ORDER BY e.id", [self.set_id, self.last_id]):
            key = (case_id, person_id)
            self._raw.setdefault(key, {})[name] = value
            touched.add(key)
            self.last_id = event_id
            if created > self.last_label_at.get(person_id, ""):
                self.last_label_at[person_id] = created
            self.events_per_person[person_id] = self.events_per_person.get(person_id, 0) + 1
            count += 1
        self.cases(db)
        for key in touched:  # the same rule as events.all_current_labels, per touched pair
            derived = _derive(self._raw[key])
            case_id, person_id = key
            started = self.started.setdefault(person_id, set())
            done = self.done.setdefault(person_id, set())
            if derived:
                self._derived[key] = derived
                started.add(case_id)
            else:
                self._derived.pop(key, None)
                started.discard(case_id)
            case = self._by_id.get(case_id)
            needed = [] if case is None else [
                f for f in applicable_fields(case, derived) if f != "note"]
            if derived and case is not None and all(f in derived for f in needed):
                done.add(case_id)
            else:
                done.discard(case_id)
        return count

    @property
    def labels(self) -> dict[tuple[int, int], dict[str, str]]:
        """(case_id, person_id) -> field -> current value (cleared fields absent)."""
        return self._derived


def _log(db: sqlite_utils.Database, set_id: int, log: LabelLog | None) -> LabelLog:
    if log is None or log.set_id != set_id:
        log = LabelLog(set_id)
    log.refresh(db)
    return log


def set_cases(db: sqlite_utils.Database, set_id: int) -> list[SetCase]:
    """Every case of a set, by id."""
    return [SetCase(*row) for row in db.execute(
        "SELECT id, code, stratum, ask_harm, ask_chain_registration FROM annotation_cases "
        "WHERE set_id = ? ORDER BY id", [set_id])]


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


def _named_pair(db: sqlite_utils.Database, set_id: int,
                ) -> tuple[tuple[int, str], tuple[int, str]] | None:
    """The two raters named when the set was created (schema m005), if any."""
    columns = {r[1] for r in db.execute("PRAGMA table_info(annotation_sets)")}
    if "rater_a_id" not in columns:
        return None
    row = db.execute(
        "SELECT a.id, a.name, b.id, b.name FROM annotation_sets s "
        "JOIN people a ON a.id = s.rater_a_id JOIN people b ON b.id = s.rater_b_id "
        "WHERE s.id = ?", [set_id]).fetchone()
    return None if row is None else ((row[0], row[1]), (row[2], row[3]))


def rater_pair(db: sqlite_utils.Database, set_id: int, raters: tuple[str, str] | None = None,
               ) -> tuple[tuple[int, str], tuple[int, str]] | None:
    """The two raters compared: ((id, name) of A, (id, name) of B), or None if not two.

    Default: the two raters named when the set was created (rater A = rows of the
    confusion); never "whoever labelled most": a set drawn without raters (PAW 0.1) has
    no pair until a coordinator names it (`paw annotate assign`), so None.
    """
    named = _named_pair(db, set_id)
    if raters is None and named is not None:
        return named
    known = set_raters(db, set_id)
    if raters is not None:
        by_name = {name: (pid, name) for pid, name in known}
        if named is not None:
            by_name.update({name: (pid, name) for pid, name in named})
        if raters[0] not in by_name or raters[1] not in by_name:
            return None
        return by_name[raters[0]], by_name[raters[1]]
    return None


_FORMS = (False, True)  # the full field, then its binary collapse


def agreements_from(cases: Iterable[SetCase], labels: dict[tuple[int, int], dict[str, str]],
                    pair: tuple[tuple[int, str], tuple[int, str]] | None,
                    strata: list[str | None], fields: tuple[str, ...] = AGREEMENT_FIELDS,
                    forms: tuple[bool, ...] = _FORMS) -> list[Agreement]:
    """Every (stratum, field, form) agreement table from labels already in memory.

    One pass over the cases fills every table. Output order: per stratum (in the order
    given), per field, the full table then the binary one (for fields that have one).
    """
    keys = [(name, binary) for name in fields for binary in forms
            if not binary or field_spec(name).binary_positive is not None]
    categories = {(name, binary): binary_categories(name) if binary
                  else field_spec(name).categories for name, binary in keys}
    if pair is None:
        return [replace(from_pairs([], categories[(name, binary)], field=name, binary=binary,
                                   stratum=stratum, rater_a="?", rater_b="?"),
                        reason="fewer than two raters have labelled this set yet")
                for stratum in strata for name, binary in keys]
    (a_id, a_name), (b_id, b_name) = pair
    index = {key: {c: i for i, c in enumerate(cats)} for key, cats in categories.items()}
    tables = {(stratum, name, binary): [[0] * len(categories[(name, binary)])
                                        for _ in categories[(name, binary)]]
              for stratum in strata for name, binary in keys}
    forms_of = {name: [binary for n, binary in keys if n == name] for name in fields}
    matches: dict[str, list[str | None]] = {}
    empty: dict[str, str] = {}
    for case in cases:
        la = labels.get((case.id, a_id), empty)
        lb = labels.get((case.id, b_id), empty)
        if not la or not lb:
            continue
        wanted = matches.get(case.stratum)
        if wanted is None:
            wanted = matches[case.stratum] = [s for s in strata
                                              if _stratum_matches(case.stratum, s)]
        for name in fields:
            va, vb = la.get(name), lb.get(name)
            if va is None or vb is None:
                continue
            for binary in forms_of[name]:
                x, y = (binary_value(name, va), binary_value(name, vb)) if binary else (va, vb)
                if x is None or y is None:
                    continue
                i, j = index[(name, binary)].get(x), index[(name, binary)].get(y)
                if i is None or j is None:
                    raise UserError(f"{name}: value outside {categories[(name, binary)]}: "
                                    f"{(x, y)} (case {case.code})")
                for stratum in wanted:
                    tables[(stratum, name, binary)][i][j] += 1
    return [from_table(tables[(stratum, name, binary)], categories[(name, binary)],
                       field=name, binary=binary, stratum=stratum, rater_a=a_name,
                       rater_b=b_name)
            for stratum in strata for name, binary in keys]


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
        raters: the two rater names (default: the set's named pair).

    Returns:
        An `Agreement`, with state 'undefined' (and a reason) when kappa cannot be computed.
    """
    from annotate.sets import get_set

    if field not in AGREEMENT_FIELDS:
        raise UserError(f"field: expected one of {', '.join(AGREEMENT_FIELDS)}, got {field!r}")
    the_set = get_set(db, set_name)
    _stratum_matches("||", stratum)  # a malformed filter is an error even with no labels
    pair = rater_pair(db, the_set.id, raters)
    if binary and field_spec(field).binary_positive is None:
        raise UserError(f"{field}: has no binary form")
    if pair is None and raters is not None:
        result = agreements_from([], {}, None, [stratum], (field,), (binary,))[0]
        return replace(result, rater_a=raters[0], rater_b=raters[1])
    labels = _log(db, the_set.id, None).labels if pair is not None else {}
    return agreements_from(set_cases(db, the_set.id), labels, pair, [stratum], (field,),
                           (binary,))[0]


def strata_values(db: sqlite_utils.Database, set_name: str, dimension: str) -> list[str]:
    """Distinct values of one stratum dimension ('family', 'dataset', 'model') in a set."""
    from annotate.sets import get_set

    if dimension not in STRATUM_DIMENSIONS:
        raise UserError(f"by: expected one of {', '.join(STRATUM_DIMENSIONS)}, got {dimension!r}")
    position = STRATUM_DIMENSIONS.index(dimension)
    return sorted({key.split("|")[position] for key in get_set(db, set_name).strata})


def all_agreements(db: sqlite_utils.Database, set_name: str, by: str | None = None,
                   raters: tuple[str, str] | None = None, log: LabelLog | None = None,
                   ) -> list[Agreement]:
    """Full and binary agreement for every categorical field (coordinator screen, CLI).

    Args:
        db: the store.
        set_name: the annotation set.
        by: also break down by one stratum dimension ('family', 'dataset', 'model').
        raters: the two rater names (default: the set's named pair).
        log: a `LabelLog` kept from an earlier call, refreshed here with only the new
            events (None: read the whole log once).

    Returns:
        For each field in `AGREEMENT_FIELDS`: the full table then the binary one (if the
        field has one), over all cases; then (if `by`) the same per value of that dimension.
    """
    from annotate.sets import get_set

    the_set = get_set(db, set_name)
    strata: list[str | None] = [None]
    if by is not None:
        strata += [f"{by}={value}" for value in strata_values(db, set_name, by)]
    pair = rater_pair(db, the_set.id, raters)
    log = _log(db, the_set.id, log)
    cases = log.cases(db)
    return agreements_from(cases, log.labels, pair, strata, log.fields or agreement_fields(cases))


@dataclass(frozen=True)
class RaterProgress:
    """How far one rater is through a set (coordinator screen)."""

    name: str
    done: int
    started: int
    total: int
    last_label_at: str | None


def progress(db: sqlite_utils.Database, set_name: str,
             log: LabelLog | None = None) -> list[RaterProgress]:
    """Per rater: cases with every asked field labelled (note excepted), cases touched.

    Raters are those with an order in the set or an event in it (EXISTS, never a join of
    orders to events). `log` as for `all_agreements`.
    """
    from annotate.sets import get_set

    the_set = get_set(db, set_name)
    labels = _log(db, the_set.id, log)
    total = len(labels.cases(db))
    out = []
    for person_id, name in db.execute(
            "SELECT p.id, p.name FROM people p WHERE p.role = 'rater' AND ("
            "EXISTS (SELECT 1 FROM annotation_orders o WHERE o.set_id = ? "
            "AND o.person_id = p.id) OR EXISTS (SELECT 1 FROM label_events e "
            "JOIN annotation_cases c ON c.id = e.case_id WHERE c.set_id = ? "
            "AND e.person_id = p.id)) ORDER BY p.name", [the_set.id, the_set.id]):
        # `LabelLog` keeps each rater's started and completed cases as events are folded.
        out.append(RaterProgress(name, len(labels.done.get(person_id, ())),
                                 len(labels.started.get(person_id, ())), total,
                                 labels.last_label_at.get(person_id)))
    return out
