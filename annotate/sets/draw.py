"""What the set draws of seed 002 and seed 003 share: round-robin, case codes, the writing.

Both `annotate.sets.audit.create_set` and `annotate.sets.robustness.create_robustness_set`
draw with equal allocation over sorted strata (`round_robin`), then `write_set` stores the
drawn cases in one transaction, each under a random-looking code from the set's seeded
generator (`case_code`), and names the set's raters when they are given.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

import sqlite_utils

from annotate.codebook import CODEBOOK_VERSION
from annotate.sets.raters import name_raters
from annotate.trust.identity import Person
from store.db import dumps, transaction, utcnow

_CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"  # no 0/O, 1/I/L: read aloud safely
_CODE_LENGTH = 6


def round_robin(groups: dict[str, list[dict]], size: int, cap_key: str | None = None,
                cap: int | None = None, unique_key: str | None = None) -> list[dict]:
    """Take one unit per group in turn (groups in sorted order) until `size` are taken."""
    taken: list[dict] = []
    per_cap: dict[str, int] = defaultdict(int)
    seen: set = set()
    queues = {k: list(v) for k, v in sorted(groups.items())}
    while len(taken) < size and any(queues.values()):
        for key in list(queues):
            queue = queues[key]
            while queue:
                unit = queue.pop(0)
                if unique_key is not None and unit[unique_key] in seen:
                    continue
                if cap is not None and cap_key is not None and per_cap[unit[cap_key]] >= cap:
                    queue.clear()  # this family is full: its other strata are too
                    break
                taken.append(unit)
                if cap_key is not None:
                    per_cap[unit[cap_key]] += 1
                if unique_key is not None:
                    seen.add(unit[unique_key])
                break
            if len(taken) >= size:
                break
        queues = {k: q for k, q in queues.items() if q}
    return taken


def case_code(rng: random.Random) -> str:
    """A random-looking case code (reveals nothing about the case's stratum)."""
    return "".join(rng.choice(_CODE_ALPHABET) for _ in range(_CODE_LENGTH))


def write_set(db: sqlite_utils.Database, *, name: str, audit_id: int, config: dict[str, Any],
              cases: list[dict], rng: random.Random, raters: tuple[str, str] | None,
              coordinator: Person | None) -> int:
    """Store a drawn set and its cases, in the order given, in one transaction.

    Args:
        db: the store.
        name: the set's name (checked by the caller).
        audit_id: the run it was drawn from.
        config: the draw's settings and counts (`annotation_sets.config_json`).
        cases: the drawn units: `variant_id`, `baseline_id`, `perturbed_id`, `stratum`, and
            `ask_harm` / `ask_chain` where the case asks them (a seed-003 case asks neither).
        rng: the draw's seeded generator, which then gives each case its code.
        raters: the two raters' names, named with `coordinator` in the same transaction.
        coordinator: the coordinator naming them (None with `raters` None).

    Returns:
        The new set's id.
    """
    used = {r[0] for r in db.execute("SELECT code FROM annotation_cases")}
    with transaction(db) as conn:
        set_id = conn.execute(
            "INSERT INTO annotation_sets (name, audit_id, config_json, codebook_version, "
            "created_at) VALUES (?, ?, ?, ?, ?)",
            [name, audit_id, dumps(config), CODEBOOK_VERSION, utcnow()]).lastrowid
        assert set_id is not None  # set by every INSERT
        for unit in cases:
            code = case_code(rng)
            while code in used:
                code = case_code(rng)
            used.add(code)
            conn.execute(
                "INSERT INTO annotation_cases (set_id, code, variant_id, baseline_generation_id, "
                "perturbed_generation_id, stratum, ask_harm, ask_chain_registration) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [set_id, code, unit["variant_id"], unit["baseline_id"], unit["perturbed_id"],
                 unit["stratum"], unit.get("ask_harm", 0), unit.get("ask_chain", 0)])
        if raters is not None and coordinator is not None:
            name_raters(conn, set_id, name, raters, coordinator)
    return set_id
