"""Every kind of run (`audits.kind`), registered once: its report, `paw report` flag, progress
blocks, resumer and `paw audits show` hints.

`paw report` (its `--<flag>` options and the builder it calls), `paw audits` (its `--kind`
choices and hints), the UI's Runs screen (blocks, resume, report hint) and its Statistics
screen all read `KINDS`; nothing else lists the kinds. Modules are named as strings
("module" or "module:function") and imported only when used, so `paw --help` stays fast and
this module imports no paper. A new kind adds one `register(KindSpec(...))` below (and, as
every kind of `audits` row, a member of `store.kinds.Kind` with a migration widening the
CHECK; `tests/test_kinds.py` checks the three agree).

Every resumer has the signature `resume(db, audit_id, *, engine, on_event, should_stop)` and
runs what the stored plan still misses (nothing, when it is complete); every report builder
`build(db, ref, options) -> Report`, where `options` is the builder's frozen options class
or a mapping of its field names (an unknown name is refused:
`analysis.common.report_options`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from store.kinds import Kind

if TYPE_CHECKING:
    import sqlite_utils

    from analysis.common.document import Report
    from workbench.engine import AuditEngine


@dataclass(frozen=True)
class KindSpec:
    """What the application knows about one kind of run.

    Attributes:
        name: the `audits.kind` value.
        report: the report builder, "module:function".
        report_flag: `paw report --<flag> REF` finds runs of this kind (kinds reported alike
            share a flag: an audit and a `paw run`).
        report_help: the flag's help in `paw report --help` (None: the flag is an earlier
            kind's, and so is its help).
        blocks: module whose `ROLE_BLOCK` (role -> progress block) and `BLOCKS` (their order)
            group the kind's job roles in progress views (None: each role is its own block).
        resume: the resumer, "module:function" (None: only the command that made the run
            resumes it).
        hints: more lines of `paw audits show`, with `{name}` (the run) and `{where}` (the
            ` --db PATH` of a non-default store) filled in.
    """

    name: str
    report: str
    report_flag: str
    report_help: str | None = None
    blocks: str | None = None
    resume: str | None = None
    hints: tuple[str, ...] = ()

    def report_line(self, name: str, where: str = "") -> str:
        """The command that writes a run's report: `paw report --<flag> NAME[ --db PATH]`."""
        return f"paw report --{self.report_flag} {name}{where}"

    def hint_lines(self, name: str, where: str = "") -> list[str]:
        """The kind's extra `paw audits show` lines for one run."""
        return [hint.format(name=name, where=where) for hint in self.hints]


KINDS: dict[str, KindSpec] = {}
"""The registry: every kind of run by its `audits.kind` value, in registration order (the
order of `paw audits --kind` choices and `paw report` flags)."""


def register(spec: KindSpec) -> KindSpec:
    """Register a kind of run (its name must not be registered yet).

    Raises:
        ValueError: the name is taken, or its flag has no help and no earlier kind's.
    """
    if spec.name in KINDS:
        raise ValueError(f"kind {spec.name!r} is registered already")
    if spec.report_help is None and spec.report_flag not in report_flags():
        raise ValueError(f"kind {spec.name!r}: --{spec.report_flag} needs a help text")
    KINDS[spec.name] = spec
    return spec


def kind_spec(kind: str) -> KindSpec:
    """The registration of a kind.

    Raises:
        UserError: no such kind is registered.
    """
    spec = KINDS.get(kind)
    if spec is None:
        from store.errors import UserError

        raise UserError(f"no kind of run {kind!r} is known here (known: {', '.join(KINDS)})")
    return spec


def report_flags() -> dict[str, str]:
    """`paw report`'s kind flags, each with its help, in registration order."""
    flags: dict[str, str] = {}
    for spec in KINDS.values():
        if spec.report_help is not None:
            flags.setdefault(spec.report_flag, spec.report_help)
    return flags


def kinds_of_flag(flag: str) -> tuple[str, ...]:
    """The kinds `paw report --<flag>` looks among."""
    return tuple(spec.name for spec in KINDS.values() if spec.report_flag == flag)


def _load(target: str) -> Callable[..., Any]:
    module, _, name = target.partition(":")
    function: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return function


def kind_blocks(kind: str) -> tuple[dict[str, str], tuple[str, ...]]:
    """(role -> block, block order) of a kind's planner (identity when unknown)."""
    spec = KINDS.get(kind)
    if spec is None or spec.blocks is None:
        return {}, ()
    try:
        module = importlib.import_module(spec.blocks)
    except ImportError:  # a kind whose package this install lacks: roles are shown as is
        return {}, ()
    return dict(getattr(module, "ROLE_BLOCK", {})), tuple(getattr(module, "BLOCKS", ()))


def can_resume(kind: str) -> bool:
    """Whether runs of `kind` can be resumed from the UI."""
    spec = KINDS.get(kind)
    return spec is not None and spec.resume is not None


def resume_run(db: sqlite_utils.Database, audit_id: int, kind: str, *, engine: AuditEngine,
               on_event: Callable[[Any], None] | None = None,
               should_stop: Callable[[], bool] | None = None) -> Any:
    """Continue a stored run of any kind.

    Raises:
        UserError: runs of that kind cannot be resumed here.
    """
    from store.errors import UserError

    spec = KINDS.get(kind)
    if spec is None or spec.resume is None:
        known = ", ".join(sorted(s.name for s in KINDS.values() if s.resume is not None))
        raise UserError(f"runs of kind {kind!r} cannot be resumed from here; run the command "
                        f"that created it again (known: {known})")
    resume = _load(spec.resume)
    return resume(db, audit_id, engine=engine, on_event=on_event, should_stop=should_stop)


def build_run_report(db: sqlite_utils.Database, ref: str | int | None = None, *,
                     kind: str | tuple[str, ...] | None = None, n_boot: int | None = None,
                     seed: int | None = None,
                     options: Mapping[str, Any] | None = None) -> Report:
    """The report of a stored run, whatever its kind: `paw report`, the report files and
    the UI's Statistics screen all come here.

    Args:
        db: the store.
        ref: run name or id (None: the latest run, of `kind` if given).
        kind: restrict the lookup to these kinds (e.g. `paw report --study`).
        n_boot: bootstrap replicates (None: the kind's builder chooses, e.g. the paper's
            B = 1000 for the seed-000 bootstrap test, 200 for seed-002 CIs).
        seed: bootstrap / permutation seed (None: the builder's default).
        options: more options of the kind's builder, by name.

    Raises:
        NotFound: no such run.
        UserError: the kind has no report, or an option is not one of its builder's.
    """
    from store.runs import find_run

    run = find_run(db, ref, kind)
    build = _load(kind_spec(run.kind).report)
    given = dict(options or {})
    if n_boot is not None:
        given["n_boot"] = n_boot  # else the builder's own default (its paper's B)
    if seed is not None:
        given["seed"] = seed
    report: Report = build(db, run.id, given)
    # Every report's header: each arm's unparsed share beside the paper's ≤ 3 %.
    from analysis.common.engines import engine_mix_line
    from analysis.common.unparsed import unparsed_meta
    from store.runs import unparsed_by_arm

    report.meta.update(unparsed_meta(unparsed_by_arm(db, run.id)))
    mix = engine_mix_line(db, run.id)
    if mix is not None:  # allowed with --allow-mixed-engines: said in every report
        report.meta["engines"] = mix
    return report


# ---------------------------------------------------------------- the kinds

_FLIPS_HINT = "flips:  paw flips --audit {name}{where}"

register(KindSpec(Kind.AUDIT, "analysis.audit.report:build_report", "audit",
                  "Report on this audit or run (name or id).", blocks="workbench.audit.spec",
                  resume="workbench.audit.execute:resume_audit", hints=(_FLIPS_HINT,)))
register(KindSpec(Kind.RUN, "analysis.audit.report:build_report", "audit",
                  blocks="workbench.audit.spec", hints=(_FLIPS_HINT,)))
register(KindSpec(Kind.STUDY, "analysis.counterfactual.report:build_report", "study",
                  "Report on this seed-000 study.", blocks="workbench.counterfactual.execute"))
register(KindSpec(Kind.DBPA, "analysis.dbpa.report:build_report", "dbpa",
                  "Report on this DBPA analysis (seed 001).", blocks="workbench.dbpa.spec",
                  resume="workbench.dbpa.execute:resume_dbpa"))
register(KindSpec(Kind.ROBUSTNESS, "analysis.robustness.report:build_report", "robustness",
                  "Report on these seed-003 robustness tests.",
                  blocks="workbench.robustness.spec",
                  resume="workbench.robustness.execute:resume_robustness"))
