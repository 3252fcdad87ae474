"""A fifth kind of run added the way docs/design.md says ("Adding a kind of run"), end to end.

The kind `echo` asks each item's question once, directly. This module is its whole design:
a planner and one `Stage` on the shared engine (`run_echo`), a resumer, its progress blocks
(`ROLE_BLOCK`, `BLOCKS`), a report builder with typed options (`build_report`), and one
`register(KindSpec(...))`. The store's CHECK is widened in a scratch store only, as the
kind's migration would. Then: plan, run on the fake backend, resume, `paw report --echo`,
`paw audits` and `paw audits show` — nothing else in PAW was edited for it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
import sqlite_utils

from analysis.common.document import Report, Section
from analysis.common.report_options import ReportOptions
from store import open_db
from store.datasets import dataset_id
from store.jobs import JobSpec, add_arm, add_jobs, create_audit
from tests.cli.test_flips_cli import paw
from tests.fakes import fake_engine, fake_model_record
from tests.test_kinds import check_kinds
from workbench.datasets.demo import import_demo
from workbench.engine import (
    AuditEngine,
    Stage,
    StagedOutcome,
    StudyContext,
    arm_label,
    run_staged,
    select_items,
)
from workbench.kinds import KINDS, KindSpec, can_resume, kind_blocks, register, resume_run
from workbench.models import DEFAULT_TEMPLATE, GenerationRequest, Sampler

ECHO = "echo"
ROLE_BLOCK = {"answer": "answers"}
BLOCKS = ("answers",)
ITEMS = ("demo-001", "demo-002", "demo-003")


@dataclass(frozen=True)
class EchoSpec:
    """The settings of an echo run."""

    dataset: str
    model: str
    item_ids: tuple[str, ...] | None = None
    limit: int | None = None
    name: str = "echo-run"


def echo_request(ctx: StudyContext, job: Any) -> GenerationRequest:
    """Every echo job asks the item's question directly, greedily."""
    return GenerationRequest(ctx.items[job.item_id], "direct", DEFAULT_TEMPLATE["direct"],
                             Sampler(max_tokens=8))


def run_echo(db: sqlite_utils.Database, spec: EchoSpec, *, engine: AuditEngine,
             on_event: Callable[[Any], None] | None = None,
             should_stop: Callable[[], bool] | None = None) -> StagedOutcome:
    """Plan (idempotently) one 'answer' job per item and run it on the engine."""
    from workbench.models import resolve_model

    items = select_items(db, spec)
    model = resolve_model(db, spec.model)
    config = {"dataset": spec.dataset, "model": spec.model,
              "item_ids": list(spec.item_ids or ()), "limit": spec.limit}
    audit = create_audit(db, spec.name, ECHO, dataset_id(db, spec.dataset), config)
    template = DEFAULT_TEMPLATE["direct"]
    arm = add_arm(db, audit.id, arm_label(model.name, template), model.id, template)
    add_jobs(db, audit.id, [JobSpec(arm_id=arm.id, item_id=item.id or 0, role="answer")
                            for item in items])
    ctx = StudyContext(db, audit, (arm,), {model.id: model},
                       {item.id or 0: item for item in items}, engine)
    return run_staged(ctx, [Stage("answers", 1, echo_request)], command=ECHO,
                      role_block=ROLE_BLOCK, blocks=BLOCKS, on_event=on_event,
                      should_stop=should_stop)


def resume_echo(db: sqlite_utils.Database, audit_id: int, *, engine: AuditEngine,
                on_event: Callable[[Any], None] | None = None,
                should_stop: Callable[[], bool] | None = None) -> StagedOutcome:
    """The resumer: the stored settings, run again (only what is missing generates)."""
    from store.runs import find_run, run_config

    config = run_config(db, audit_id)
    spec = EchoSpec(config["dataset"], config["model"], tuple(config["item_ids"]) or None,
                    config["limit"], find_run(db, audit_id, ECHO).name)
    return run_echo(db, spec, engine=engine, on_event=on_event, should_stop=should_stop)


@dataclass(frozen=True)
class EchoReportOptions(ReportOptions):
    """The echo report's options: a row limit besides `n_boot` and `seed`."""

    report = "the echo report"

    rows: int = 100


def build_report(db: sqlite_utils.Database, ref: str | int | None = None,
                 options: EchoReportOptions | Mapping[str, Any] | None = None) -> Report:
    """One row per item: its question's source id and the model's answer."""
    import pandas as pd

    from store.runs import find_run

    chosen = EchoReportOptions.coerce(options)
    run = find_run(db, ref, ECHO)
    rows = db.execute(
        "SELECT i.source_id, g.answer FROM jobs j JOIN items i ON i.id = j.item_id "
        "JOIN generations g ON g.key = j.generation_key WHERE j.audit_id = ? ORDER BY i.id "
        "LIMIT ?", [run.id, chosen.rows]).fetchall()
    frame = pd.DataFrame(rows, columns=["item", "answer"])
    return Report(f"Echo report: {run.name}",
                  {"audit": run.name, "audit_id": run.id, "kind": run.kind,
                   "n_boot": chosen.n_boot},
                  [Section("Answers", frame, "The model's direct answer per item.", "answers")])


def widen_check(db: sqlite_utils.Database, kind: str) -> None:
    """The kind's migration, in this scratch store only: `audits` rebuilt with `kind` added
    to its CHECK (SQLite cannot alter a CHECK; m004's procedure)."""
    sql, = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'audits'"
                      ).fetchone()
    indexes = [row[0] for row in db.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'audits' "
        "AND sql IS NOT NULL")]
    widened = re.sub(r"(CHECK \(kind IN \([^)]*)\)\)", rf"\1, '{kind}'))", sql, count=1)
    widened = re.sub(r'CREATE TABLE "?audits"?', "CREATE TABLE audits_new", widened, count=1)
    db.execute("PRAGMA foreign_keys = OFF")
    db.executescript(f"{widened}; INSERT INTO audits_new SELECT * FROM audits; "
                     f"DROP TABLE audits; ALTER TABLE audits_new RENAME TO audits; "
                     + "; ".join(indexes) + ";")
    db.execute("PRAGMA foreign_keys = ON")


@pytest.fixture
def echo_kind() -> Iterator[KindSpec]:
    """The fifth kind, registered as the built-in kinds are (and taken out afterwards)."""
    spec = register(KindSpec(
        ECHO, f"{__name__}:build_report", ECHO, "Report on this echo run.",
        blocks=__name__, resume=f"{__name__}:resume_echo",
        hints=("echo:   every answer is in the report{where}",)))
    try:
        yield spec
    finally:
        KINDS.pop(ECHO)


def test_a_fifth_kind_runs_end_to_end(echo_kind, tmp_path, capsys):
    path = str(tmp_path / "echo.db")
    db = open_db(path)
    widen_check(db, ECHO)
    assert check_kinds(db) == tuple(KINDS)  # the registry, the kind included, is the CHECK
    import_demo(db)
    fake_model_record(db)

    outcome = run_echo(db, EchoSpec("demo", "fake", ITEMS), engine=fake_engine(
        db, lambda prompt, sampler: "B"))
    assert (outcome.generated, outcome.job_counts, outcome.stopped) == (3, {"done": 3}, False)
    assert can_resume(ECHO) and kind_blocks(ECHO) == (ROLE_BLOCK, BLOCKS)
    again = resume_run(db, outcome.audit_id, ECHO, engine=fake_engine(db, lambda p, s: "C"))
    assert again.generated == 0 and again.job_counts == {"done": 3}
    db.conn.close()

    out_file = tmp_path / "echo-report.md"
    code, out, err = paw(capsys, "report", "--echo", "echo-run", "--out", str(out_file),
                         "--db", path)
    assert code == 0, err
    text = out_file.read_text()
    assert "# Echo report: echo-run" in text
    assert re.findall(r"\| (demo-00\d) \| (\w) \|", text) == [(i, "B") for i in ITEMS]

    code, out, err = paw(capsys, "audits", "--db", path)
    assert code == 0, err
    fields = out.splitlines()[-1].split()
    assert fields[:7] == ["1", "echo-run", "echo", "demo", "fake", "finished", "3/3"]
    code, out, _ = paw(capsys, "audits", "--kind", "echo", "--db", path)
    assert code == 0 and out.splitlines()[-1].split()[1] == "echo-run"

    code, out, err = paw(capsys, "audits", "show", "echo-run", "--db", path)
    assert code == 0, err
    assert re.search(r"^answers +3 +3 +0 +0 +0$", out, re.M), out
    assert f"report: paw report --echo echo-run --db {path}" in out
    assert f"echo:   every answer is in the report --db {path}" in out


def test_the_fifth_kinds_report_refuses_an_option_it_lacks(echo_kind, tmp_path):
    from store.errors import UserError
    from workbench.kinds import build_run_report

    db = open_db(tmp_path / "echo.db")
    widen_check(db, ECHO)
    import_demo(db)
    fake_model_record(db)
    run_echo(db, EchoSpec("demo", "fake", ITEMS[:1]), engine=fake_engine(db, lambda p, s: "A"))
    report = build_run_report(db, "echo-run", options={"rows": 1})
    assert report.meta["kind"] == ECHO and len(report.section("answers").frame) == 1
    with pytest.raises(UserError, match="report option 'row': not an option of the echo "
                                        "report \\(its options: n_boot, seed, rows\\)"):
        build_run_report(db, "echo-run", options={"row": 1})
