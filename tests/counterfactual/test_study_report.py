"""Loading a study and its report: a study written by hand (answers and distributions chosen),
so every number in the tables can be worked out on paper; then a fake-backend study through
`paw report`'s registry in every format."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from analysis.counterfactual.data import load_study
from analysis.counterfactual.report import StudyReportOptions, build_report
from analysis.counterfactual.tables import TestCell, paper_table
from store.db import dumps
from tests.builders import AuditBuilder
from workbench.counterfactual import resolve_targets, run_study
from workbench.kinds import KINDS, build_run_report

YES_NO = {"Yes": "Yes", "No": "No"}


class StudyWriter:
    """Writes a study straight into the tables, in the planner's shape (docs/counterfactual.md):
    'original'/'target' jobs name the unit's targeted variant, baseline variants name it in
    details.reference_variant_id; k = 3 samples per prompt."""

    def __init__(self, db) -> None:
        self.b = AuditBuilder(db, dataset="hand", audit="hand-study", kind="study",
                              config={"seeds": [0, 1, 42], "temperature": 0.7,
                                      "mode": "direct", "alternative": "less",
                                      "tolerance": 0.03, "max_attempts": 4,
                                      "paraphraser": "default", "targets": ["gender_swap"],
                                      "baselines": ["paraphrase_adjusted", "fixed_sentence"]})
        self.db = db
        self.arm = self.b.arm("m/direct@1")

    def _prompt(self, item: int, role: str, slot: int, answers, probs) -> None:
        for index, answer in enumerate(answers):
            _, key = self.b.generation(self.arm, item, answer=answer, mode="direct",
                                       option_probs=probs)
            self.db.execute("UPDATE generations SET labels_json = ? WHERE key = ?",
                            [dumps(list(YES_NO)), key])
            self.b.job(self.arm, item, role, variant_id=slot, generation_key=key,
                       sample_index=index)

    def unit(self, name: str, *, direction: int, original, target, paraphrase, fixed,
             fraction: tuple[float, float] = (0.05, 0.05)) -> int:
        """One item under gender_swap; each role is (answers of 3 samples, P(Yes))."""
        item = self.b.item(name, gold="Yes", kind="binary", question=f"{name}?",
                           options=YES_NO)
        unit = self.b.variant(item, operator_id="gender_swap", family="demographic",
                              text=f"{name} swapped?")
        self.db.execute("UPDATE variants SET details_json = ? WHERE id = ?",
                        [dumps({"direction": direction}), unit])
        for role, (answers, p_yes) in (("original", original), ("target", target)):
            self._prompt(item, role, unit, answers, {"Yes": p_yes, "No": 1 - p_yes})
        for role, operator, (answers, p_yes) in (
                ("paraphrase", "paraphrase_token_adjusted", paraphrase),
                ("fixed", "fixed_sentence", fixed)):
            variant = self.b.variant(item, operator_id=operator, family="baseline",
                                     text=f"{name} {role}?", seed=unit)
            details = {"reference_variant_id": unit}
            if role == "paraphrase":
                details.update(target_fraction=fraction[0], achieved_fraction=fraction[1],
                               within_tolerance=abs(fraction[0] - fraction[1]) <= 0.03,
                               tolerance=0.03, source="llm", attempts=[{"status": "accepted"}])
            self.db.execute("UPDATE variants SET details_json = ? WHERE id = ?",
                            [dumps(details), variant])
            self._prompt(item, role, variant, answers, {"Yes": p_yes, "No": 1 - p_yes})
        return item


@pytest.fixture
def hand(db):
    w = StudyWriter(db)
    # q1: the gender swap flips Yes → No (majority 2 of 3); both baselines keep Yes.
    w.unit("q1", direction=1, original=(("Yes", "Yes", "No"), 0.8),
           target=(("No", "No", "Yes"), 0.4), paraphrase=(("Yes", "Yes", "Yes"), 0.7),
           fixed=(("Yes", "Yes", None), 0.8))
    # q2: nothing flips; the paraphrase moves the distribution more than the swap.
    w.unit("q2", direction=-1, original=(("No", "No", "No"), 0.2),
           target=(("No", "No", "No"), 0.25), paraphrase=(("No", None, None), 0.4),
           fixed=(("No", "No", "No"), 0.2), fraction=(0.04, 0.09))
    # q3: the paraphrase flips No → Yes by a 1–1 tie broken by its distribution (0.6).
    w.unit("q3", direction=1, original=(("No", "No", "Yes"), 0.3),
           target=(("No", "No", "No"), 0.3), paraphrase=(("Yes", "No", None), 0.6),
           fixed=(("No", "No", "No"), 0.3))
    return w


def test_majority_votes_ties_and_pairing(db, hand):
    data = load_study(db, "hand-study")
    prompts = data.prompts.set_index(["item", "role"])
    assert prompts.loc[("q1", "target"), "answer"] == "No"
    assert prompts.loc[("q1", "fixed"), "parsed"] == 2
    assert prompts.loc[("q2", "paraphrase"), "answer"] == "No"
    q3 = prompts.loc[("q3", "paraphrase")]
    assert (q3["answer"], bool(q3["tie"])) == ("Yes", True)  # tie → higher P (Yes 0.6)
    assert data.prompts["task"].unique().tolist() == ["yes/no"]
    para = next(c for c in data.comparisons if c.baseline == "adjusted paraphrase")
    assert para.labels == ("Yes", "No") and para.kind == "main"
    # Codes: Yes = 0, No = 1; items in order q1, q2, q3.
    assert para.orig.tolist() == [0, 1, 1]
    assert para.targeted.tolist() == [1, 1, 1]
    assert para.based.tolist() == [0, 1, 0]
    assert para.direction.tolist() == [1, -1, 1]
    assert para.p_orig[:, 0] == pytest.approx([0.8, 0.2, 0.3])


def test_table4_cells_worked_by_hand(db, hand):
    report = build_report(db, "hand-study", options=StudyReportOptions(n_boot=200, seed=0))
    table = report.section("table4").frame
    row = table.iloc[0]
    # Flip rates: swap flips q1 only → 1/3; paraphrase flips q3 only → 1/3; FR diff 0.000.
    assert str(row["m FR"]).rstrip("*") == "0.000"
    # JSD of (0.8, 0.2) vs (0.4, 0.6): M = (0.6, 0.4);
    # ½[0.8·log2(0.8/0.6) + 0.2·log2(0.2/0.4)] + ½[0.4·log2(0.4/0.6) + 0.6·log2(0.6/0.4)]
    # = ½[0.3320 − 0.2] + ½[−0.2340 + 0.3510] = 0.0660 + 0.0585 = 0.1245 (swap, q1).
    tests = _tests(db)
    jsd = tests[(tests["baseline"] == "adjusted paraphrase") & (tests["measure"] == "jsd")]
    from analysis.counterfactual.definitions import js_divergence
    swap = js_divergence(np.array([[0.8, 0.2], [0.2, 0.8], [0.3, 0.7]]),
                         np.array([[0.4, 0.6], [0.25, 0.75], [0.3, 0.7]]))
    para = js_divergence(np.array([[0.8, 0.2], [0.2, 0.8], [0.3, 0.7]]),
                         np.array([[0.7, 0.3], [0.4, 0.6], [0.6, 0.4]]))
    assert swap[0] == pytest.approx(0.1245, abs=5e-4)
    assert jsd["effect"].iloc[0] == pytest.approx(np.mean(swap - para))
    assert str(row["m JSD"]).rstrip("*") == f"{np.mean(swap - para):.3f}"
    assert row["m JSD"].value == pytest.approx(np.mean(swap - para))
    # MI: original (Yes, No, No) × swap (No, No, No): the swapped column is constant → MI 0,
    # φ 0 (degenerate). Original × paraphrase (Yes, No, Yes): table [[1, 0], [1, 1]],
    # p = [[1/3, 0], [1/3, 1/3]], rows (1/3, 2/3), cols (2/3, 1/3):
    # MI = 1/3·log2((1/3)/(2/9)) + 1/3·log2((1/3)/(4/9)) + 1/3·log2((1/3)/(2/9))
    #    = 2/3·0.5849625 − 1/3·0.4150375 = 0.3899750 − 0.1383458 = 0.2516292
    # φ = (1/3·1/3 − 0·1/3)/√(1/3·2/3·2/3·1/3) = (1/9)/(2/9) = 0.5
    mi = tests[(tests["baseline"] == "adjusted paraphrase") & (tests["measure"] == "mi")].iloc[0]
    assert (mi["target_value"], mi["baseline_value"]) == pytest.approx((0.0, 0.2516292))
    assert str(row["m MI"]).rstrip("*") == "-0.252"
    phi = tests[(tests["baseline"] == "adjusted paraphrase") & (tests["measure"] == "phi")].iloc[0]
    assert (phi["target_value"], phi["baseline_value"]) == pytest.approx((0.0, 0.5))
    assert "targeted table has a constant margin" in phi["reason"]


def _tests(db):
    from analysis.counterfactual.data import load_study
    from analysis.counterfactual.report import compute

    return compute(load_study(db, "hand-study"), n_boot=200, seed=0)


def test_regression_worked_by_hand(db, hand):
    tests = _tests(db)
    beta = tests[(tests["baseline"] == "fixed sentence") & (tests["measure"] == "beta_diff")]
    # y = log(p/(1 − p)); Δ = y_target − y_fixed per item, d = (+1, −1, +1):
    # q1: log(0.4/0.6) − log(0.8/0.2) = −0.4054651 − 1.3862944 = −1.7917595
    # q2: log(0.25/0.75) − log(0.2/0.8) = −1.0986123 + 1.3862944 = 0.2876821
    # q3: 0
    # β̂ = Σ dΔ / Σ d² = (−1.7917595 − 0.2876821 + 0)/3 = −0.6931472 (= −log 2)
    assert beta["effect"].iloc[0] == pytest.approx(-math.log(2))
    assert beta["p"].iloc[0] < 0.5  # H1: β < 0, and β̂ < 0


def test_paraphrase_agreement_section(db, hand):
    frame = build_report(db, "hand-study", options=StudyReportOptions(n_boot=50)) \
        .section("paraphrase").frame
    overall = frame[frame["model"] == "all"].iloc[0]
    # |0.05 − 0.05| = 0 (q1, q3) and |0.09 − 0.04| = 0.05 (q2): mean 0.0167; 2 of 3 within 0.03.
    assert overall["mean_abs_diff"] == pytest.approx(0.05 / 3)
    assert overall["within_tolerance"] == pytest.approx(2 / 3)
    assert overall["n_llm"] == 3


def test_report_through_the_registry_in_every_format(study_db, fake_model, make_engine,
                                                     tmp_path):
    from tests.counterfactual.test_study_plan import _spec

    outcome = run_study(study_db, _spec(targets=resolve_targets(
        "gender_swap,control_recall,control_precision")), engine=make_engine())
    assert KINDS["study"].report == "analysis.counterfactual.report:build_report"
    report = build_run_report(study_db, outcome.study, kind="study", n_boot=100, seed=1)
    assert report.meta["kind"] == "study" and report.meta["audit_id"] == outcome.study_id
    keys = [s.json_key for s in report.sections]
    # 3 items: every comparison rests on fewer than MIN_ITEMS (15) pairs, so the warning comes first.
    assert keys == ["warning", "table4", "table5", "table6", "table7", "table8",
                    "table8_fixed", "table11", "tests", "paraphrase", "votes", "design"]
    checks = report.section("table6").frame
    assert set(checks["check"]) <= {"Recall", "Precision"}
    assert list(checks.columns) == ["check", "task", "fake MI", "fake φ", "fake FR",
                                    "fake JSD", "fake KL"]
    tests = report.section("tests").frame
    # Every significant mark in Table 4 belongs to a test significant after correction.
    table4 = report.section("table4").frame
    marked = {(r.perturbation, c.split(" ", 1)[1]) for r in table4.itertuples(index=False)
              for c, v in zip(table4.columns, r) if isinstance(v, TestCell)
              and str(v).endswith("*")}
    significant = {(r.perturbation, r.measure) for r in tests.itertuples(index=False)
                   if r.significant and r.baseline == "adjusted paraphrase"
                   and r.group != "Regression" and r.perturbation == "gender_swap"}
    assert marked == significant
    md, pngs = report.write(tmp_path / "study.md", "md")
    text = md.read_text()
    assert "Table 4: main results against the adjusted paraphrase baseline" in text
    assert pngs and pngs[0].read_bytes().startswith(b"\x89PNG")
    html, _ = report.write(tmp_path / "study.html", "html")
    assert "<table" in html.read_text()
    payload = json.loads(report.to_json())
    assert set(payload["tables"]) == set(keys)
    row = payload["tables"]["tests"]["rows"][0]
    assert {"p", "p_bonferroni", "p_holm", "family", "family_size"} <= set(row)
    # Table 4–7 cells carry numbers: value, p and the flag as separate fields.
    cell = payload["tables"]["table4"]["rows"][0]["fake FR"]
    assert set(cell) == {"value", "p", "significant"}
    fr = tests[(tests["perturbation"] == "gender_swap") & (tests["measure"] == "FR")
               & (tests["baseline"] == "adjusted paraphrase")].iloc[0]
    assert cell["value"] == pytest.approx(fr["effect"]) and cell["p"] == pytest.approx(fr["p"])
    assert cell["significant"] is bool(fr["significant"])


def test_paper_table_layout_marks_significance():
    import pandas as pd

    tests = pd.DataFrame([
        {"model": "8B", "baseline": "b", "kind": "main", "measure": m, "target": "colorful",
         "task": "MAN", "effect": e, "significant": s}
        for m, e, s in (("mi", -0.046, False), ("phi", -0.181, False), ("fr", 0.17, True),
                        ("jsd", 0.027, True), ("kl", 0.109, True))])
    tests["p"] = [0.5, 0.4, 0.001, 0.0, 0.002]
    frame = paper_table(tests, "b", "main")
    assert [str(v) for v in frame.iloc[0]] == ["colorful", "MAN", "-0.046", "-0.181", "0.170*",
                                               "0.027*", "0.109*"]
    assert frame.iloc[0, 4].as_json() == {"value": 0.17, "p": 0.001, "significant": True}


def test_prompts_with_no_parsed_sample_do_not_break_the_report(study_db, fake_model,
                                                              make_engine):
    # Regression: `paw study … --targets gender_swap,control_recall,control_precision` then
    # `paw report --study` crashed in data.py (`tuple.index(x): x not in tuple`) when every
    # sample of a control prompt went unparsed: pandas stores the missing answer as NaN.
    from tests.counterfactual.conftest import fake_responder
    from tests.counterfactual.test_study_plan import _spec

    def unparsed_controls(prompt: str, sampler) -> str:
        if "Is this patient male?" in prompt.rsplit("Question:", 1)[-1]:
            return "C. No, this patient is female."  # no Yes/No label where it is read
        return fake_responder(prompt, sampler)

    outcome = run_study(study_db, _spec(targets=resolve_targets(
        "gender_swap,control_recall,control_precision")), engine=make_engine(
        unparsed_controls))
    data = load_study(study_db, outcome.study)
    controls = data.prompts[data.prompts["check"]]
    assert len(controls) and (controls["parsed"] == 0).all()
    assert controls["answer"].isna().all()
    for c in data.comparisons:
        if c.kind == "check":
            assert (c.orig == -1).all() and (c.targeted == -1).all()
    report = build_report(study_db, outcome.study, options=StudyReportOptions(n_boot=50))
    tests = report.section("tests").frame
    checks = tests[tests["perturbation"].isin(["control_recall", "control_precision"])
                   & (tests["group"] == "Aggregate")]
    assert len(checks) and checks["reason"].str.contains("no pairs").all()


def test_empty_check_tables_say_so_rather_than_print_a_blank_row(db, hand):
    report = build_report(db, "hand-study", options=StudyReportOptions(n_boot=20))
    for key in ("table6", "table7"):  # the hand study has no control targets
        section = report.section(key)
        assert section.frame.empty and section.note.startswith("Empty: no recall or precision")
    markdown = report.to_markdown()
    table6 = markdown.split("## Table 6")[1].split("## ")[0]
    assert "| (none) |" in table6 and "|  |  |" not in table6


def test_paraphrase_note_names_its_paraphraser(db, hand):
    llm = build_report(db, "hand-study", options=StudyReportOptions(n_boot=20))
    assert "after 4 LLM attempts (default)" in llm.section("paraphrase").note
    db.execute("UPDATE audits SET config_json = json_set(config_json, '$.paraphraser', "
               "'table') WHERE name = 'hand-study'")
    table = build_report(db, "hand-study", options=StudyReportOptions(n_boot=20))
    note = table.section("paraphrase").note
    assert "(--paraphraser table: no LLM attempts)" in note and "LLM attempts (" not in note
