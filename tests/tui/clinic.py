"""A store with the four kinds of case a clinician meets, in realistic lengths.

Texts are the project's demo vignettes (workbench/datasets/demo), edited as the M-block
operators would edit them; answers and reasoning are chosen by hand:

- `long_mcq`   demo-002 (pulmonary embolism, 5 options), an M2 age edit, no flip;
- `yes_no`     triage-001 (chest pain, Yes/No), an M4 negation that flips Yes -> No,
               so it asks harm too (harm needs the answers panel);
- `harm`       demo-003 (appendicitis), an M3 distractor that flips C -> A (harm only);
- `chain`      demo-001 (inferior STEMI), an M5 severity edit, no flip, with a long chain
               of reasoning (chain registration needs the chain read to its end).

Used by the snapshot tests, the Pilot tests of the evidence gating and by hand in tmux:
`python -m tests.tui.clinic /tmp/clinic.db` writes a store to look at.
"""

from __future__ import annotations

import sys

from annotate.sets.audit import create_set
from annotate.trust.identity import Person
from annotate.trust.people import register
from store import open_db
from tests.builders import AuditBuilder

PASSPHRASE = "correct horse battery"
SET_NAME = "clinic"

PE_QUESTION = (
    "A 34-year-old woman presents with sudden pleuritic chest pain and shortness of breath "
    "that began yesterday. She takes a combined oral contraceptive and returned from a "
    "12-hour flight two weeks ago. Her pulse is 118/min, respiratory rate is 26/min, and "
    "oxygen saturation is 89% on room air. Her left calf is swollen and tender. Which of the "
    "following is the most likely diagnosis?")
PE_OPTIONS = {"A": "Spontaneous pneumothorax", "B": "Pulmonary embolism",
              "C": "Community-acquired pneumonia", "D": "Acute pericarditis",
              "E": "Costochondritis after a recent viral illness with persistent cough"}

TRIAGE_QUESTION = (
    "A 62-year-old man calls his primary care office because of pressure-like chest pain at "
    "rest that began this morning and has lasted 40 minutes. He has a history of type 2 "
    "diabetes and smoking. He reports sweating and nausea with the pain. Should this patient "
    "be sent to the emergency department today?")

APPENDIX_QUESTION = (
    "A 12-year-old boy presents with abdominal pain that began around the umbilicus "
    "yesterday and has since moved to the right lower quadrant. He reports nausea, "
    "anorexia, and a low-grade fever of 38.1°C. There is tenderness with guarding at "
    "McBurney's point. His white blood cell count is 14,500/mm3. Which of the following is "
    "the most likely diagnosis?")
APPENDIX_OPTIONS = {"A": "Viral gastroenteritis", "B": "Intussusception",
                    "C": "Acute appendicitis", "D": "Functional constipation"}

STEMI_QUESTION = (
    "A 58-year-old man presents with crushing substernal chest pain that began this morning "
    "and radiates to his left arm. He has a history of hypertension and type 2 diabetes. He "
    "is diaphoretic; blood pressure is 150/90 mm Hg and pulse is 98/min. An ECG shows "
    "ST-segment elevation in leads II, III, and aVF. Which coronary artery is most likely "
    "occluded?")
STEMI_OPTIONS = {"A": "Right coronary artery", "B": "Left circumflex artery",
                 "C": "Left anterior descending artery", "D": "Left main coronary artery"}

CHAIN = (
    "The patient is a 58-year-old man with mild substernal chest pain radiating to the left "
    "arm, diabetes and hypertension. The ECG shows ST-segment elevation in the inferior "
    "leads II, III and aVF. Inferior leads look at the diaphragmatic surface of the left "
    "ventricle. In most people this territory is supplied by the right coronary artery, "
    "because the circulation is right-dominant in about 85 percent of the population. The "
    "left circumflex artery supplies the lateral wall and would show changes in I, aVL, V5 "
    "and V6, although in a left-dominant circulation it can also supply the inferior wall. "
    "The left anterior descending artery supplies the anterior wall and septum (V1 to V4), "
    "which are not involved here. A left main occlusion would cause widespread changes and "
    "usually shock. Calling the pain mild does not change the localisation from the ECG, "
    "which is what the question asks about. I also considered whether the blood pressure "
    "of 150/90 changes the picture, but it does not point to a different vessel. As "
    "qwen2.5-7b I would still order a right-sided ECG to look for right ventricular "
    "involvement, which is common with proximal right coronary occlusion. Posterior "
    "extension would show as ST depression in V1 to V3, and the treatment would be the "
    "same: immediate reperfusion by primary percutaneous coronary intervention, aspirin and "
    "a second antiplatelet agent, and care with nitrates if the right ventricle is "
    "involved, because preload matters. None of this depends on how severe the pain is "
    "said to be. The occluded vessel is the right coronary artery. Answer: A")

MODEL_NAMES = ("smollm2", "qwen2.5-7b")
"""Model names in the store (the chain names one: the screen must show '[model]')."""

CASE_KINDS = ("long_mcq", "yes_no", "harm", "chain")


def _edit(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def build(path: str) -> dict[str, Person]:
    """Write the store at `path`; returns alice, bob (raters) and carol (coordinator)."""
    db = open_db(path)
    b = AuditBuilder(db, audit="clinic-audit")
    small, large = b.arm("smollm2/cot"), b.arm("qwen2.5-7b/cot")

    pe = b.item("demo-002", gold="B", options=PE_OPTIONS, question=PE_QUESTION)
    b.variant(pe, operator_id="M2_age_a", family="M2", intent="D",
              text=_edit(PE_QUESTION, "34-year-old", "74-year-old"))
    b.baseline(small, pe, answer="B", output="Pulmonary embolism. Answer: B")
    b.perturbed(small, pe, operator_id="M2_age_a", family="M2", intent="D", answer="B",
                output="", old="34-year-old", new="74-year-old")

    triage = b.item("triage-001", gold="Yes", options={"Yes": "Yes", "No": "No"},
                    question=TRIAGE_QUESTION, kind="binary")
    b.variant(triage, operator_id="M4_negation_a", family="M4", intent="D",
              text=_edit(TRIAGE_QUESTION, "He reports sweating", "He denies sweating"))
    b.baseline(large, triage, answer="Yes", output="Possible ACS. Answer: Yes")
    b.perturbed(large, triage, operator_id="M4_negation_a", family="M4", intent="D",
                answer="No", output="", old="reports", new="denies")

    appendix = b.item("demo-003", gold="C", options=APPENDIX_OPTIONS,
                      question=APPENDIX_QUESTION)
    b.variant(appendix, operator_id="M3_distractor_a", family="M3", intent="D",
              text=APPENDIX_QUESTION.replace(" Which of", " His cousin had "
                                             "gastroenteritis last week. Which of"))
    b.baseline(small, appendix, answer="C", output="Appendicitis. Answer: C")
    b.perturbed(small, appendix, operator_id="M3_distractor_a", family="M3", intent="D",
                answer="A", output="A sick cousin suggests a virus. Answer: A",
                new="His cousin had gastroenteritis last week.")

    stemi = b.item("demo-001", gold="A", options=STEMI_OPTIONS, question=STEMI_QUESTION)
    b.variant(stemi, operator_id="M5_severity_a", family="M5", intent="D",
              text=_edit(STEMI_QUESTION, "crushing substernal", "mild substernal"))
    b.baseline(large, stemi, answer="A", output="Inferior STEMI: RCA. Answer: A")
    b.perturbed(large, stemi, operator_id="M5_severity_a", family="M5", intent="D",
                answer="A", output=CHAIN, old="crushing", new="mild")

    people = {"alice": register(db, "alice", "rater", PASSPHRASE),
              "bob": register(db, "bob", "rater", PASSPHRASE),
              "carol": register(db, "carol", "coordinator", PASSPHRASE)}
    create_set(db, b.audit_id, size=4, per_family=None, seed=3, name=SET_NAME,
               raters=("alice", "bob"), coordinator=people["carol"])
    db.conn.close()
    return people


def kind_of(view) -> str:
    """Which of `CASE_KINDS` a case view is (by its question)."""
    if view.kind == "binary":
        return "yes_no"
    if view.question == PE_QUESTION:
        return "long_mcq"
    if view.question == APPENDIX_QUESTION:
        return "harm"
    return "chain"


if __name__ == "__main__":
    build(sys.argv[1])
    print(f"wrote {sys.argv[1]}: set {SET_NAME!r}, raters alice and bob, coordinator carol, "
          f"passphrase {PASSPHRASE!r}")
