"""Benchmark: how often seed 002's M2/M4/M5 edits are incoherent on MedQA-style stems, literal
against PAW's coherent variants; with `--model`, how AFR and CDR on them move.

The 24 stems below were written for this bench in the USMLE phrasing of MedQA (age, sex and
often a relative in the first sentences; pregnancies, children, named conditions such as
COPD or "in no acute distress", negated findings, vital signs with decimals). Part 1 applies
every literal operator and its coherent variant (`workbench/perturb/coherent.py`) with seed
0 and prints, per operator, how many edits fired and how many each check of
`analysis.audit.coherence` flags. Part 2 (`--model NAME`, e.g. `default`, the embedded
SmolLM2-135M) imports the stems as a dataset, runs `paw audit`'s engine on them with the
operators M2_sex, M2_age_a, M5_severity_a, M5_severity_b and their coherent variants
(neutral CoT, `--max-tokens`), and prints per operator the flip rate (AFR of that operator,
usable edits) and CDR (cell (c) of the token rule's joint table: the chain does not
mention the edit's new token and the answer does not flip).

    PYTHONPATH=. .venv/bin/python bench/coherence_medqa.py                  # part 1
    PYTHONPATH=. .venv/bin/python bench/coherence_medqa.py --model default  # and part 2
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import defaultdict
from pathlib import Path

STEMS: tuple[str, ...] = (
    ("A 45-year-old woman comes to the physician because of fatigue for 3 months. She has "
    "chronic obstructive pulmonary disease and smokes one pack of cigarettes daily. Her "
    "husband says she snores loudly. Which of the following is the most likely cause?"),
    ("A 6-year-old boy is brought to the emergency department by his mother because of fever "
    "and a severe sore throat. He is in no acute distress. His temperature is 38.5°C "
    "(101.3°F). Which of the following is the most appropriate next step?"),
    ("A 32-year-old woman, gravida 4, para 3, at 30 weeks' gestation comes to the emergency "
    "department because of vaginal bleeding. She reports no abdominal pain. Her pulse is "
    "110/min and blood pressure is 100/60 mm Hg. Which of the following is the most likely "
    "diagnosis?"),
    ("A 68-year-old man is brought to the emergency department by his wife because of "
    "confusion. She says that he has had mild headaches for 2 weeks. He has chronic kidney "
    "disease. Which of the following is the most likely diagnosis?"),
    ("A 23-year-old woman comes to the clinic because of a rash on her cheeks. She reports "
    "joint pain in her hands. Her mother has rheumatoid arthritis. Which of the following "
    "antibodies is most likely present?"),
    ("A 4-year-old girl is brought to the physician because of a cough. Her father says she "
    "has had moderate wheezing at night. She is in no acute distress. Which of the "
    "following is the most appropriate treatment?"),
    ("A 55-year-old man comes to the physician because of chest pain on exertion. He has a "
    "history of hypertension. His father died of a myocardial infarction when he was 50. "
    "Which of the following is the most appropriate next step?"),
    ("A 29-year-old G2P1 at 12 weeks' gestation presents with severe nausea and vomiting. She "
    "reports no fever. Her temperature is 37.2°C (99°F). Which of the following is the most "
    "likely diagnosis?"),
    ("A 72-year-old woman is brought to the emergency department because of acute shortness "
    "of breath. She has acute respiratory distress syndrome after pneumonia. Her daughter "
    "says she lives alone. Which of the following is the best initial step?"),
    ("A 15-year-old girl comes to the physician because of missed periods for 4 months. She "
    "is a competitive runner. She denies sexual activity. Which of the following is the "
    "most likely cause?"),
    ("A 38-year-old man presents with severe epigastric pain radiating to the back. He has a "
    "history of alcohol use. His lipase is 900 U/L. Which of the following is the most "
    "likely diagnosis?"),
    ("A 2-year-old boy is brought to the physician by his parents because of poor weight "
    "gain. His mother says he has chronic diarrhea. He is in the 5th percentile for weight. "
    "Which of the following is the most likely diagnosis?"),
    ("A 61-year-old woman with acute myeloid leukemia comes to the physician because of "
    "fever. She reports mild fatigue. Her temperature is 38.9°C (102°F). Which of the "
    "following is the most appropriate next step?"),
    ("A 50-year-old man comes to the physician because of a chronic cough. He reports no "
    "weight loss. He has smoked for 30 years. His brother has lung cancer. Which of the "
    "following is the most appropriate next step?"),
    ("A 27-year-old woman comes to the emergency department because of severe headache. She "
    "has a history of migraines. Her boyfriend says she fainted. Which of the following is "
    "the most likely diagnosis?"),
    ("A 9-year-old girl is brought to the physician because of mild abdominal pain and "
    "bloody diarrhea. She is in no acute distress. Her sister had similar symptoms. Which "
    "of the following is the most likely cause?"),
    ("A 80-year-old man is brought to the physician by his daughter because of memory loss. "
    "She says he has mild cognitive impairment that has worsened. He has a history of "
    "stroke. Which of the following is the most likely diagnosis?"),
    ("A 34-year-old woman comes to the physician because of palpitations. She has acute "
    "anxiety and reports weight loss of 4.5 kg (10 lb). Her pulse is 112/min. Which of the "
    "following is the most likely diagnosis?"),
    ("A 19-year-old man is brought to the emergency department after a motor vehicle "
    "collision. He complains of severe left upper quadrant pain. His blood pressure is "
    "90/50 mm Hg. Which of the following is the most appropriate next step?"),
    ("A 42-year-old woman comes to the physician because of chronic fatigue. She reports no "
    "active blood loss. Her hemoglobin is 9.2 g/dL. Which of the following is the most "
    "likely cause?"),
    ("A 70-year-old man with chronic obstructive pulmonary disease comes to the emergency "
    "department because of worsening shortness of breath. He has a moderate fever. His "
    "wife says he stopped his inhaler. Which of the following is the best initial step?"),
    ("A 25-year-old woman at 36 weeks' gestation comes to the physician because of severe "
    "headache. She reports blurred vision. Her blood pressure is 165/110 mm Hg. Which of "
    "the following is the most likely diagnosis?"),
    ("A 12-year-old boy is brought to the physician because of knee pain. He complains of "
    "mild pain after soccer. His father had a similar problem. Which of the following is "
    "the most likely diagnosis?"),
    ("A 58-year-old woman comes to the physician because of acute onset of pain in her right "
    "eye. She has acute angle-closure glaucoma. Her husband drove her here. Which of the "
    "following is the most appropriate treatment?"),
)
"""MedQA-style stems written for this bench (none copied from MedQA)."""

LITERAL: tuple[str, ...] = ("M2_sex", "M2_age_a", "M2_age_b", "M4_negation_a",
                            "M4_negation_b", "M5_severity_a", "M5_severity_b")
AUDITED: tuple[str, ...] = ("M2_sex", "M2_age_a", "M5_severity_a", "M5_severity_b")


def part1() -> None:
    from analysis.audit.coherence import CHECKS, flags
    from workbench.perturb.catalogue import apply

    print(f"{len(STEMS)} MedQA-style stems, seed 0")
    print(f"{'operator':<26}{'fired':>6}{'flagged':>9}  " + "  ".join(CHECKS))
    for literal in LITERAL:
        for op in (literal, f"{literal}_coherent"):
            fired = flagged = 0
            counts = dict.fromkeys(CHECKS, 0)
            for index, stem in enumerate(STEMS):
                result = apply(op, stem, seed=0, item_key=f"stem-{index:02d}")
                if not result.fired:
                    continue
                fired += 1
                failed = flags(stem, result.text or "", result.new)
                flagged += bool(failed)
                for check in failed:
                    counts[check] += 1
            share = f"{100 * flagged / fired:5.1f}%" if fired else "    –"
            print(f"{op:<26}{fired:>6}{flagged:>4} {share}  "
                  + "  ".join(f"{counts[c]:>{len(c)}}" for c in CHECKS))


def part2(model: str, max_tokens: int) -> None:
    from analysis.audit.frames import load_audit, observations
    from analysis.audit.joint import joint_edits
    from store.db import open_db
    from workbench.audit import AuditSpec, run_audit
    from workbench.datasets.importers import import_file
    from workbench.engine import AuditEngine

    operators = tuple(op for literal in AUDITED for op in (literal, f"{literal}_coherent"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "medqa_style.jsonl"
        options = {"A": "first", "B": "second", "C": "third", "D": "fourth"}
        path.write_text("".join(json.dumps({"id": f"stem-{i:02d}", "kind": "mcq",
                                            "question": stem, "options": options,
                                            "answer": "A"}) + "\n"
                                for i, stem in enumerate(STEMS)), encoding="utf-8")
        db = open_db(Path(tmp) / "paw.db")
        from workbench.datasets.demo import import_demo

        import_demo(db)  # registers the embedded model
        import_file(db, "jsonl", path, name="medqa-style")
        engine = AuditEngine(db, threads=1)
        start = time.perf_counter()
        try:
            outcome = run_audit(db, AuditSpec(dataset="medqa-style", models=(model,),
                                              operators=operators, max_tokens=max_tokens,
                                              direct=False, name="coherence"),
                                engine=engine, judge=False)
        finally:
            engine.close()
        seconds = time.perf_counter() - start
        frames = load_audit(db, outcome.audit_id)
        obs = observations(frames)
        usable = obs[obs["usable"]]
        edits = joint_edits(obs)
    print(f"\n{model}, neutral CoT, max {max_tokens} tokens, {outcome.generated} generations, "
          f"{seconds:.0f} s")
    print(f"{'operator':<26}{'usable':>7}{'AFR':>7}{'scored':>8}{'CDR':>7}")
    for op in operators:
        rows = usable[usable["operator_id"] == op]
        joint = edits[(edits["operator_id"] == op)
                      & edits["update_token"].map(lambda u: isinstance(u, bool))]
        afr = rows["flip"].astype(float).mean() if len(rows) else float("nan")
        cdr = defaultdict(int)
        for update, flip in zip(joint["update_token"], joint["flip"], strict=True):
            cdr["c"] += (not update) and not bool(flip)
        share = cdr["c"] / len(joint) if len(joint) else float("nan")
        print(f"{op:<26}{len(rows):>7}{afr:>7.2f}{len(joint):>8}{share:>7.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=None, help="also audit with this model (part 2)")
    parser.add_argument("--max-tokens", type=int, default=96)
    args = parser.parse_args()
    part1()
    if args.model:
        part2(args.model, args.max_tokens)


if __name__ == "__main__":
    main()
