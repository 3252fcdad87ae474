"""`paw export`: the edits and generations frames as Parquet and CSV from an audit run by the
real engine, the labels for a coordinator only, and one line when pyarrow is missing."""

from __future__ import annotations

import json
import sys

import pandas as pd
import pytest

from analysis.audit.frames import load_audit, observations
from analysis.exports import EDIT_COLUMNS, GENERATION_COLUMNS
from store import open_db
from tests.cli.test_flips_cli import paw


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_export_edits_and_generations(capsys, fake_audit, tmp_path, fmt):
    path, outcome = fake_audit
    out_dir = tmp_path / "out"
    code, out, err = paw(capsys, "export", "--format", fmt, "--out", str(out_dir),
                         "--db", path)
    assert code == 0, err
    edits_file = out_dir / f"{outcome.audit}-edits.{fmt}"
    gens_file = out_dir / f"{outcome.audit}-generations.{fmt}"
    assert out.splitlines() == [f"wrote {edits_file} (10 rows)", f"wrote {gens_file} (14 rows)"]
    read = {"parquet": pd.read_parquet, "csv": pd.read_csv,
            "jsonl": lambda p: pd.read_json(p, lines=True, dtype=False)}[fmt]
    edits, gens = read(edits_file), read(gens_file)
    assert tuple(edits.columns) == EDIT_COLUMNS
    # The flips are observations' flips (M4 on two items, the shuffle on two items).
    obs = observations(load_audit(open_db(path), outcome.audit))
    assert int(edits["flip"].fillna(False).astype(bool).sum()) == int(obs["flip"].sum()) == 4
    assert sorted(edits.loc[edits["flip"].fillna(False).astype(bool), "operator_id"]) == \
        ["M4_negation_a", "M4_negation_a", "option_shuffle", "option_shuffle"]
    assert tuple(gens.columns[:len(GENERATION_COLUMNS)]) == GENERATION_COLUMNS
    probs = gens[[c for c in gens.columns if c.startswith("p_")]]
    assert {"p_A", "p_B", "p_C", "p_D"} <= set(probs.columns)
    assert probs.sum(axis=1, skipna=True).round(6).eq(1.0).all()  # each a distribution
    assert set(gens["role"]) == {"baseline", "direct", "m_block", "f_block", "shuffle"}
    if fmt == "jsonl":  # one JSON object per line, every column in order, null for missing
        lines = edits_file.read_text("utf-8").splitlines()
        objects = [json.loads(line) for line in lines]
        assert len(objects) == 10 and all(tuple(o) == EDIT_COLUMNS for o in objects)
        assert any(value is None for o in objects for value in o.values())
        assert '"arm":"fake/neutral_cot@1"' in lines[0]  # no '\/' escapes


def test_parquet_without_pyarrow_is_one_line(capsys, fake_audit, tmp_path, monkeypatch):
    path, _ = fake_audit
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow -> ImportError
    code, out, err = paw(capsys, "export", "--out", str(tmp_path / "o"), "--db", path)
    assert code == 1 and out == ""
    assert err == ("paw: error: Parquet needs pyarrow, which this install lacks: pip install "
                   "'paw-workbench[parquet]' (or export --format csv)\n")
    assert not (tmp_path / "o").exists()


def test_labels_are_the_coordinators(capsys, db, tmp_path, monkeypatch):
    from annotate.events import record_label, start_session
    from annotate.sets.annotation_set import rater_queue
    from annotate.sets.audit import create_set
    from annotate.trust.people import register
    from tests.annotate.conftest import PASSPHRASE, make_audit, named, save_to_file

    b = make_audit(db, n_items=4)
    carol = register(db, "carol", "coordinator", PASSPHRASE)
    people = {"carol": carol,
              "alice": register(db, "alice", "rater", PASSPHRASE, by=carol),
              "bob": register(db, "bob", "rater", PASSPHRASE, by=carol)}
    create_set(db, b.audit_id, 4, seed=0, name="s", **named(people))
    code = next(v.code for v in rater_queue(db, "s", people["alice"]))
    for name in ("alice", "bob"):
        record_label(db, people[name], start_session(db, people[name], "s"), code,
                     "gold_shift", "no_shift")
    path = save_to_file(db, tmp_path / "paw.db")
    out_dir = tmp_path / "out"
    code_, _, err = paw(capsys, "export", "--tables", "labels", "--format", "csv",
                          "--out", str(out_dir), "--db", path)
    assert code_ == 1 and "paw export: people are registered" in err
    assert not out_dir.exists()  # refused before anything is written
    monkeypatch.setenv("PAW_TEST_PW", PASSPHRASE)
    code_, out, err = paw(capsys, "export", "--tables", "labels,edits", "--format", "csv",
                          "--out", str(out_dir), "--coordinator", "carol",
                          "--passphrase-env", "PAW_TEST_PW", "--db", path)
    assert code_ == 0, err
    labels = pd.read_csv(out_dir / "s-labels.csv")
    assert sorted(labels.loc[labels["field"] == "gold_shift", "rater"]) == \
        ["alice", "bob", "final"]
    assert "record head" in err and (out_dir / "audit-1-edits.csv").exists()


def test_every_exported_column_is_documented():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "schema.md").read_text("utf-8")
    section = doc.split("## Exported frames (`paw export`)")[1]
    edits, gens = section.split("`<audit>-generations`")[0], section.split(
        "`<audit>-generations`")[1]
    documented = {name.strip() for part in (edits, gens)
                  for cell in (line.split("|")[1] for line in part.splitlines()
                               if line.startswith("| ") and not line.startswith("| column"))
                  for name in cell.split(",")}
    assert set(EDIT_COLUMNS) <= documented
    assert set(GENERATION_COLUMNS) <= documented and "p_<label>" in documented


def test_jsonl_reads_back_every_string_as_written(tmp_path):
    from workbench.present.run_files import write_frame

    texts = ["a/b", "c\\/d", "e\\", "\\\\/", "ünï/cödé", None]
    frame = pd.DataFrame({"text": texts, "n": [1, 2, 3, 4, 5, None]})
    path = write_frame(frame, tmp_path / "x.jsonl", "jsonl")
    back = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    assert [row["text"] for row in back] == texts
    assert back[5]["n"] is None and "\\/" not in path.read_text("utf-8").replace("\\\\", "")
