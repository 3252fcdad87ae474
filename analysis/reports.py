"""Which report a stored run gets: one builder per kind of planned work, looked up by kind.

`paw report`, the report files and the UI's statistics screen all call `build_run_report`;
a new kind of study adds one line to `BUILDERS` (a "module:function" string, imported only
when used, so `paw --help` stays fast) and nothing else changes.

Every builder has the signature `build(db, ref, *, n_boot, seed, **options) -> Report`
where `ref` is the run's name or id; options a builder does not know are ignored by it.
Its `Report.meta` carries at least `audit` (the run's name), `audit_id` and `kind`: the CLI
names the output file after `audit` and appends the clinician sections of `audit_id`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from analysis.common.bootstrap import DEFAULT_SEED

if TYPE_CHECKING:
    import sqlite_utils

    from analysis.common.document import Report

BUILDERS: dict[str, str] = {
    "audit": "analysis.audit.report:build_report",
    "run": "analysis.audit.report:build_report",
    "study": "analysis.counterfactual.report:build_report",
    "robustness": "analysis.robustness.report:build_report",
    "dbpa": "analysis.dbpa.report:build_report",
}
"""Report builder of each `audits.kind`."""


def builder_for(kind: str):
    """The report builder of a kind of run.

    Raises:
        UserError: no report is defined for that kind.
    """
    from store.errors import UserError

    target = BUILDERS.get(kind)
    if target is None:
        raise UserError(f"no report is defined for runs of kind {kind!r} "
                        f"(known: {', '.join(sorted(BUILDERS))})")
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def build_run_report(db: sqlite_utils.Database, ref: str | int | None = None, *,
                     kind: str | tuple[str, ...] | None = None, n_boot: int | None = None,
                     seed: int = DEFAULT_SEED, **options: Any) -> Report:
    """The report of a stored run, whatever its kind.

    Args:
        db: the store.
        ref: run name or id (None: the latest run, of `kind` if given).
        kind: restrict the lookup to these kinds (e.g. `paw report --study`).
        n_boot: bootstrap replicates (None: the kind's builder chooses, e.g. the paper's
            B = 1000 for the seed-000 bootstrap test, 200 for seed-002 CIs).
        seed: bootstrap / permutation seed.
        options: passed to the kind's builder.

    Raises:
        NotFound: no such run.
        UserError: the kind has no report.
    """
    from store.runs import find_run

    run = find_run(db, ref, kind)
    build = builder_for(run.kind)
    if n_boot is not None:
        options["n_boot"] = n_boot  # else the builder's own default (its paper's B)
    return build(db, run.id, seed=seed, **options)
