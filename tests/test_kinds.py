"""The registry of kinds of run (`workbench.kinds`) against the store's kinds and the CHECK a
migrated store enforces; what the CLI derives from it; a report option it does not know."""

from __future__ import annotations

import importlib
import re

import pytest

from store import open_db
from store.errors import UserError
from store.kinds import AUDIT_KINDS, Kind
from tests.builders import AuditBuilder
from tests.cli.test_flips_cli import paw
from workbench.kinds import (
    KINDS,
    KindSpec,
    build_run_report,
    kind_blocks,
    kinds_of_flag,
    register,
    report_flags,
)


def check_kinds(db) -> tuple[str, ...]:
    """The kinds the `audits.kind` CHECK of a store allows, read from its schema."""
    sql = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'audits'"
                     ).fetchone()[0]
    match = re.search(r"CHECK \(kind IN \(([^)]*)\)\)", sql)
    assert match is not None, sql
    return tuple(word.strip().strip("'") for word in match.group(1).split(","))


def test_the_registry_is_the_store_kinds_and_the_check():
    assert tuple(KINDS) == tuple(Kind) == AUDIT_KINDS
    assert check_kinds(open_db(memory=True)) == AUDIT_KINDS
    assert all(isinstance(kind, Kind) for kind in AUDIT_KINDS)  # compare equal to the text
    assert AUDIT_KINDS == ("audit", "run", "study", "dbpa", "robustness")


def test_the_check_reader_sees_another_list(tmp_path):
    """`check_kinds` reads the CHECK itself: a table whose CHECK lists other kinds differs."""
    import sqlite_utils

    db = sqlite_utils.Database(tmp_path / "other.db")
    db.execute("CREATE TABLE audits (id INTEGER PRIMARY KEY, kind TEXT NOT NULL "
               "CHECK (kind IN ('audit', 'run')))")
    assert check_kinds(db) == ("audit", "run")


@pytest.mark.parametrize("kind", AUDIT_KINDS)
def test_every_registration_names_code_that_exists(kind):
    spec = KINDS[kind]
    module, _, name = spec.report.partition(":")
    assert callable(getattr(importlib.import_module(module), name))
    if spec.resume is not None:
        module, _, name = spec.resume.partition(":")
        assert callable(getattr(importlib.import_module(module), name))
    role_block, order = kind_blocks(kind)
    # Every planner maps its roles to blocks; an order, where given, covers every block (the
    # study gives none: `paw audits show` lists its blocks alphabetically).
    assert role_block and (not order or set(order) >= set(role_block.values()))
    assert bool(order) == (kind != "study")


def test_report_flags_and_the_kinds_they_find():
    assert list(report_flags()) == ["audit", "study", "dbpa", "robustness"]
    assert kinds_of_flag("audit") == ("audit", "run")
    assert kinds_of_flag("robustness") == ("robustness",)


def test_the_cli_reads_its_choices_and_flags_from_the_registry(capsys):
    _, out, _ = paw(capsys, "report", "--help")
    flags = re.findall(r"^  --(\w+) NAME_OR_ID", out, re.M)
    assert flags == list(report_flags())
    _, out, _ = paw(capsys, "audits", "--help")
    assert "--kind [audit|run|study|dbpa|robustness]" in out


def test_a_registration_is_refused_twice_or_without_help():
    with pytest.raises(ValueError, match="registered already"):
        register(KINDS["study"])
    with pytest.raises(ValueError, match="needs a help text"):
        register(KindSpec("other", "x:y", "other"))
    assert "other" not in KINDS


def test_a_misspelt_report_option_is_refused_by_name(db):
    b = AuditBuilder(db)
    b.item("q1", gold="A")
    b.arm("m/cot")
    with pytest.raises(UserError, match=r"report option 'nboot': not an option of the "
                                        r"seed-002 audit report \(its options: n_boot, seed, "
                                        r"answer_reading, strip_stated_answer\)"):
        build_run_report(db, "audit-1", options={"nboot": 10})


def test_another_papers_options_are_refused():
    from analysis.audit.report import AuditReportOptions
    from analysis.counterfactual.report import StudyReportOptions

    assert StudyReportOptions.coerce({"sides": "two"}).sides == "two"
    assert StudyReportOptions.coerce(None) == StudyReportOptions(n_boot=1000, seed=0)
    with pytest.raises(UserError, match="AuditReportOptions are not options of the "
                                        "seed-000 study report"):
        StudyReportOptions.coerce(AuditReportOptions(n_boot=5))
