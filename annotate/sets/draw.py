"""Seeded sampling shared by the set draws (seed 002 and 003): round-robin and case codes.

Both `annotate.sets.audit.create_set` and `annotate.sets.robustness.create_robustness_set` draw
with equal allocation over sorted strata (`round_robin`) and give each drawn case a
random-looking code from the set's seeded generator (`case_code`).
"""

from __future__ import annotations

import random
from collections import defaultdict

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
