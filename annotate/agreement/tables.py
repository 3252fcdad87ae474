"""Inter-rater agreement per label field and stratum, and progress, read from the label log.

Coordinator-side only: nothing here is reachable from a rater's session. The statistics of
one table (kappa, its CI, AC1, the undefined and degenerate states) are in
`annotate.agreement.kappa`; this module reads the labels and builds the tables.

The label log is read once per recomputation, never once per table: `LabelLog`
(`annotate.agreement.label_log`) folds the append-only `label_events` of a set into every rater's
current labels, progress and the pair's confusion tables; kept between calls (the
coordinator screen keeps one) it reads only the events added since and updates only the
cases they touch.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import sqlite_utils

from annotate.agreement.kappa import (
    Agreement,
    from_pairs,
    from_table,
)
from annotate.agreement.label_log import (
    STRATUM_DIMENSIONS,
    LabelLog,
    SetCase,
    set_cases,
    stratum_matches,
    table_categories,
    table_keys,
)
from annotate.codebook import AGREEMENT_FIELDS, agreement_fields, binary_categories
from annotate.codebook import binary as binary_value
from annotate.codebook import field as field_spec
from store.errors import UserError


def _log(db: sqlite_utils.Database, set_id: int, log: LabelLog | None) -> LabelLog:
    if log is None or log.set_id != set_id:
        log = LabelLog(set_id)
    log.refresh(db)
    return log


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
    from annotate.sets.raters import named_raters

    return named_raters(db, set_id)


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
                    strata: Sequence[str | None], fields: tuple[str, ...] = AGREEMENT_FIELDS,
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
                                              if stratum_matches(case.stratum, s)]
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
    from annotate.sets.annotation_set import get_set

    if field not in AGREEMENT_FIELDS:
        raise UserError(f"field: expected one of {', '.join(AGREEMENT_FIELDS)}, got {field!r}")
    the_set = get_set(db, set_name)
    stratum_matches("||", stratum)  # a malformed filter is an error even with no labels
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
    from annotate.sets.annotation_set import get_set

    if dimension not in STRATUM_DIMENSIONS:
        raise UserError(f"by: expected one of {', '.join(STRATUM_DIMENSIONS)}, got {dimension!r}")
    position = STRATUM_DIMENSIONS.index(dimension)
    return sorted({key.split("|")[position] for key in get_set(db, set_name).strata})


def stratum_filters(db: sqlite_utils.Database, log: LabelLog, by: str | None,
                    ) -> list[str | None]:
    """None (every case), then 'by=value' for each value of the dimension in the set."""
    if by is None:
        return [None]
    if by not in STRATUM_DIMENSIONS:
        raise UserError(f"by: expected one of {', '.join(STRATUM_DIMENSIONS)}, got {by!r}")
    return [None, *(f"{by}={value}" for value in log.stratum_values(db, by))]


def log_agreements(db: sqlite_utils.Database, log: LabelLog,
                   pair: tuple[tuple[int, str], tuple[int, str]] | None,
                   strata: Sequence[str | None]) -> list[Agreement]:
    """Every (stratum, field, form) agreement of a refreshed `log` (order as `all_agreements`).

    The counts are the log's running tables (`PairTables`); a table's statistics are
    computed again only when its counts differ from those they were last computed on, so
    after one new label only the tables that label changed are: the cost of a
    recomputation does not grow with the labels already stored.
    """
    fields = log.fields or agreement_fields(log.cases(db))
    if pair is None:
        return agreements_from([], {}, None, strata, fields)
    keys = table_keys(fields)
    tables = log.tables(pair, keys)  # kept current case by case as events are folded
    (_, a_name), (_, b_name) = pair
    out = []
    for stratum in strata:
        for key in keys:
            counts = tables.table(key, stratum)
            kept = tables.memo.get((key, stratum))
            if not (isinstance(kept, Agreement) and kept.rater_a == a_name
                    and kept.rater_b == b_name
                    and kept.confusion == tuple(tuple(row) for row in counts)):
                kept = tables.memo[(key, stratum)] = from_table(
                    counts, table_categories(key), field=key[0], binary=key[1],
                    stratum=stratum, rater_a=a_name, rater_b=b_name)
            out.append(kept)
    return out


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
    from annotate.sets.annotation_set import set_id_of

    set_id = set_id_of(db, set_name)
    if by is not None and by not in STRATUM_DIMENSIONS:
        raise UserError(f"by: expected one of {', '.join(STRATUM_DIMENSIONS)}, got {by!r}")
    pair = rater_pair(db, set_id, raters)
    log = _log(db, set_id, log)
    return log_agreements(db, log, pair, stratum_filters(db, log, by))


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

    Raters are those with an order in the set or an event in it (never a join of orders
    to events: `log_progress`). `log` as for `all_agreements`.
    """
    from annotate.sets.annotation_set import set_id_of

    set_id = set_id_of(db, set_name)
    return log_progress(db, set_id, _log(db, set_id, log))


def log_progress(db: sqlite_utils.Database, set_id: int,
                 log: LabelLog) -> list[RaterProgress]:
    """`progress` from a refreshed `log`, which keeps each rater's started and completed
    cases as events are folded (nothing here reads a label). The raters: those with an
    order in the set (one key lookup each) or an event in it (the log knows who has: an
    EXISTS over events would walk all of a rater's events in other sets)."""
    total = len(log.cases(db))
    out = []
    for person_id, name, ordered in db.execute(
            "SELECT p.id, p.name, EXISTS (SELECT 1 FROM annotation_orders o WHERE "
            "o.set_id = ? AND o.person_id = p.id) FROM people p WHERE p.role = 'rater' "
            "ORDER BY p.name", [set_id]):
        if not ordered and person_id not in log.last_label_at:
            continue
        out.append(RaterProgress(name, len(log.done.get(person_id, ())),
                                 len(log.started.get(person_id, ())), total,
                                 log.last_label_at.get(person_id)))
    return out
