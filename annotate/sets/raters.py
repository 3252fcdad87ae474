"""A set's two named raters: naming them (which seals the set in the record), reading them.

Only the two raters a coordinator names may label a set, and agreement always compares
them. Naming them (`name_raters`, at creation or later with
`annotate.sets.annotation_set.assign_raters`) records the set, its raters' keys and its
cases in the signed record (`annotate/trust/record.py`).
"""

from __future__ import annotations

import sqlite3

import sqlite_utils

from annotate.trust import record
from annotate.trust.identity import Person
from store.errors import NotFound, UserError


def name_raters(conn: sqlite3.Connection, set_id: int, set_name: str,
                raters: tuple[str, str], coordinator: Person) -> None:
    """Store the set's two raters and seal the set in the signed record (in a transaction)."""
    if len(raters) != 2 or raters[0] == raters[1]:
        raise UserError(f"raters: expected two different rater names, got {list(raters)}")
    ids = []
    for rater in raters:
        row = conn.execute("SELECT id, role, public_key FROM people WHERE name = ?",
                           [rater]).fetchone()
        if row is None:
            raise NotFound(f"raters: no rater named {rater!r} (register with `paw raters add`)")
        if row[1] != "rater":
            raise UserError(f"raters: {rater} is a {row[1]}, not a rater")
        if row[2] is None:
            raise UserError(f"raters: {rater} has no signing key yet (registered by an older "
                            "PAW: they sign in once, e.g. `paw annotate --rater "
                            f"{rater}`, which makes it)")
        problem = record.check_person(conn, int(row[0]))
        if problem:
            raise UserError(f"raters: {rater}: {problem}")
        ids.append(int(row[0]))
    conn.execute("UPDATE annotation_sets SET rater_a_id = ?, rater_b_id = ?, raters_named_by = ? "
                 "WHERE id = ?", [ids[0], ids[1], coordinator.id, set_id])
    record.append(conn, "set", "annotation_sets", set_id, record.set_content(conn, set_id),
                  coordinator)


def named_raters(db: sqlite_utils.Database, set_id: int,
                 ) -> tuple[tuple[int, str], tuple[int, str]] | None:
    """((id, name), (id, name)) of the set's two raters, or None if not named yet."""
    row = db.execute(
        "SELECT a.id, a.name, b.id, b.name FROM annotation_sets s "
        "JOIN people a ON a.id = s.rater_a_id JOIN people b ON b.id = s.rater_b_id "
        "WHERE s.id = ?", [set_id]).fetchone()
    return None if row is None else ((row[0], row[1]), (row[2], row[3]))


def require_named_rater(db: sqlite_utils.Database, set_id: int, person: Person) -> None:
    """Refuse anyone but the set's two named raters.

    Raises:
        UserError: the set names no raters yet, or `person` is not one of them.
    """
    pair = named_raters(db, set_id)
    name = db.execute("SELECT name FROM annotation_sets WHERE id = ?", [set_id]).fetchone()[0]
    if pair is None:
        raise UserError(f"set {name!r}: no raters named yet (a coordinator names them: `paw "
                        f"annotate assign --set {name} --raters A,B --coordinator C`)")
    if person.id not in (pair[0][0], pair[1][0]):
        raise UserError(f"{person.name}: not one of the two raters of set {name!r} "
                        f"({pair[0][1]}, {pair[1][1]})")
