"""Robustness runs in `paw flips` (list, case view with the prefix or change highlighted) and in
`paw export` (long and wide), through the real CLI on a file written by the real engine.

Before: `paw flips` printed "0 flipped edit(s)" for a robustness run and `paw export --audit
<robustness run>` failed with a pandas merge error.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from analysis.exports import ROBUSTNESS_EDIT_COLUMNS, ROBUSTNESS_WIDE_COLUMNS
from tests.annotate.conftest import save_to_file
from tests.cli.conftest import fake_audit  # noqa: F401  (the seed-002 audit fixture)
from tests.cli.test_flips_cli import paw
from tests.robustness.helpers import two_model_run


@pytest.fixture
def run_file(demo_db, tmp_path):
    """`two_model_run` on a file: 2 models x 3 items; the two Black prefixes move every item
    A -> B (12 changes) and every CFV re-answer is D against a baseline A (6 changes)."""
    outcome = two_model_run(demo_db)
    return save_to_file(demo_db, tmp_path / "paw.db"), outcome


def test_flips_lists_demographic_and_cfv_changes(capsys, run_file):
    path, outcome = run_file
    code, out, err = paw(capsys, "flips", "--audit", outcome.audit, "--db", path)
    assert code == 0, err
    assert out.splitlines()[0].startswith(f"18 flipped edit(s) in audit {outcome.audit}")
    code, out, _ = paw(capsys, "flips", "--audit", outcome.audit, "--block", "demographic",
                       "--json", "--db", path)
    rows = json.loads(out)["rows"]
    assert json.loads(out)["total"] == 12
    assert {r["operator_id"] for r in rows} == {"demo_prefix_male_black",
                                                "demo_prefix_female_black"}
    assert {(r["base_answer"], r["answer"], r["block"]) for r in rows} == {("A", "B",
                                                                          "demographic")}
    code, out, _ = paw(capsys, "flips", "--audit", outcome.audit, "--block", "CFV", "--json",
                       "--db", path)
    assert json.loads(out)["total"] == 6
    # Kept answers too: the 4 other prefixes x 3 items x 2 models.
    code, out, _ = paw(capsys, "flips", "--audit", outcome.audit, "--kept", "--json",
                       "--db", path)
    assert json.loads(out)["total"] == 24


def test_flips_show_highlights_the_prefix_and_the_change(capsys, run_file):
    path, outcome = run_file
    _, out, _ = paw(capsys, "flips", "--audit", outcome.audit, "--json", "--db", path)
    rows = json.loads(out)["rows"]
    demo = next(r for r in rows if r["block"] == "demographic")
    cfv = next(r for r in rows if r["block"] == "CFV")
    code, out, err = paw(capsys, "flips", "show", str(demo["id"]), "--no-color", "--db", path)
    assert code == 0, err
    assert "demographic edit (seed 003)" in out
    assert "{+The patient is a 45-year-old Black" in out  # the prefix, marked as inserted
    assert "FLIPPED A -> B" in out and "direction_judge@1" in out
    code, out, err = paw(capsys, "flips", "show", str(cfv["id"]), "--no-color", "--db", path)
    assert code == 0, err
    assert "counterfactual change (seed 003 CFV)" in out
    assert "Changed case (the model's own CFV proposal)" in out
    assert re.search(r"\{\+[^}]*changed\][^}]*\+\}", out)  # the change, marked inserted
    assert "target of the change" in out and "cfv_judge@1" in out


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_export_long_and_wide(capsys, run_file, tmp_path, fmt):
    path, outcome = run_file
    out_dir = tmp_path / "out"
    code, _, err = paw(capsys, "export", "--audit", outcome.audit, "--format", fmt,
                         "--out", str(out_dir), "--db", path)
    assert code == 0, err
    read = pd.read_parquet if fmt == "parquet" else pd.read_csv
    long = read(out_dir / f"{outcome.audit}-edits.{fmt}")
    wide = read(out_dir / f"{outcome.audit}-wide.{fmt}")
    assert (out_dir / f"{outcome.audit}-generations.{fmt}").is_file()
    assert tuple(long.columns) == ROBUSTNESS_EDIT_COLUMNS
    # 2 models x 3 items x (6 prefixes + 1 CFV re-answer).
    assert len(long) == 42 and (long["test"] == "cfv").sum() == 6
    changed = long[long["flip"].fillna(False).astype(bool)]
    assert len(changed) == 18
    demo = changed[changed["test"] == "demographic"]
    assert set(demo["direction"]) == {"more_aggressive"} and set(demo["judge_shared"]) == {4}
    # Every demo vignette states an age other than 45: every prefix contradicts it.
    assert not long.loc[long["test"] == "demographic", "consistent"].astype(bool).any()
    assert set(long["edd_comparable"].astype(bool)) == {False}
    assert long["edd_embedder"].str.contains("not comparable").all()
    cfv = long[long["test"] == "cfv"]
    assert set(cfv["target"]) == {"B", "D", "A"} and set(cfv["answer"]) == {"D"}
    assert tuple(wide.columns[:len(ROBUSTNESS_WIDE_COLUMNS)]) == ROBUSTNESS_WIDE_COLUMNS
    assert len(wide) == 6 and set(wide["n_changed"]) == {2} and set(wide["n_compared"]) == {6}
    assert {"answer_male_black", "changed_female_black", "consistent_male_white"} <= \
        set(wide.columns)
    assert set(wide["changed_male_black"].astype(bool)) == {True}


def test_wide_is_refused_for_a_seed_002_audit(capsys, fake_audit, tmp_path):  # noqa: F811
    path, _ = fake_audit
    code, _, err = paw(capsys, "export", "--tables", "wide", "--format", "csv", "--out",
                       str(tmp_path), "--db", path)
    assert code != 0
    assert "--tables wide: only a robustness run has a wide table" in err
    assert "Traceback" not in err


@pytest.mark.asyncio
async def test_flip_inspector_lists_and_opens_robustness_edits(run_file):
    """The real workbench (Pilot): the block filter reaches 'demographic' and 'CFV', and a
    case shows the prefixed question as the edited text with the seed-003 verdicts."""
    from tests.tui.helpers import screen_text, wait_until
    from workbench.tui.workbench_app import WorkbenchApp

    path, outcome = run_file
    app = WorkbenchApp(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        app.focus_audit = outcome.audit_id
        await pilot.press("2")
        screen = app.screen
        await wait_until(pilot, lambda: screen.page is not None and screen.page.total == 18)
        for _ in range(4):  # any -> M -> F -> shuffle -> demographic
            await pilot.press("b")
        await wait_until(pilot, lambda: screen.filter.blocks == ("demographic",)
                         and screen.page.total == 12)
        await pilot.press("enter")
        await wait_until(pilot, lambda: getattr(app.screen, "case", None) is not None)
        case = app.screen.case
        assert case.role == "demographic" and case.edited_question.startswith(
            "The patient is a 45-year-old Black")
        text = screen_text(app)
        assert "Question with the demographic edit" in text and "direction_judge@1" in text
        await pilot.press("escape")
        await pilot.press("b")
        await wait_until(pilot, lambda: screen.filter.blocks == ("CFV",)
                         and screen.page.total == 6)
