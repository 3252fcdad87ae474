"""`paw flips --format csv|json` (and `--csv`): the flip list for a spreadsheet or pandas, on an
audit run by the real engine (fake model: every M4 negation flips A -> B, every shuffle keeps
the letter A, which now names another option's text)."""

from __future__ import annotations

import io
import json

import pandas as pd

from tests.cli.test_flips_cli import paw
from workbench.present.flips_csv import csv_columns


def test_csv_has_every_matching_row_and_the_json_values(capsys, fake_audit):
    path, _ = fake_audit
    code, out, err = paw(capsys, "flips", "--all", "--format", "csv", "--db", path)
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out), dtype=str, keep_default_na=False)
    assert list(frame.columns) == csv_columns()
    # --all lists every answered edit; the CSV has them all, not a page of 50 or of 3.
    _, listed, _ = paw(capsys, "flips", "--all", "--json", "--limit", "100", "--db", path)
    rows = json.loads(listed)["rows"]
    assert len(frame) == len(rows) == 10
    assert list(frame["id"].astype(int)) == [r["id"] for r in rows]
    assert list(frame["flipped"]) == [{True: "true", False: "false", None: ""}[r["flipped"]]
                                      for r in rows]
    # The shuffle's row carries the option texts that make 'A->A' a flip.
    shuffles = frame[frame["block"] == "shuffle"]
    assert len(shuffles) == 2 and (shuffles["base_answer"] == shuffles["answer"]).all()
    assert (shuffles["base_text"] != shuffles["answer_text"]).all()
    assert (shuffles["base_text"] != "").all() and (shuffles["flipped"] == "true").all()
    # --csv is the same as --format csv; --limit pages it.
    _, same, _ = paw(capsys, "flips", "--all", "--csv", "--db", path)
    assert same == out
    _, three, _ = paw(capsys, "flips", "--all", "--csv", "--limit", "3", "--offset", "2",
                      "--db", path)
    assert three.splitlines() == out.splitlines()[:1] + out.splitlines()[3:6]


def test_two_formats_are_one_line_error(capsys, fake_audit):
    path, _ = fake_audit
    code, out, err = paw(capsys, "flips", "--csv", "--json", "--db", path)
    assert code == 2 and out == ""
    assert "--format, --csv, --json: expected one output format, got csv, json" in err
    code, out, _ = paw(capsys, "flips", "--format", "json", "--db", path)
    assert code == 0 and json.loads(out)["total"] == 4
