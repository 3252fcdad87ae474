"""A set's label log folded into current labels, progress and confusion tables, incrementally.

Coordinator-side only. Events are append-only and their ids are assigned under the write
lock in commit order, so "id greater than the last one seen" is exactly what is new:
`LabelLog.refresh` reads only those events and updates, for each (case, rater) they touch,
the rater's current labels (the rule of `labels.derive_labels`), whether the rater has
started and finished the case, and the case's cell in every confusion table of the rater
pair (`PairTables`: running counts per full stratum and per filter, and each table's
cells in the order they became current). A recomputation after one new label therefore
costs the new event, one case's cells and the tables it changed — not a pass over every
label. The new events are found by a range of their id (`new_events_where`).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

import sqlite_utils

from annotate.codebook import applicable_fields, binary_categories
from annotate.codebook import binary as binary_value
from annotate.codebook import field as field_spec
from annotate.labels import derive_labels
from store.errors import UserError

STRATUM_DIMENSIONS: tuple[str, ...] = ("family", "dataset", "model")
"""Components of a case's stratum key 'family|dataset|model', in order."""

Pair = tuple[tuple[int, str], tuple[int, str]]
"""((id, name) of rater A, (id, name) of rater B)."""

TableKey = tuple[str, bool]
"""(field, binary form?)."""

Cell = tuple[TableKey, int, int, int]
"""A case's cell in one table: (table, row, column, id of the event that made it current)."""


@dataclass(frozen=True)
class SetCase:
    """One case of a set as the coordinator's computations need it."""

    id: int
    code: str
    stratum: str
    ask_harm: int
    ask_chain_registration: int


def set_cases(db: sqlite_utils.Database, set_id: int) -> list[SetCase]:
    """Every case of a set, by id."""
    return [SetCase(*row) for row in db.execute(
        "SELECT id, code, stratum, ask_harm, ask_chain_registration FROM annotation_cases "
        "WHERE set_id = ? ORDER BY id", [set_id])]


def stratum_matches(stratum: str, wanted: str | None) -> bool:
    """Does a case's full stratum key match a filter (None, 'dim=value' or a full key)?

    Raises:
        UserError: a malformed filter.
    """
    if wanted is None:
        return True
    if "=" in wanted:
        dim, _, value = wanted.partition("=")
        if dim not in STRATUM_DIMENSIONS:
            raise UserError(f"stratum: expected one of {', '.join(STRATUM_DIMENSIONS)}=VALUE "
                            f"or a full stratum, got {wanted!r}")
        parts = stratum.split("|")
        position = STRATUM_DIMENSIONS.index(dim)
        return len(parts) > position and parts[position] == value
    return stratum == wanted


def table_keys(fields: tuple[str, ...], forms: tuple[bool, ...] = (False, True),
               ) -> list[TableKey]:
    """(field, binary) of every table: the full field, and its binary where it has one."""
    return [(name, binary) for name in fields for binary in forms
            if not binary or field_spec(name).binary_positive is not None]


def table_categories(key: TableKey) -> tuple[str, ...]:
    """The categories (rows and columns) of one table."""
    name, binary = key
    return binary_categories(name) if binary else field_spec(name).categories


def stratum_filters(stratum: str) -> tuple[str | None, ...]:
    """Every filter a case's full stratum key 'family|dataset|model' answers to, short of
    the key itself: None (all cases) and 'dimension=value' per component it has."""
    parts = stratum.split("|")
    return (None, *(f"{dim}={value}" for dim, value in zip(STRATUM_DIMENSIONS, parts,
                                                          strict=False)))


def new_events_where(last_id: int) -> str:
    """The condition (parameters: set id, `last_id`) that `LabelLog.refresh` reads events
    with. After the first read the new events are found by a range of the events' own key:
    the `+` keeps SQLite off the set's case index, whose plan walks every event of the set
    (cProfile at 5,000 labels per rater, load ≈ 17: 21 ms a recomputation, growing with
    the labels)."""
    return "+c.set_id = ? AND e.id > ?" if last_id else "c.set_id = ? AND e.id > ?"


class PairTables:
    """The confusion tables of one rater pair, cell by cell: per full stratum key and per
    filter the coordinator shows (all cases, 'dimension=value'), each kept as running
    counts that a case's update changes in its own cells only; and per table its cells in
    the order they became current (`ordered`, the κ-over-labels series), kept sorted as
    cases change.

    Args:
        pair_ids: (rater A id, rater B id): rows and columns.
        keys: the tables kept.
    """

    def __init__(self, pair_ids: tuple[int, int], keys: list[TableKey]) -> None:
        self.pair_ids = pair_ids
        self.keys = keys
        self._index = {key: {c: i for i, c in enumerate(table_categories(key))}
                       for key in keys}
        # full stratum key, or a filter of `stratum_filters` -> table -> counts
        self._by_stratum: dict[str, dict[TableKey, list[list[int]]]] = {}
        self._by_filter: dict[str | None, dict[TableKey, list[list[int]]]] = {}
        self._cells: dict[int, tuple[str, list[Cell]]] = {}
        # table -> (when, row, column) of its cells, sorted by when (`ordered`)
        self._order: dict[TableKey, tuple[list[int], list[int], list[int]]] = {
            key: ([], [], []) for key in keys}
        self.memo: dict[tuple[TableKey, str | None], object] = {}
        """What a reader derived from a table, by (key, filter): `annotate.agreement.tables`
        keeps each table's `Agreement` here and computes it again only when the counts
        differ from those it was computed on (a new label changes a few tables)."""

    def _tables_of(self, stratum: str) -> list[dict[TableKey, list[list[int]]]]:
        return [self._by_stratum.setdefault(stratum, {}),
                *(self._by_filter.setdefault(f, {}) for f in stratum_filters(stratum))]

    def _add(self, stratum: str, cells: list[Cell], step: int) -> None:
        for tables in self._tables_of(stratum):
            for key, i, j, _ in cells:
                table = tables.get(key)
                if table is None:
                    size = len(self._index[key])
                    table = tables[key] = [[0] * size for _ in range(size)]
                table[i][j] += step
        for key, i, j, when in cells:
            whens, rows, cols = self._order[key]
            at = bisect_left(whens, when)
            if step > 0:
                whens.insert(at, when)
                rows.insert(at, i)
                cols.insert(at, j)
                continue
            # An event id belongs to one case, so `when` is unique in a table; without the
            # event ids (`update` called without them: every `when` 0) find the same cell.
            while (rows[at], cols[at]) != (i, j):
                at += 1
            del whens[at], rows[at], cols[at]

    def update(self, case: SetCase, la: dict[str, str] | None, lb: dict[str, str] | None,
               set_a: dict[str, int] | None = None, set_b: dict[str, int] | None = None,
               ) -> None:
        """Replace the case's cells by those of the raters' current labels `la`, `lb`;
        `set_a`, `set_b`: field -> id of the event that set each current value (a cell's
        place in `ordered` is the later of the two)."""
        old = self._cells.pop(case.id, None)
        if old is not None:
            self._add(old[0], old[1], -1)
        if not la or not lb:
            return
        cells = []
        for key in self.keys:
            name, binary = key
            va, vb = la.get(name), lb.get(name)
            if va is None or vb is None:
                continue
            if binary:
                va, vb = binary_value(name, va), binary_value(name, vb)
                if va is None or vb is None:
                    continue
            row, col = self._index[key].get(va), self._index[key].get(vb)
            if row is None or col is None:
                raise UserError(f"{name}: value outside {table_categories(key)}: "
                                f"{(va, vb)} (case {case.code}): the label log holds an "
                                "event PAW never writes; a coordinator should run `paw "
                                "verify --details`")
            when = max((set_a or {}).get(name, 0), (set_b or {}).get(name, 0))
            cells.append((key, row, col, when))
        self._add(case.stratum, cells, 1)
        self._cells[case.id] = (case.stratum, cells)

    def ordered(self, key: TableKey) -> tuple[list[int], list[int]]:
        """The table's (row indices, column indices) of its paired labels, in the order
        they became current (the later of the two raters' events: see
        `annotate.agreement.kappa_series`). The lists are the kept ones: read, never change."""
        _, rows, cols = self._order[key]
        return rows, cols

    def table(self, key: TableKey, stratum: str | None) -> list[list[int]]:
        """The counts of one table over the cases matching a stratum filter (None,
        'dimension=value' or a full stratum key): a copy of its running counts."""
        stratum_matches("||", stratum)  # a malformed filter is refused
        if stratum is not None and "=" not in stratum:
            kept = self._by_stratum.get(stratum, {}).get(key)
        else:
            kept = self._by_filter.get(stratum, {}).get(key)
        size = len(self._index[key])
        if kept is None:
            return [[0] * size for _ in range(size)]
        return [list(row) for row in kept]


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
        self.fields: tuple[str, ...] | None = None
        """The set's agreement fields (`codebook.agreement_fields`), once cases are read."""
        self.started: dict[int, set[int]] = {}
        """person id -> ids of the cases they have a current label on."""
        self.done: dict[int, set[int]] = {}
        """person id -> ids of the cases with every asked field labelled (note excepted)."""
        self.set_at: dict[tuple[int, int], dict[str, int]] = {}
        """(case_id, person_id) -> field -> id of the event that set its current value
        (the order of the κ-over-labels series, `annotate.agreement.kappa_series`)."""
        self._raw: dict[tuple[int, int], dict[str, str | None]] = {}
        self._derived: dict[tuple[int, int], dict[str, str]] = {}
        self._cases: list[SetCase] | None = None
        self._by_id: dict[int, SetCase] = {}
        self._tables: PairTables | None = None
        self._values: dict[str, list[str]] = {}

    def cases(self, db: sqlite_utils.Database) -> list[SetCase]:
        """The set's cases, read once (a set's case list never changes after creation)."""
        if self._cases is None:
            from annotate.codebook import agreement_fields

            self._cases = set_cases(db, self.set_id)
            self._by_id = {case.id: case for case in self._cases}
            self.fields = agreement_fields(self._cases)
        return self._cases

    def stratum_values(self, db: sqlite_utils.Database, dimension: str) -> list[str]:
        """Distinct values of one stratum dimension among the set's cases, sorted (read
        once per dimension, like the cases)."""
        if dimension not in self._values:
            position = STRATUM_DIMENSIONS.index(dimension)
            self._values[dimension] = sorted({parts[position] for parts in (
                case.stratum.split("|") for case in self.cases(db)) if len(parts) > position})
        return list(self._values[dimension])

    def refresh(self, db: sqlite_utils.Database) -> int:
        """Fold in the events added since the last call; returns how many there were."""
        self.cases(db)
        touched: set[tuple[int, int]] = set()
        count = 0
        from annotate.labels import opened_events

        where = new_events_where(self.last_id)
        for row in opened_events(db, where, [self.set_id, self.last_id]):
            event_id, case_id, person_id = row["id"], row["case_id"], row["person_id"]
            name, value, created = row["field"], row["value"], row["created_at"]
            key = (case_id, person_id)
            self._raw.setdefault(key, {})[name] = value
            self.set_at.setdefault(key, {})[name] = event_id
            touched.add(key)
            self.last_id = event_id
            if created > self.last_label_at.get(person_id, ""):
                self.last_label_at[person_id] = created
            count += 1
        for key in touched:  # the same rule as labels.all_current_labels, per touched pair
            derived = derive_labels(self._raw[key])
            case_id, person_id = key
            if derived:
                self._derived[key] = derived
            else:
                self._derived.pop(key, None)
            self._note_progress(case_id, person_id, derived)
        if self._tables is not None:
            a_id, b_id = self._tables.pair_ids
            for case_id in {case_id for case_id, _ in touched}:
                case = self._by_id.get(case_id)
                if case is not None:
                    self._tables.update(case, self._derived.get((case_id, a_id)),
                                        self._derived.get((case_id, b_id)),
                                        self.set_at.get((case_id, a_id)),
                                        self.set_at.get((case_id, b_id)))
        return count

    def _note_progress(self, case_id: int, person_id: int, derived: dict[str, str]) -> None:
        started = self.started.setdefault(person_id, set())
        done = self.done.setdefault(person_id, set())
        case = self._by_id.get(case_id)
        if not derived or case is None:
            started.discard(case_id)
            done.discard(case_id)
            return
        started.add(case_id)
        needed = [f for f in applicable_fields(case, derived) if f != "note"]
        if all(f in derived for f in needed):
            done.add(case_id)
        else:
            done.discard(case_id)

    @property
    def labels(self) -> dict[tuple[int, int], dict[str, str]]:
        """(case_id, person_id) -> field -> current value (cleared fields absent)."""
        return self._derived

    def tables(self, pair: Pair, keys: list[TableKey]) -> PairTables:
        """The pair's confusion tables, built on first use and kept current by `refresh`."""
        pair_ids = (pair[0][0], pair[1][0])
        if self._tables is None or self._tables.pair_ids != pair_ids or \
                self._tables.keys != keys:
            self._tables = PairTables(pair_ids, keys)
            a_id, b_id = pair_ids
            for case in self._cases or ():
                self._tables.update(case, self._derived.get((case.id, a_id)),
                                    self._derived.get((case.id, b_id)),
                                    self.set_at.get((case.id, a_id)),
                                    self.set_at.get((case.id, b_id)))
        return self._tables
