"""Coherence: the five checks on the literal M2/M4/M5 edits of MedQA-style stems, and the
coherent variants that avoid them (docs/operators.md, "Coherence")."""

from __future__ import annotations

import pytest

from analysis.audit.coherence import flags
from tests.perturb.helpers import run
from workbench.perturb.battery import resolve_operators
from workbench.perturb.catalogue import COHERENT

COPD = ("A 45-year-old woman comes to the physician because of fatigue. She has chronic "
        "obstructive pulmonary disease. Her husband smokes. Which of the following is the "
        "most likely cause?")
BOY = ("A 6-year-old boy is brought to the emergency department by his mother because of "
       "fever. He is in no acute distress. Which of the following is the next step?")
G4P3 = ("A 32-year-old G4P3 presents with vaginal bleeding. She reports no active blood loss "
        "at home. Which of the following is the most likely diagnosis?")


@pytest.mark.parametrize("operator, stem, check", [
    ("M2_sex", COPD, "pronouns"),             # "A 45-year-old man … She has"
    ("M2_sex", BOY, "pronouns"),              # "A 6-year-old girl … He is"
    ("M2_age_a", BOY, "age_noun"),            # "55-year-old boy"
    ("M2_age_b", G4P3, "age_noun"),           # "75-year-old G4P3"
    ("M5_severity_a", COPD, "named_condition"),  # "acute obstructive pulmonary disease"
    ("M5_severity_b", BOY, "named_condition"),   # "in no chronic distress"
    ("M4_negation_b", G4P3, "double_negative"),  # "does not report no active blood loss"
])
def test_literal_edits_are_flagged(operator, stem, check):
    result = run(operator, stem)
    assert result.fired and check in flags(stem, result.text, result.new)
    coherent = run(f"{operator}_coherent", stem)
    assert not coherent.fired or flags(stem, coherent.text, coherent.new) == []


def test_checks_flag_only_what_the_edit_brought_in():
    # the original already says "in no acute distress"; an edit elsewhere keeps it
    assert flags(BOY, BOY.replace("fever", "a severe fever"), "severe") == []
    # a decimal split in two is a cut number; the edit's own new value is not
    assert flags("Temperature 38.5 and pulse 120.", "Temperature 38.pulse 120 and 5.",
                 None) == ["cut_number"]
    assert flags("A 45-year-old man.", "A 72-year-old man.", "72") == []
    # an Arabic decimal cut in two is a cut number too; digits glued to a letter (a vitamin,
    # obstetric notation, an id) name something and are not numbers an edit can cut
    assert flags("Temperature ٣٨٫٥ and pulse ١٢٠.", "Temperature ٣٨.pulse ١٢٠ and ٥.",
                 None) == ["cut_number"]
    assert flags("Low vitamin levels.", "Low vitamin B12 levels in a G4P3 woman.", None) == []
    # a pronoun after a relative of its sex is the relative's
    assert flags("A 60-year-old man says his wife is ill.",
                 "A 60-year-old man says his wife is ill and she is tired.", None) == []


def test_coherent_variants_rewrite_consistently():
    assert run("M2_sex_coherent", COPD).text == COPD.replace("woman", "man").replace(
        "She has", "He has").replace("Her husband", "His husband")
    boy = run("M2_age_a_coherent", BOY)
    assert boy.text.startswith(f"A {boy.new}-year-old man is brought") and boy.details[
        "noun"] == ["boy", "man"]
    # no target age of 18-60's (5, 12, 75, 85) fits obstetric notation: not fired
    assert not run("M2_age_a_coherent", G4P3).fired
    assert run("M5_severity_a_coherent", BOY).reason == \
        "no severity qualifier outside a named condition"
    # the negated hinge is skipped, the next one in scan order negated
    assert run("M4_negation_b_coherent", G4P3).text.startswith(
        "A 32-year-old G4P3 does not present with vaginal bleeding. She reports no active")


def test_coherent_variants_are_not_in_the_battery_but_can_be_named():
    assert len(COHERENT) == 7
    assert not set(COHERENT) & set(resolve_operators("all"))
    assert not set(COHERENT) & set(resolve_operators("M2"))
    assert resolve_operators("M2_sex,M2_sex_coherent") == ("M2_sex", "M2_sex_coherent")
