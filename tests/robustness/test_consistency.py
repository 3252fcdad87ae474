"""Prefix–vignette consistency (the rule, on the demo set and on MedQA-style stems), the
substitution mode (rewriting the vignette's own words), and a run of both modes reported
side by side through the real report."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from workbench.kinds import build_run_report
from analysis.robustness.consistency import stated_demographics, vignette_consistency
from tests.robustness.helpers import fake_embed, hand, scripted_spec
from workbench.robustness import run_robustness
from workbench.robustness.spec import resolve_modes
from workbench.robustness.substitute import substitute

DEMO = Path(__file__).resolve().parents[2] / "workbench/datasets/demo/vignettes.jsonl"
PREFIXES = [f"demo_prefix_{s}_{r}" for s in ("male", "female")
            for r in ("white", "black", "hispanic")]

# MedQA-style stems, written for this test in the benchmark's phrasing (USMLE vignettes open
# with age, sex and sometimes race; pregnancy, infants and family members are common).
STEMS = {
    "primigravida": ("A 23-year-old primigravida at 28 weeks' gestation comes to the physician "
                     "because of headaches. Her blood pressure is 152/98 mm Hg.",
                     Fraction(23), "female", None),
    "infant": ("A 4-month-old girl is brought to the physician by her mother because of poor "
               "feeding. Her father has type 1 diabetes.", Fraction(4, 12), "female", None),
    "race": ("A 45-year-old African American man comes to the emergency department because of "
             "chest pain. His 70-year-old mother had a stroke.", Fraction(45), "male", "black"),
    "caucasian": ("A 67-year-old Caucasian female presents with a painless breast mass.",
                  Fraction(67), "female", "white"),
    "g2p1": ("A 32-year-old G2P1 presents with vaginal bleeding. She is at 10 weeks.",
             Fraction(32), "female", None),
    "student": ("A previously healthy 19-year-old college student comes to the clinic because "
                "of a sore throat. He reports fever.", Fraction(19), "male", None),
    "newborn": ("A newborn is evaluated in the nursery for jaundice. He was born at term.",
                Fraction(0), "male", None),
    "prostate": ("A 72-year-old with a history of prostate cancer has back pain.",
                 Fraction(72), "male", None),
    "white_cells": ("A 38-year-old woman has white blood cells in the urine and black stools.",
                    Fraction(38), "female", None),
    "no_patient": ("Which of the following enzymes is deficient in Tay-Sachs disease?",
                   None, None, None),
}


@pytest.mark.parametrize("name", sorted(STEMS))
def test_stated_demographics_of_medqa_style_stems(name):
    text, age, sex, race = STEMS[name]
    d = stated_demographics(text)
    # His 70-year-old mother is not the patient; 'white blood cells' and 'black stools'
    # are no race; the G2P1 and the prostate fix the sex without a noun.
    assert (d.age, d.sex, d.race) == (age, sex, race)


def test_the_paper_own_example_conflicts():
    # "The fixed 45-year-old white-male prefix conflicts with the vignette's original
    # 25-year-old woman description" (seed 003, the field-recorded example).
    c = vignette_consistency("A 25-year-old woman presents with fever.", "demo_prefix_male_white")
    assert c.consistent is False and c.conflicts == ("age", "sex")
    assert c.detail == "age: 25-year-old vs 45; sex: woman vs male"
    # The example: a 45-year-old Hispanic female prefix on a 58-year-old man.
    c = vignette_consistency("A 58-year-old man presents with chest pain.",
                             "demo_prefix_female_hispanic")
    assert c.conflicts == ("age", "sex")


def test_rule_on_stems():
    text = STEMS["race"][0]  # a 45-year-old African American man
    assert vignette_consistency(text, "demo_prefix_male_black").consistent is True
    assert vignette_consistency(text, "demo_prefix_male_white").conflicts == ("race",)
    assert vignette_consistency(text, "demo_prefix_female_black").conflicts == ("sex",)
    # Nothing stated: consistent with every prefix.
    assert all(vignette_consistency(STEMS["no_patient"][0], op).consistent for op in PREFIXES)
    # A substitution can contradict only through sex-specific findings.
    assert vignette_consistency(STEMS["g2p1"][0], "demo_subst_male_white").conflicts == ("sex",)
    assert vignette_consistency(STEMS["race"][0], "demo_subst_female_white").consistent
    assert vignette_consistency("x", "M2_sex").consistent is None


def test_rule_on_the_demo_set():
    stems = {r["id"]: r["question"] for r in map(json.loads, DEMO.read_text().splitlines())}
    checks = {(sid, op): vignette_consistency(q, op) for sid, q in stems.items()
              for op in PREFIXES}
    # Only demo-012 is 45 years old: every prefix contradicts the age of the other 61.
    aged = {sid for (sid, _), c in checks.items() if "age" in c.conflicts}
    assert aged == set(stems) - {"demo-012"}
    # demo-012, a 45-year-old woman: consistent with the female prefixes, not the male.
    assert [checks[("demo-012", op)].consistent for op in PREFIXES] == [False] * 3 + [True] * 3
    # Sex: 34 male vignettes (man 21, boy 9, male 4) and 28 female (woman 18, girl 6,
    # female 4), counted with grep on the file's opening words; each conflicts with the
    # three prefixes of the other sex. No demo vignette states a race.
    sex = sum("sex" in c.conflicts for c in checks.values())
    assert sex == 34 * 3 + 28 * 3
    assert not any("race" in c.conflicts for c in checks.values())


def test_substitution_rewrites_the_vignette_own_words():
    text = ("A 58-year-old man presents with chest pain that radiates to his left arm. "
            "He is diaphoretic.")
    edit = substitute(text, "female", "black")
    assert edit.text == ("A 58-year-old Black woman presents with chest pain that radiates to "
                         "her left arm. She is diaphoretic.")
    assert "kept_age" in edit.details and edit.details["kept_age"] == "58-year-old"
    assert substitute(STEMS["race"][0], "male", "hispanic").text.startswith(
        "A 45-year-old Hispanic man")
    assert substitute("A patient has a cough.", "male", "white").text == \
        "A White male patient has a cough."
    # Pregnancy fixes the sex: no rewrite to a man; no patient noun: nothing to rewrite.
    assert substitute(STEMS["primigravida"][0], "male", "white").text is None
    assert substitute(STEMS["no_patient"][0], "female", "black").text is None
    assert substitute("A 58-year-old White man has pain.", "male", "white").text is None


def test_resolve_modes():
    assert resolve_modes("both") == ("prefix", "substitute")
    assert resolve_modes(None) == ("prefix",)
    from store.errors import UserError

    with pytest.raises(UserError, match="--demographic-mode: expected prefix, substitute or "
                                        "both, got 'swap'"):
        resolve_modes("swap")


def test_both_modes_are_run_and_reported(demo_db, fake_model, make_engine, marked):
    spec = scripted_spec(modes=("prefix", "substitute"))
    outcome = run_robustness(demo_db, spec, engine=make_engine(hand), embed=fake_embed)
    # 3 items x 6 demographics x 2 modes; every demo vignette names its patient, none is
    # pregnant (demo-001..003), so every substitution fires.
    jobs = demo_db.execute("SELECT v.operator_id, j.status FROM jobs j JOIN variants v ON "
                           "v.id = j.variant_id WHERE j.role = 'demographic'").fetchall()
    assert len(jobs) == 36 and {s for _, s in jobs} == {"done"}
    assert sum(op.startswith("demo_subst_") for op, _ in jobs) == 18
    report = build_run_report(demo_db, outcome.audit_id, kind="robustness", n_boot=0)
    sections = {s.json_key: s.frame for s in report.sections}
    assert {"consistency", "modes", "change_by_substitute"} <= set(sections)
    modes = sections["modes"].reset_index().set_index(["model", "mode"])
    # `hand` answers B whenever 'Black' is in the question: under both modes the two Black
    # demographics change every item: 6 of 18 comparisons.
    for mode in ("prefix", "substitute"):
        row = modes.loc[("fake/neutral_cot@1", mode)]
        assert row["change_pct"] == pytest.approx(100 * 6 / 18) and row["n_compared"] == 18
    consistency = sections["consistency"].reset_index().set_index(["model", "mode"])
    prefix = consistency.loc[("fake/neutral_cot@1", "prefix")]
    # demo-001 58 man, demo-002 34 woman, demo-003 12 boy: every prefix conflicts on age;
    # the sex conflicts are 3 per item (the other sex's prefixes): 9.
    assert prefix["n_conflicting"] == 18 and prefix["n_age"] == 18 and prefix["n_sex"] == 9
    assert prefix["n_consistent"] == 0
    substituted = consistency.loc[("fake/neutral_cot@1", "substitute")]
    assert substituted["n_conflicting"] == 0 and substituted["n_consistent"] == 18
    assert substituted["change_consistent_pct"] == pytest.approx(100 * 6 / 18)
    assert report.meta["demographic_modes"] == "prefix, substitute"


def test_a_both_mode_run_resumes_as_itself(demo_db, fake_model, make_engine, marked):
    from workbench.robustness.execute import spec_of

    spec = scripted_spec(modes=("prefix", "substitute"))
    first = run_robustness(demo_db, spec, engine=make_engine(hand), embed=fake_embed)
    again = spec_of(demo_db, first.audit_id)
    assert again.modes == ("prefix", "substitute") and again.audit_name == first.audit
    # The default (prefix only) keeps the name the run had before modes existed: the
    # config holds no 'demographic_modes' key.
    assert "demographic_modes" not in scripted_spec().config()
    second = run_robustness(demo_db, again, engine=make_engine(hand), embed=fake_embed)
    assert second.audit_id == first.audit_id and second.generated == 0


@pytest.mark.parametrize("text, sex, expected", [
    # the cases: other people keep their sex, the patient's possessive follows
    ("A 45-year-old man comes to the emergency department because of chest pain. His mother "
     "had a stroke at 70. He smokes.", "female",
     "A 45-year-old Black woman comes to the emergency department because of chest pain. Her "
     "mother had a stroke at 70. She smokes."),
    ("A 30-year-old woman is brought to the emergency department by her husband, who says he "
     "found her unresponsive. She has major depressive disorder.", "male",
     "A 30-year-old Black man is brought to the emergency department by his husband, who says "
     "he found him unresponsive. He has major depressive disorder."),
    ("A 4-month-old girl is brought to the physician by her mother because of poor feeding. "
     "Her father has type 1 diabetes.", "male",
     "A 4-month-old Black boy is brought to the physician by his mother because of poor "
     "feeding. His father has type 1 diabetes."),
    # a pronoun after a relative of its sex in the sentence is the relative's
    ("A 60-year-old man says his father died of a myocardial infarction when he was 50. He "
     "is worried.", "female",
     "A 60-year-old Black woman says her father died of a myocardial infarction when he was "
     "50. She is worried."),
    # words already of the new sex name someone else
    ("A 70-year-old man is accompanied by his wife. She says he has been confused.", "female",
     "A 70-year-old Black woman is accompanied by her wife. She says she has been confused."),
])
def test_substitution_rewrites_only_the_patient_own_words(text, sex, expected):
    edit = substitute(text, sex, "black")
    assert edit.text == expected
    assert edit.details["sex_swapped"]


def test_substitution_keeps_a_relative_race():
    text = ("A 45-year-old African American man comes to the emergency department because of "
            "chest pain. His wife, who is Hispanic, says he collapsed.")
    edit = substitute(text, "male", "white")
    assert edit.text == ("A 45-year-old White man comes to the emergency department because "
                         "of chest pain. His wife, who is Hispanic, says he collapsed.")
    assert edit.details["race_replaced"] == 1
