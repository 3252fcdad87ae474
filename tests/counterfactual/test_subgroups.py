"""The Q-Pain subgroup design (App. H, Table 10; App. I): templates filled per subgroup, every
pair compared by paired two-tailed t-tests on p(No), with the paper's Bonferroni families."""

from __future__ import annotations

import json
import math

import pytest
from scipy import stats

from analysis.counterfactual.data import load_study
from analysis.counterfactual.report import StudyReportOptions, build_report
from analysis.counterfactual.subgroups import p_no, pairwise_tests
from store.errors import UserError
from store.jobs import list_jobs
from store.records import Item
from tests.counterfactual.test_cli_study import paw
from workbench.engine.variants import get_variant
from workbench.counterfactual import StudySpec, run_study
from workbench.counterfactual.subgroups import (
    DEFAULT_SUBGROUPS,
    Subgroup,
    check_templates,
    designated_original,
    direction,
    load_subgroups,
    pair_ids,
)
from workbench.datasets.pain import PAIN_DATASET, import_pain_templates

THREE = (Subgroup("white_man", {"race": "White", "gender": "man", "subject": "he",
                                "object": "him", "possessive": "his"}),
         Subgroup("black_man", {"race": "Black", "gender": "man", "subject": "he",
                                "object": "him", "possessive": "his"}),
         Subgroup("white_woman", {"race": "White", "gender": "woman", "subject": "she",
                                  "object": "her", "possessive": "her"}))


def denies_black_patients(prompt: str, sampler) -> str:
    """'No' (treatment withheld) when the vignette says Black, else 'Yes'; paraphrases:
    one inserted word."""
    if "Paraphrase, changing about" in prompt:
        sentence = prompt.rsplit("Paraphrase, changing about", 1)[1].split(": ", 1)[1]
        words = sentence.split("\n")[0].strip().split()
        return " ".join(words[:-1] + ["indeed", words[-1]])
    return "No" if "Black" in prompt.rsplit("Question:", 1)[-1] else "Yes"


def test_templates_fill_every_placeholder():
    template = "Patient D is a 40-year-old [race] [gender]. [Subject] says [possessive] pain…"
    assert THREE[2].fill_template(template, "t") == (
        "Patient D is a 40-year-old White woman. She says her pain…")
    with pytest.raises(UserError, match=r"placeholder \[name\]: expected one of"):
        THREE[0].fill_template("[name] hurts", "item 'x'")
    assert len(DEFAULT_SUBGROUPS) == 8 and len(pair_ids(load_subgroups("default"))) == 28


def test_the_original_of_a_pair_is_one_seeded_coin_and_directions_follow_the_reference():
    assert designated_original("a", "b", 0) == designated_original("a", "b", 0)
    coins = {designated_original(f"g{i}", f"h{i}", 0) for i in range(40)}
    assert any(c.startswith("g") for c in coins) and any(c.startswith("h") for c in coins)
    white, black, woman = THREE
    reference = ("race", "White")
    assert direction(white, black, reference) == 1  # changed to the non-reference group
    assert direction(black, white, reference) == -1
    assert direction(white, woman, reference) is None  # gender, not race, differs
    assert direction(black, woman, reference) is None  # both differ


def test_templates_must_be_yes_no_with_placeholders():
    yes_no = {"Yes": "Yes", "No": "No"}
    with pytest.raises(UserError, match="item 'q': --subgroups: expected yes/no items"):
        check_templates([Item("q", "mcq", "[race]?", "A", {"A": "x", "B": "y"})], THREE)
    with pytest.raises(UserError, match="expected a template with placeholders"):
        check_templates([Item("q", "binary", "A man?", "Yes", yes_no)], THREE)


@pytest.mark.parametrize("content, message", [
    ("{", "expected JSON, got invalid JSON"),
    ('{"key": "a"}', "expected a JSON list of subgroups"),
    ('[{"key": "a b", "fill": {}}]', "entry 1: expected {\"key\""),
    ('[{"key": "a", "fill": {"race": "x"}}]', "expected at least 2 subgroups"),
    ('[{"key": "a", "fill": {}}, {"key": "a", "fill": {}}]', "entry 2: key: expected a new"),
])
def test_bad_subgroup_files(tmp_path, content, message):
    path = tmp_path / "groups.json"
    path.write_text(content)
    with pytest.raises(UserError, match=message.replace("{", r"\{")):
        load_subgroups(str(path))


@pytest.fixture
def pain_db(db, fake_model):
    import_pain_templates(db)
    return db


def _spec(**kw) -> StudySpec:
    values = dict(dataset=PAIN_DATASET, models=("fake",), paraphraser="fake", targets=(),
                  subgroups=THREE, subgroup_reference=("race", "White"),
                  fixed_sentence="record_reviewed", item_ids=("pain-01", "pain-02",
                                                               "pain-03", "pain-04"))
    values.update(kw)
    return StudySpec(**values)


def test_a_subgroup_study_end_to_end_on_the_fake_backend(pain_db, make_engine, tmp_path):
    outcome = run_study(pain_db, _spec(), engine=make_engine(denies_black_patients))
    jobs = list_jobs(pain_db, outcome.study_id)
    assert {j.status for j in jobs} == {"done"}
    # Each pair's original prompt is the designated original's filled vignette.
    for job in jobs:
        if job.role == "target" and job.sample_index == 0:
            anchor = get_variant(pain_db, job.variant_id)
            assert "[" not in anchor.text and "[" not in anchor.details["reference_text"]
            original = anchor.details["original_subgroup"]
            assert original == designated_original(*anchor.details["pair"], seed=0)
    # Prompts repeat across pairs (one subgroup's vignette is asked once per sample).
    originals = {j.generation_key for j in jobs if j.role in ("original", "target")}
    assert len(originals) == 3 * 4 * 3  # 3 subgroups × 4 vignettes × 3 samples
    data = load_study(pain_db, outcome.study)
    frame = pairwise_tests(data)
    demo = frame[frame["family"] == "demographic"].set_index("comparison")
    assert list(demo.index) == ["white_man vs black_man", "white_man vs white_woman",
                                "black_man vs white_woman"]
    # Undefined p (constant Δ from the two-valued fake) leaves the family (PAW's rule).
    assert (demo["family_size"] == demo["p"].notna().sum()).all()
    # Worked on the stored distributions with scipy: the fake denies Black patients.
    c = next(c for c in data.comparisons if c.target == "subgroup:white_man/black_man"
             and c.baseline == "adjusted paraphrase")
    a_is_original = get_variant(pain_db, next(
        j.variant_id for j in jobs if j.role == "target" and get_variant(
            pain_db, j.variant_id).operator_id == c.target)).details[
        "original_subgroup"] == "white_man"
    white = p_no(c, c.p_orig if a_is_original else c.p_target)
    black = p_no(c, c.p_target if a_is_original else c.p_orig)
    assert (black > white).all()
    row = demo.loc["white_man vs black_man"]
    assert row["delta"] == pytest.approx((white - black).mean())
    # Four identical differences: a constant nonzero Δ, t undefined by the data.
    assert math.isnan(row["p"]) and "constant" in row["reason"]
    same = demo.loc["white_man vs white_woman"]
    assert same["p"] == 1.0 and same["delta"] == 0.0  # identical p(No): p = 1 exactly
    report = build_report(pain_db, outcome.study, options=StudyReportOptions(n_boot=50))
    keys = [s.json_key for s in report.sections]
    assert keys[:3] == ["table10", "pairwise", "appendix_i"]
    table10 = report.section("table10").frame
    assert table10["test family"].tolist() == ["demographic", "adjusted paraphrase",
                                               "fixed sentence"]
    assert table10["comparisons"].tolist()[:2] == [3, 3]
    fixed = frame[frame["family"] == "fixed sentence"]
    assert table10["comparisons"].iloc[2] == len(fixed) == fixed["original"].nunique()
    layout = report.section("appendix_i").frame
    assert [c for c in layout.columns if c.endswith("β̂")] == ["black_man vs white_man β̂"]
    assert set(layout["baseline"]) == {"adjusted paraphrase", "fixed sentence"}
    path, _ = report.write(tmp_path / "pain.md", "md")
    assert "Table 10: paired t-tests on p(No) across subgroups" in path.read_text()


def test_eight_subgroups_make_28_pairs_and_the_bonferroni_families(pain_db, make_engine):
    spec = _spec(subgroups=load_subgroups("default"), item_ids=("pain-01", "pain-02"),
                 baselines=("fixed_sentence",))
    outcome = run_study(pain_db, spec, engine=make_engine(denies_black_patients))
    frame = pairwise_tests(load_study(pain_db, outcome.study))
    fixed = frame[frame["family"] == "fixed sentence"]
    assert len(frame[frame["family"] == "demographic"]) == 28
    assert (frame[frame["family"] == "demographic"]["n"] == 2).all()
    assert len(fixed) == fixed["original"].nunique() <= 8
    assert (fixed["family_size"] <= len(fixed)).all()


def test_subgroups_on_the_command_line(capsys, db_path, tmp_path):
    paw(capsys, "demo", "--import-only", "--db", db_path)
    code, _, err = paw(capsys, "study", "--dataset", "demo", "--subgroups", "default",
                       "--items", "demo-001", "--db", db_path)
    assert code == 1 and "--subgroups: expected yes/no items" in err
    code, _, err = paw(capsys, "study", "--dataset", PAIN_DATASET, "--subgroups", "default",
                       "--targets", "gender_swap", "--db", db_path)
    assert code == 1 and "a subgroup study's targets are its pairs" in err
    bad = tmp_path / "g.json"
    bad.write_text(json.dumps([{"key": "x", "fill": {"race": "A"}}]))
    code, _, err = paw(capsys, "study", "--dataset", PAIN_DATASET, "--subgroups", str(bad),
                       "--db", db_path)
    assert code == 1 and "expected at least 2 subgroups" in err and err.count("\n") == 1


def test_pairwise_tests_by_scipy_on_hand_made_comparisons():
    import numpy as np
    import pandas as pd

    from analysis.counterfactual.comparison import Comparison
    from analysis.counterfactual.data import StudyData

    rng = np.random.default_rng(0)
    n = 12
    groups = ("a", "b", "c")
    vignettes = {g: rng.dirichlet([3, 3], n) for g in groups}  # (p_Yes, p_No) per vignette
    fixed = {g: rng.dirichlet([3, 3], n) for g in groups}
    comparisons, targets = [], {}
    originals = {"a/b": "b", "a/c": "a", "b/c": "b"}
    for unit, (pair, original) in enumerate(originals.items()):
        first, second = pair.split("/")
        other = second if original == first else first
        para = rng.dirichlet([3, 3], n)
        target = f"subgroup:{pair}"
        targets[unit] = (target, "subgroup", {"original_subgroup": original,
                                             "target_subgroup": other})
        for baseline, base in (("adjusted paraphrase", para), ("fixed sentence",
                                                               fixed[original])):
            comparisons.append(Comparison(
                "m", target, "yes/no", baseline, "main", ("Yes", "No"), np.arange(n),
                np.zeros(n, int), np.zeros(n, int), np.zeros(n, int), vignettes[original],
                vignettes[other], base))
    data = StudyData({"config": {}}, pd.DataFrame(), comparisons, pd.DataFrame(),
                     pd.DataFrame(), targets)
    frame = pairwise_tests(data).set_index(["family", "comparison"])
    for pair in originals:
        first, second = pair.split("/")
        row = frame.loc[("demographic", f"{first} vs {second}")]
        reference = stats.ttest_rel(vignettes[first][:, 1], vignettes[second][:, 1])
        assert row["p"] == pytest.approx(reference.pvalue)
        assert row["delta"] == pytest.approx(np.mean(vignettes[first][:, 1]
                                                     - vignettes[second][:, 1]))
        assert row["p_bonferroni"] == pytest.approx(min(1.0, 3 * reference.pvalue))
    # b is the original of two pairs: one fixed-sentence test for b, one for a.
    fixed_rows = frame.loc["fixed sentence"]
    assert sorted(fixed_rows["original"]) == ["a", "b"]
    b = fixed_rows[fixed_rows["original"] == "b"].iloc[0]
    assert b["p"] == pytest.approx(stats.ttest_rel(vignettes["b"][:, 1],
                                                   fixed["b"][:, 1]).pvalue)
    assert b["p_bonferroni"] == pytest.approx(min(1.0, 2 * b["p"]))
