"""One engine per run (issue 36.2): the check every way of running work calls before it
starts (`run_staged` for every kind, `RunPlan.execute` for `paw run`)."""

from __future__ import annotations

from typing import Any

import sqlite_utils

from store.records import ModelRecord


def check_one_engine(db: sqlite_utils.Database, audit: Any, model: ModelRecord, engine: str,
                     allow_mixed: bool) -> None:
    """Refuse to go on with a run on another engine than the one that made its stored
    generations of `model` (issue 36.2), unless `allow_mixed`.

    Raises:
        UserError: names the run, the model, both engines and the option.
    """
    from analysis.common.engines import model_engines
    from store.errors import UserError

    recorded = model_engines(db, audit.id, model.id) - {engine}
    if recorded and not allow_mixed:
        raise UserError(
            f"run {audit.name!r}: model {model.name!r} was run on {', '.join(sorted(recorded))}"
            f"; this command would go on on {engine}. One run, one engine: use the same "
            "engine again (the same --servers pool, or none), or pass --allow-mixed-engines "
            "(every report of the run then states the mix per arm)")
