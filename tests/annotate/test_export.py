"""Export long and wide, CSV and JSONL, stamped with the codebook version and chain head."""

from __future__ import annotations

import csv
import io
import json

import pytest

from annotate.adjudicate import adjudicate
from annotate.codebook import CODEBOOK_VERSION
from annotate.events import record_label, start_session
from annotate.export import export_labels
from annotate.sets.annotation_set import rater_queue
from annotate.sets.audit import create_set
from annotate.verification.verify import chain_head
from tests.annotate.conftest import named


@pytest.fixture
def labelled(db, audit, people):
    """alice and bob label 2 cases; one disagreement adjudicated by carol."""
    create_set(db, audit.audit_id, 10, seed=0, name="s", **named(people))
    codes = [v.code for v in rater_queue(db, "s", people["alice"])][:2]
    for name, values in (("alice", ("no_shift", "shifted")), ("bob", ("no_shift", "ambiguous"))):
        session = start_session(db, people[name], "s")
        for code, value in zip(codes, values):
            record_label(db, people[name], session, code, "gold_shift", value)
    session = start_session(db, people["alice"], "s")
    record_label(db, people["alice"], session, codes[1], "gold_shift_alt", "B")
    record_label(db, people["alice"], session, codes[1], "note", 'says "severe", odd')
    adjudicate(db, people["carol"], codes[1], "gold_shift", "ambiguous", "B not clearly better")
    return codes


def test_long_csv(db, labelled):
    rows = list(csv.DictReader(io.StringIO(export_labels(db, "s", "long", "csv"))))
    raters = [(r["rater"], r["field"], r["value"]) for r in rows if r["code"] == labelled[1]]
    assert ("alice", "gold_shift", "shifted") in raters
    assert ("alice", "gold_shift_alt", "B") in raters
    assert ("alice", "note", 'says "severe", odd') in raters  # CSV quoting round-trips
    assert ("bob", "gold_shift", "ambiguous") in raters
    assert ("final", "gold_shift", "ambiguous") in raters
    final = next(r for r in rows if r["rater"] == "final" and r["code"] == labelled[1]
                 and r["field"] == "gold_shift")
    assert final["source"] == "adjudicated" and final["reason"] == "B not clearly better"
    unanimous = next(r for r in rows if r["rater"] == "final" and r["code"] == labelled[0])
    assert unanimous["source"] == "unanimous" and unanimous["value"] == "no_shift"
    # 2 + 2 gold_shift + alt + note by raters, 2 finals
    assert len(rows) == 8
    assert {r["codebook_version"] for r in rows} == {CODEBOOK_VERSION}
    assert {r["chain_head"] for r in rows} == {chain_head(db)[1]}
    assert {r["model"] for r in rows} <= {"smollm2", "qwen-7b"}  # unblinded, for analysis


def test_wide_jsonl(db, labelled):
    lines = export_labels(db, "s", "wide", "jsonl").splitlines()
    rows = {row["code"]: row for row in map(json.loads, lines)}
    assert len(rows) == 10  # every case, labelled or not
    row = rows[labelled[1]]
    assert (row["gold_shift__alice"], row["gold_shift__bob"]) == ("shifted", "ambiguous")
    assert (row["gold_shift__final"], row["gold_shift__source"]) == ("ambiguous", "adjudicated")
    assert row["gold_shift_alt__alice"] == "B" and row["gold_shift_alt__bob"] is None
    assert row["codebook_version"] == CODEBOOK_VERSION
    untouched = next(r for code, r in rows.items() if code not in labelled)
    assert untouched["gold_shift__alice"] is None


def test_long_jsonl_and_wide_csv_have_the_same_labels(db, labelled):
    long_rows = [json.loads(line) for line in export_labels(db, "s", "long", "jsonl").splitlines()]
    wide = list(csv.DictReader(io.StringIO(export_labels(db, "s", "wide", "csv"))))
    from_long = {(r["code"], r["field"], r["rater"]): r["value"] for r in long_rows}
    for row in wide:
        for (code, field, rater), value in from_long.items():
            if code == row["code"] and rater != "final":
                assert row[f"{field}__{rater}"] == value
