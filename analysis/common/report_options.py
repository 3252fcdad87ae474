"""A report builder's options: a frozen dataclass per paper, built from a mapping by name.

Each paper's `report.py` subclasses `ReportOptions` with its own fields and defaults; its
`build_report(db, ref, options)` takes an instance or a mapping (what `paw report` and the
UI pass through `workbench.kinds.build_run_report`), and `coerce` refuses a name the
builder does not have, so a misspelt option is an error rather than silently ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Self

from analysis.common.bootstrap import DEFAULT_SEED, N_BOOT
from store.errors import UserError


@dataclass(frozen=True)
class ReportOptions:
    """Options every report builder takes.

    Attributes:
        n_boot: bootstrap replicates of each CI (a paper may use another default).
        seed: bootstrap / permutation seed.
    """

    report: ClassVar[str] = "this report"
    """How the refusal of an unknown option names the report."""

    n_boot: int = N_BOOT
    seed: int = DEFAULT_SEED

    @classmethod
    def coerce(cls, given: ReportOptions | Mapping[str, Any] | None) -> Self:
        """These options from an instance, a mapping of field names, or None (defaults).

        Raises:
            UserError: a name that is not one of these options, or another report's options.
        """
        if given is None:
            return cls()
        if isinstance(given, cls):
            return given
        names = [f.name for f in fields(cls)]
        if isinstance(given, ReportOptions):
            raise UserError(f"report options: {type(given).__name__} are not options of "
                            f"{cls.report} (expected {cls.__name__})")
        unknown = [name for name in given if name not in names]
        if unknown:
            raise UserError(f"report option {unknown[0]!r}: not an option of {cls.report} "
                            f"(its options: {', '.join(names)})")
        return cls(**given)
