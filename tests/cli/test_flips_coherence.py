"""The flip list marks an incoherent edit (issue 39, criterion 2): `list_flips` rows, `paw flips`
text/csv/json and (tests/tui/test_flip_list_coherence.py) the inspector's table carry the
coherence checks an edit fails, the same checks the case view (`flip_case`) shows.

The store is a real SQLite file; the question edits are the real operators applied to
MedQA-style stems (the literal M2 sex swap leaves "He", M5 (b) inverts COPD's "chronic"; their
coherent variants flag nothing), and one F-block chain edit cuts a decimal."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from store.db import open_db
from tests.builders import AuditBuilder
from tests.cli.test_flips_cli import paw

STEMS = (
    ("A 67-year-old man with chronic obstructive pulmonary disease comes to the emergency "
     "department because of shortness of breath. He has a severe cough. Which of the "
     "following is the most likely cause?"),
    ("A 24-year-old woman comes to the physician because of a rash. She reports mild joint "
     "pain. Which of the following is the most likely diagnosis?"),
)
CHAIN = "Temperature is 38.5 and pulse 120/min, so the first option.\nAnswer: A"
CUT_CHAIN = "Temperature is 38.pulse 120 and 5/min, so the first option."


def build_coherence_store(path: str) -> dict[tuple[int, str], int]:
    """A one-arm audit 'coh' on a real file: every edit flips (A -> B); returns
    (stem index, operator id) -> job id."""
    from workbench.perturb.catalogue import apply

    db = open_db(path)
    b = AuditBuilder(db, audit="coh")
    arm = b.arm("smol/cot")
    jobs = {}
    for i, stem in enumerate(STEMS):
        q = b.item(f"coh{i}", question=stem)
        b.baseline(arm, q, answer="A", output=CHAIN)
        for op in ("M2_sex", "M2_sex_coherent", "M5_severity_b", "M5_severity_b_coherent"):
            r = apply(op, stem, seed=0, item_key=f"coh{i}")
            edit = b.perturbed(arm, q, operator_id=op, intent="D", answer="B", new=r.new,
                               family=op[:2])
            db.execute("UPDATE variants SET text = ? WHERE id = ?", [r.text, edit.variant_id])
            jobs[(i, op)] = edit.job_id
        edit = b.perturbed(arm, q, operator_id="F7_commute_a", family="F7", intent="P",
                           answer="B")
        db.execute("UPDATE variants SET text = ? WHERE id = ?", [CUT_CHAIN, edit.variant_id])
        jobs[(i, "F7_commute_a")] = edit.job_id
    db.conn.commit()
    db.conn.close()
    return jobs


EXPECTED = {
    (0, "M2_sex"): ("pronouns",), (1, "M2_sex"): ("pronouns",),
    (0, "M5_severity_b"): ("named_condition",), (1, "M5_severity_b"): (),
    (0, "M2_sex_coherent"): (), (1, "M2_sex_coherent"): (),
    (0, "M5_severity_b_coherent"): (), (1, "M5_severity_b_coherent"): (),
    (0, "F7_commute_a"): ("cut_number",), (1, "F7_commute_a"): ("cut_number",),
}
"""Worked by hand: the literal sex swap leaves the stems' "He"/"She"; M5 (b) scans "chronic"
first, which only stem 0 has (inside COPD); the chain edit splits 38.5 into 38 and 5."""


@pytest.fixture
def coherence_db(tmp_path) -> tuple[str, dict[tuple[int, str], int]]:
    path = str(tmp_path / "paw.db")
    return path, build_coherence_store(path)


def test_list_rows_carry_the_case_views_checks(coherence_db):
    from analysis.flips.case import flip_case
    from analysis.flips.listing import list_flips

    path, jobs = coherence_db
    db = open_db(path)
    page = list_flips(db, "coh", limit=100)
    assert page.total == len(EXPECTED) == 10
    by_id = {row.id: row for row in page.rows}
    for key, job_id in jobs.items():
        assert by_id[job_id].incoherent == EXPECTED[key], key
        assert flip_case(db, job_id).incoherent == EXPECTED[key], key
    # the audit report's section counts the same checks per operator (one edit per stem)
    from analysis.audit.coherence import coherence_table

    table = coherence_table(db, page.audit_ids[0])
    for op in ("M2_sex", "M5_severity_b", "F7_commute_a", "M2_sex_coherent"):
        listed = sum(bool(EXPECTED[(i, op)]) for i in range(2))
        assert table.loc[op, "fired"] == 2 and table.loc[op, "flagged"] == listed, op
    # a page computes its own rows' marks: the second page of three has the same as the whole
    part = list_flips(db, "coh", limit=3, offset=3)
    assert [r.incoherent for r in part.rows] == [by_id[r.id].incoherent for r in part.rows]


def test_paw_flips_text_csv_and_json_mark_incoherent_edits(capsys, coherence_db):
    path, jobs = coherence_db
    code, out, err = paw(capsys, "flips", "--audit", "coh", "--db", path)
    assert code == 0, err
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("id "))
    assert header.split()[-1] == "incoherent"
    cells = {int(line.split()[0]): line.split()[-1] for line in lines
             if line.split() and line.split()[0].isdigit()}
    for key, job_id in jobs.items():
        assert cells[job_id] == (",".join(EXPECTED[key]) or "–"), key

    code, out, err = paw(capsys, "flips", "--audit", "coh", "--csv", "--db", path)
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out), dtype=str, keep_default_na=False)
    marks = dict(zip(frame["id"].astype(int), frame["incoherent"], strict=True))
    assert {k: marks[j] for k, j in jobs.items()} == {k: ",".join(v)
                                                        for k, v in EXPECTED.items()}

    code, out, err = paw(capsys, "flips", "--audit", "coh", "--json", "--db", path)
    assert code == 0, err
    rows = {r["id"]: r["incoherent"] for r in json.loads(out)["rows"]}
    assert {k: rows[j] for k, j in jobs.items()} == {k: list(v) for k, v in EXPECTED.items()}
