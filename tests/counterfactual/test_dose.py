"""The dose-response design (§4.1, Figures 2 and 3) on the fake backend, and its analysis on a
study written by hand."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.counterfactual.data import load_study
from analysis.counterfactual.dose import dose_table
from analysis.counterfactual.plots import text_plot
from analysis.counterfactual.report import StudyReportOptions, build_report
from store.errors import UserError
from store.jobs import list_jobs
from tests.counterfactual.test_cli_study import paw
from workbench.engine.variants import get_variant
from workbench.counterfactual import StudySpec, run_study
from workbench.counterfactual.dose import PAPER_LEVELS, resolve_levels

LEVELS = (0.05, 0.2)


def _spec(**kw) -> StudySpec:
    values = dict(dataset="triage", models=("fake",), paraphraser="fake", targets=(),
                  baselines=("paraphrase_adjusted",), levels=LEVELS)
    values.update(kw)
    return StudySpec(**values)


def test_levels_parse_and_check():
    assert resolve_levels("paper") == PAPER_LEVELS == (0.05, 0.10, 0.20, 0.40, 0.60)
    assert resolve_levels("5%,0.4") == (0.05, 0.4)
    for bad, message in (("0", "(0, 1]"), ("1.5", "(0, 1]"), ("x", "expected fractions"),
                         ("0.1,10%", "distinct")):
        with pytest.raises(UserError, match=message.replace("(", r"\(").replace("]", r"\]")):
            resolve_levels(bad)
    with pytest.raises(UserError, match="no targets"):
        _spec(targets=("gender_swap",))
    with pytest.raises(UserError, match="--baselines paraphrase_adjusted"):
        _spec(baselines=("paraphrase_adjusted", "fixed_sentence"))


def test_a_dose_study_sizes_each_paraphrase_to_its_level(study_db, fake_model, make_engine,
                                                         tmp_path):
    engine = make_engine()
    outcome = run_study(study_db, _spec(), engine=engine)
    jobs = list_jobs(study_db, outcome.study_id)
    assert {j.role for j in jobs} == {"original", "target", "paraphrase"}
    # 'original' and 'target' of a dose unit are one prompt: the same generation key.
    keys = {}
    for j in jobs:
        if j.role in ("original", "target"):
            keys.setdefault((j.item_id, j.variant_id, j.sample_index), set()).add(
                j.generation_key)
    assert keys and all(len(k) == 1 for k in keys.values())
    levels = set()
    for j in list_jobs(study_db, outcome.study_id, role="paraphrase"):
        variant = get_variant(study_db, j.variant_id)
        anchor = get_variant(study_db, variant.details["reference_variant_id"])
        assert anchor.family == "dose"
        assert variant.details["target_fraction"] == anchor.details["dose_level"]
        levels.add(anchor.details["dose_level"])
    assert levels == set(LEVELS)
    report = build_report(study_db, outcome.study, options=StudyReportOptions(n_boot=20))
    assert [s.json_key for s in report.sections] == ["dose", "paraphrase", "votes", "design"]
    frame = report.section("dose").frame
    assert sorted(frame["level"]) == sorted(LEVELS)  # 3 yes/no items: one task
    assert [f.name for f in report.figures] == ["figure2_flip_rate", "figure3_mi",
                                                "paraphrase_fractions"]
    md, pngs = report.write(tmp_path / "dose.md", "md")
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in pngs)
    text = md.read_text()
    assert "Figure 2: flip rate against tokens changed" in text and "```text" in text
    # The Statistics screen draws both with plotext from the same numbers as the table.
    for figure, metric in zip(report.figures[:2], ("flip_rate", "mi")):
        data = figure.plot()
        (series,) = data.series  # one model, one task
        ordered = frame.sort_values("achieved_mean")
        assert series.x == tuple(ordered["achieved_mean"]) and series.y == tuple(ordered[metric])
        assert len(data.notes) == len(LEVELS)
    # The same command resumes the same study and generates nothing.
    assert run_study(study_db, _spec(), engine=engine).generated == 0


def test_dose_table_by_hand(db):
    # Two levels on four yes/no items written by hand:
    # level 0.05: original (Y, Y, N, N), paraphrase (Y, Y, N, Y): 1 flip of 4 → FR 0.25;
    #   table [[2, 0], [1, 1]] (rows original Yes/No, columns paraphrase Yes/No),
    #   p = [[.5, 0], [.25, .25]], rows (.5, .5), cols (.75, .25):
    #   MI = .5·log2(.5/.375) + .25·log2(.25/.375) + .25·log2(.25/.125)
    #      = .5·0.4150375 − .25·0.5849625 + .25·1 = 0.2075187 − 0.1462406 + 0.25 = 0.3112781
    # level 0.40: paraphrase (N, Y, Y, Y): 3 flips → FR 0.75;
    #   table [[1, 1], [2, 0]], p = [[.25, .25], [.5, 0]], rows (.5, .5), cols (.75, .25):
    #   MI = .25·log2(.25/.375) + .25·log2(.25/.125) + .5·log2(.5/.375)
    #      = −0.1462406 + 0.25 + 0.2075187 = 0.3112781 (the same value, cells permuted)
    from store.db import dumps
    from tests.counterfactual.test_study_report import StudyWriter

    w = StudyWriter(db)
    answers = {0.05: "YYNY", 0.40: "NYYY"}
    original = "YYNN"
    for index in range(4):
        item = w.b.item(f"q{index}", gold="Yes", kind="binary", question=f"q{index}?",
                        options={"Yes": "Yes", "No": "No"})
        for level, para in answers.items():
            anchor = w.b.variant(item, operator_id=f"dose:{level:g}", family="dose",
                                 text=f"q{index}?", seed=int(level * 100))
            db.execute("UPDATE variants SET details_json = ? WHERE id = ?",
                       [dumps({"dose_level": level}), anchor])
            yes = {"Y": "Yes", "N": "No"}
            for role, letter in (("original", original[index]), ("target", original[index])):
                w._prompt(item, role, anchor, [yes[letter]] * 3,
                          {"Yes": 0.9 if letter == "Y" else 0.1,
                           "No": 0.1 if letter == "Y" else 0.9})
            variant = w.b.variant(item, operator_id="paraphrase_token_adjusted",
                                  family="baseline", text=f"q{index} reworded?",
                                  seed=1000 + int(level * 100))
            db.execute("UPDATE variants SET details_json = ? WHERE id = ?",
                       [dumps({"reference_variant_id": anchor, "target_fraction": level,
                               "achieved_fraction": level / 2, "within_tolerance": False,
                               "tolerance": 0.03, "source": "llm", "attempts": []}), variant])
            letter = para[index]
            w._prompt(item, "paraphrase", variant, [yes[letter]] * 3,
                      {"Yes": 0.9 if letter == "Y" else 0.1,
                       "No": 0.1 if letter == "Y" else 0.9})
    frame = dose_table(load_study(db, "hand-study")).set_index("level")
    assert frame.loc[0.05, "flip_rate"] == 0.25 and frame.loc[0.40, "flip_rate"] == 0.75
    assert frame.loc[0.05, "n_flips"] == 1 and frame.loc[0.40, "n_flips"] == 3
    assert frame.loc[0.05, "mi"] == pytest.approx(0.3112781, abs=1e-7)
    from sklearn.metrics import mutual_info_score

    orig = [c == "Y" for c in original]
    para = [c == "Y" for c in answers[0.40]]
    assert frame.loc[0.40, "mi"] == pytest.approx(0.3112781, abs=1e-7)
    assert frame.loc[0.40, "mi"] == pytest.approx(mutual_info_score(orig, para) / np.log(2))
    assert frame.loc[0.05, "achieved_mean"] == pytest.approx(0.025)
    assert frame.loc[0.05, "n_pairs"] == 4


def test_text_plot_places_every_point():
    text = text_plot({"MANAGE": [(0.05, 0.06), (0.4, 0.14)], "VISIT": [(0.05, 0.05)]},
                     title="Figure 2", x_label="x", y_label="FR", width=20, height=5)
    lines = text.splitlines()
    assert lines[0] == "Figure 2"
    assert "● MANAGE: 0.05→0.060, 0.40→0.140" in text and "■ VISIT: 0.05→0.050" in text
    grid = lines[1:6]
    assert grid[0].endswith("●")  # (0.40, 0.14): the largest x and y, top right
    assert sum(row.count("●") for row in grid) == 2 and sum(row.count("■") for row in grid) == 1


def test_dose_levels_on_the_command_line(capsys, db_path):
    paw(capsys, "demo", "--import-only", "--db", db_path)
    code, _, err = paw(capsys, "study", "--dataset", "demo", "--dose-levels", "0.1",
                       "--targets", "gender_swap", "--db", db_path)
    assert code == 1 and "a dose-response study has no targets" in err
    code, _, err = paw(capsys, "study", "--dataset", "demo", "--dose-levels", "2",
                       "--db", db_path)
    assert code == 1 and "--dose-levels: expected fractions in (0, 1]" in err
