"""What the coordinator screen shows, computed off the UI thread from its own connection.

No textual here: the worker calls `compute_report`, the screen only draws the result.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlite_utils import Database

    from annotate.agreement.kappa import Agreement
    from annotate.agreement.label_log import LabelLog
    from annotate.agreement.tables import RaterProgress

STRATUM_DIMENSIONS: tuple[str, ...] = ("family", "dataset", "model")
"""Dimensions the per-stratum table cycles through (`b` on the coordinator screen)."""


@dataclass(frozen=True)
class CoordinatorReport:
    """One recomputation of progress and agreement for a set.

    Attributes:
        set_name: the annotation set.
        progress: per rater, labelled / started / total.
        overall: per field, the full and the binary agreement over all cases.
        by_stratum: the same per value of `dimension` (stratum 'dimension=value').
        dimension: the stratum dimension of `by_stratum`.
        fingerprint: what the store looked like (latest event id, counts); an unchanged
            fingerprint means nothing new to compute.
        computed_at: UTC time of the recomputation.
        watched: with a watched folder of rater files, one line per file refused by the
            merge (empty when every file merged).
        kappa_over_labels: (field, binary) -> κ after the first n paired labels, n = 1..N
            (`annotate.agreement.kappa_series`; the last is the live κ of `overall`); None when the
            recomputation left it out (the screen asks for it only while its plot shows).
    """

    set_name: str
    progress: tuple[RaterProgress, ...]
    overall: tuple[Agreement, ...]
    by_stratum: tuple[Agreement, ...]
    dimension: str
    fingerprint: tuple[int, ...]
    computed_at: str
    watched: tuple[str, ...] = ()
    kappa_over_labels: dict[tuple[str, bool], tuple[float | None, ...]] | None = \
        field(default_factory=dict)

    def overall_for(self, key: str) -> Agreement | None:
        """The overall agreement row with key '<field>|full' or '<field>|binary'."""
        field, _, form = key.partition("|")
        return next((a for a in self.overall
                     if a.field == field and a.binary == (form == "binary")), None)

    def series_for(self, key: str) -> tuple[float | None, ...] | None:
        """κ over paired labels of one '<field>|full' / '<field>|binary' key (None: not
        computed in this recomputation)."""
        if self.kappa_over_labels is None:
            return None
        name, _, form = key.partition("|")
        return self.kappa_over_labels.get((name, form == "binary"), ())

    def strata_for(self, key: str) -> list[Agreement]:
        """Per-stratum rows of one (field, form) key."""
        field, _, form = key.partition("|")
        return [a for a in self.by_stratum if a.field == field and a.binary == (form == "binary")]


@dataclass
class ReportCache:
    """What one coordinator screen keeps between recomputations: the set's label log,
    folded so far, and the workers' own connection. Each recomputation reads only the
    events added since the last one."""

    log: LabelLog | None = None
    """The folded label log (None until the first recomputation)."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Held while a worker refreshes and reads `log` (a cancelled worker may still run)."""
    db: Database | None = None
    """The recomputations' connection (never the UI thread's), opened by the first and
    kept: an open runs the schema and integrity checks, and `quick_check` of the whole
    file whenever a checkpoint has grown it — a cost that grows with the store. In
    autocommit mode each read sees every label committed since, by any process."""
    db_path: str | None = None
    """The file `db` is open on."""

    def connection(self, db_path: str) -> Database:
        """The kept connection to `db_path` (opened on first use, or when the file changes)."""
        from store.db import open_db

        if self.db is None or self.db_path != db_path:
            self.close()
            self.db, self.db_path = open_db(db_path), db_path
        return self.db

    retired: bool = False
    """Set by `release` while a worker held the connection: that worker closes it."""

    def close(self) -> None:
        """Close the kept connection (a later recomputation reopens it)."""
        if self.db is not None:
            self.db.conn.close()
        self.db = self.db_path = None

    def release(self) -> None:
        """Close the kept connection when the screen goes: now, or — while a worker is
        using it — when that worker is done (the UI thread never waits for it)."""
        if self.lock.acquire(blocking=False):
            try:
                self.close()
            finally:
                self.lock.release()
        else:
            self.retired = True


def fingerprint(db, set_name: str) -> tuple[int, ...]:
    """Cheap summary that changes whenever a label, rater order or person is added.

    Orders are only ever inserted (`rater_queue`), so their newest rowid says when one
    was added, read off the key's end like the newest event; a COUNT would walk them all.
    """
    row = db.execute(
        "SELECT (SELECT COALESCE(MAX(id), 0) FROM label_events), "
        "(SELECT COALESCE(MAX(rowid), 0) FROM annotation_orders), "
        "(SELECT COUNT(*) FROM people)").fetchone()
    return tuple(int(v) for v in row)


def compute_report(db_path: str, set_name: str, dimension: str,
                   previous: tuple[int, ...] | None = None,
                   cache: ReportCache | None = None, *, watch: str | None = None,
                   coordinator=None, series: bool = True) -> CoordinatorReport | None:
    """Progress and agreement for a set, from the workers' own connection.

    The connection is the cache's (`ReportCache.connection`: opened once, kept between
    recomputations, never the UI thread's), or without a cache one opened and closed
    here; in autocommit mode it sees every label committed by other processes.

    Args:
        db_path: the store.
        set_name: the annotation set.
        dimension: 'family', 'dataset' or 'model' for the per-stratum table.
        previous: the fingerprint of the last report; if nothing changed, returns None.
        cache: the screen's `ReportCache`; with it only new label events are read.
        watch: a folder of rater files to merge first (`annotate.raterfile.merge`), so
            agreement stays live without a shared database.
        coordinator: the signed-in coordinator who merges them.
        series: also compute κ over paired labels of every table (the `k` plot); the
            coordinator screen asks only while the plot is shown — the series has a point
            per paired label, so its cost grows with them (one vectorized pass).

    Returns:
        The report, or None when the store is unchanged since `previous`.
    """
    from annotate.agreement.kappa_series import kappa_series
    from annotate.agreement.label_log import LabelLog, table_keys
    from annotate.agreement.tables import (
        log_agreements,
        log_progress,
        rater_pair,
        stratum_filters,
    )
    from annotate.sets.annotation_set import set_id_of
    from store.db import utcnow

    kept = cache is not None
    cache = cache or ReportCache()
    with cache.lock:
        db = cache.connection(db_path)
        try:
            refused: tuple[str, ...] = ()
            if watch is not None and coordinator is not None:
                from annotate.raterfile.merge import merge_folder

                refused = tuple(r for r in merge_folder(db, watch, coordinator, set_name)
                                if isinstance(r, str))
            seen = fingerprint(db, set_name)
            if previous is not None and seen == previous:
                return None
            # Nothing here reads more than the new events and the tables they changed:
            # the set's id (not its case counts), one refresh of the kept log, the
            # running tables (`log_agreements`) and the progress it keeps.
            set_id = set_id_of(db, set_name)
            if cache.log is None or cache.log.set_id != set_id:
                cache.log = LabelLog(set_id)
            log = cache.log
            log.refresh(db)
            pair = rater_pair(db, set_id)
            rows = log_agreements(db, log, pair, stratum_filters(db, log, dimension))
            rater_progress = tuple(log_progress(db, set_id, log))
            kappas = kappa_series(db, log, pair, table_keys(log.fields or ())) \
                if series else None
        except BaseException:
            cache.close()  # the next recomputation starts from a new connection
            raise
        finally:
            if not kept or cache.retired:
                cache.close()
                cache.retired = False
        return CoordinatorReport(
            set_name=set_name, progress=rater_progress,
            overall=tuple(a for a in rows if a.stratum is None),
            by_stratum=tuple(a for a in rows if a.stratum is not None),
            dimension=dimension, fingerprint=seen, computed_at=utcnow(), watched=refused,
            kappa_over_labels=kappas)
