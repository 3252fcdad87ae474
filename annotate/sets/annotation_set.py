"""One annotation set as stored: the `AnnotationSet` record, finding a set by name, naming
its raters after the draw, and each rater's seeded order of its cases.

Every rater labels the same cases; each gets their own seeded order (seed: set name, set
seed, rater name), stored in `annotation_orders` the first time they ask, so it survives
restarts. A coordinator names the set's two raters (at creation, or later with
`assign_raters` for a set drawn without them): only they may label it, agreement always
compares them, and the naming seals the set in the signed record — its raters' keys, its
case list, each case's variant and generations, and a digest of every text the raters are
shown. The draws themselves: `annotate.sets.audit` (seed 002) and
`annotate.sets.robustness` (seed 003).
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

import sqlite_utils

from annotate.sets.cases import CaseView, views_in_order
from annotate.sets.raters import name_raters
from annotate.trust.identity import Person, require
from store.db import loads, transaction
from store.errors import NotFound, UserError


@dataclass(frozen=True)
class AnnotationSet:
    """A created annotation set (coordinator-facing: includes the strata)."""

    id: int
    name: str
    audit_id: int | None
    size: int
    seed: int
    codebook_version: str
    created_at: str
    strata: dict[str, int]
    n_harm: int
    n_chain: int
    unparsed: tuple[tuple[str, int], ...] = ()
    """Seed 003: per test, verdicts that did not parse (`annotate.sets.robustness`)."""
    n_unjudged_drawn: int = 0
    """Seed 003: drawn CFV cases whose judge verdict did not parse (class 'unjudged')."""
    merged: tuple[tuple[str, ...], ...] = ()
    """The operators of each drawn case that stands for several identical edits
    (`annotate.sets.audit.merge_identical`)."""


    def notes(self) -> list[str]:
        """What the draw merged or could not use, for `paw annotate create` to print."""
        lines = []
        if self.unparsed:
            counts = dict(self.unparsed)
            lines.append(
                f"judge verdicts that did not parse: CFV {counts.get('cfv', 0)} (drawn as "
                f"class 'unjudged': {self.n_unjudged_drawn} in this set; the judge's "
                f"plausible/limited are not compared there), direction "
                f"{counts.get('direction', 0)} and flags {counts.get('flags', 0)} (left out: "
                "nothing to confirm)")
        if self.merged:
            lines.append(f"merged identical edits: {len(self.merged)} case(s) each stand for "
                         f"{sum(len(m) for m in self.merged)} edits in all; its labels apply "
                         "to every one (docs/annotation.md, 'The sample')")
            lines += [f"  {' = '.join(operators)}" for operators in self.merged]
        return lines


def assign_raters(db: sqlite_utils.Database, coordinator: Person, set_name: str,
                  raters: tuple[str, str]) -> AnnotationSet:
    """Name the two raters of a set drawn without them (e.g. by PAW 0.1), sealing it.

    Raises:
        UserError: not a coordinator, bad raters, or the set already has its raters.
    """
    require(coordinator, "coordinator")
    the_set = get_set(db, set_name)
    with transaction(db) as conn:
        named = conn.execute("SELECT rater_a_id FROM annotation_sets WHERE id = ?",
                             [the_set.id]).fetchone()[0]
        if named is not None:
            raise UserError(f"set {set_name!r}: its two raters are already named")
        name_raters(conn, the_set.id, set_name, raters, coordinator)
    return get_set(db, set_name)


def get_set(db: sqlite_utils.Database, name: str) -> AnnotationSet:
    """The set called `name`.

    Raises:
        NotFound: no such set (the message lists the sets).
    """
    row = db.execute("SELECT id, name, audit_id, config_json, codebook_version, created_at "
                     "FROM annotation_sets WHERE name = ?", [name]).fetchone()
    if row is None:
        known = ", ".join(set_names(db)) or "none yet (try `paw annotate create`)"
        raise NotFound(f"set: no annotation set named {name!r}; known sets: {known}")
    config = loads(row[3]) or {}
    strata = {r[0]: r[1] for r in db.execute(
        "SELECT stratum, COUNT(*) FROM annotation_cases WHERE set_id = ? GROUP BY stratum "
        "ORDER BY stratum", [row[0]])}
    n_harm, n_chain = db.execute(
        "SELECT COALESCE(SUM(ask_harm), 0), COALESCE(SUM(ask_chain_registration), 0) "
        "FROM annotation_cases WHERE set_id = ?", [row[0]]).fetchone()
    return AnnotationSet(id=row[0], name=row[1], audit_id=row[2], size=sum(strata.values()),
                         seed=int(config.get("seed", 0)), codebook_version=row[4],
                         created_at=row[5], strata=strata, n_harm=int(n_harm),
                         n_chain=int(n_chain),
                         merged=tuple(tuple(m["operators"]) for m in config.get("merged", ())),
                         unparsed=tuple((str(k), int(v))
                                        for k, v in (config.get("unparsed") or {}).items()),
                         n_unjudged_drawn=int(config.get("n_unjudged_drawn", 0)))


def set_id_of(db: sqlite_utils.Database, name: str) -> int:
    """The id of the set called `name`, without counting its cases (`get_set` does).

    Raises:
        NotFound: no such set (the message lists the sets).
    """
    row = db.execute("SELECT id FROM annotation_sets WHERE name = ?", [name]).fetchone()
    return int(row[0]) if row is not None else get_set(db, name).id


def set_names(db: sqlite_utils.Database) -> list[str]:
    """Names of every annotation set, oldest first."""
    return [r[0] for r in db.execute("SELECT name FROM annotation_sets ORDER BY id")]


def resolve_set(db: sqlite_utils.Database, name: str | None) -> str:
    """`name`, or the only/newest set when None.

    Raises:
        NotFound: no sets at all, or no set called `name`.
    """
    if name is not None:
        return get_set(db, name).name
    names = set_names(db)
    if not names:
        raise NotFound("set: no annotation sets yet (create one with `paw annotate create`)")
    return names[-1]


def ensure_order(db: sqlite_utils.Database, the_set: AnnotationSet, person_id: int,
                 name: str) -> list[int]:
    """A person's seeded order of the set's cases (case ids), created if they have none yet
    (seed: set name, set seed, person name)."""
    have = db.execute("SELECT COUNT(*) FROM annotation_orders WHERE set_id = ? AND person_id = ?",
                      [the_set.id, person_id]).fetchone()[0]
    if have != the_set.size:
        _write_order(db, the_set, person_id, name)
    return [r[0] for r in db.execute(
        "SELECT case_id FROM annotation_orders WHERE set_id = ? AND person_id = ? "
        "ORDER BY position", [the_set.id, person_id])]


def _write_order(db: sqlite_utils.Database, the_set: AnnotationSet, person_id: int,
                 name: str) -> None:
    case_ids = [r[0] for r in db.execute(
        "SELECT id FROM annotation_cases WHERE set_id = ? ORDER BY id", [the_set.id])]
    digest = hashlib.sha256(f"{the_set.name}:{the_set.seed}:{name}".encode()).hexdigest()
    random.Random(digest).shuffle(case_ids)
    with transaction(db) as conn:
        # INSERT OR IGNORE: two processes of one rater racing here write the same order.
        conn.executemany(
            "INSERT OR IGNORE INTO annotation_orders (set_id, person_id, case_id, position) "
            "VALUES (?, ?, ?, ?)",
            [(the_set.id, person_id, case_id, pos) for pos, case_id in enumerate(case_ids)])


def rater_queue(db: sqlite_utils.Database, set_name: str, person: Person) -> list[CaseView]:
    """Every case of the set as blinded views, in `person`'s own seeded order.

    The order is created (and stored in `annotation_orders`) the first time a person asks,
    seeded by the set's seed and the person's name, so it survives restarts.

    Args:
        db: the store.
        set_name: the annotation set.
        person: an authenticated person.
    """
    require(person)
    the_set = get_set(db, set_name)
    ensure_order(db, the_set, person.id, person.name)
    return views_in_order(db, the_set.id, person)
