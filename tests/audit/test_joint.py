"""Chain-update × answer-flip table and CDR, under the token rule and the LLM judge."""

from __future__ import annotations

import pytest

from analysis.audit.tables import audit_tables, compute_audit

from analysis.audit.frames import load_audit
from tests.builders import AuditBuilder


def _joint_audit(db) -> AuditBuilder:
    b = AuditBuilder(db)
    arm = b.arm("m/cot")
    qs = [b.item(f"q{i}") for i in range(1, 10)]
    for q in qs:
        b.baseline(arm, q, answer="A")

    def m5(q, answer, output, new="chronic"):
        return b.perturbed(arm, q, operator_id="M5_severity_a", intent="D", answer=answer,
                           output=output, old="acute", new=new)

    g1 = m5(qs[0], "B", "Chronic mountain sickness ...")   # update (case-folded), flip -> b
    g2 = m5(qs[1], "A", "so the chronic form ...")          # update, keep -> a
    g3 = m5(qs[2], "A", "acute mountain sickness ...")      # no update, keep -> c
    g4 = m5(qs[3], "A", "AMS is treated with ...")           # no update, keep -> c
    # M4: any negation pattern counts as an update, whatever the new token.
    b.perturbed(arm, qs[4], operator_id="M4_negation_a", intent="D", answer="A",
                output="The patient denies fever", new="does not report")  # a
    b.perturbed(arm, qs[5], operator_id="M4_negation_a", intent="D", answer="C",
                output="Fever is present", new="does not report")          # d
    # M2 sex female -> male: 'female' in the chain does not mention 'male'.
    b.perturbed(arm, qs[6], operator_id="M2_sex", intent="D", answer="A",
                output="A female patient ...", new="male")                 # c
    # No new token recorded: the token rule cannot score it.
    m5(qs[7], "A", "whatever", new=None)
    # M3 is preserving and outside M2/M4/M5: not in the table.
    b.perturbed(arm, qs[8], operator_id="M3_distractor_a", intent="P", answer="B",
                output="coffee")
    # Judge verdicts on four of the M5 edits.
    b.judge(g1.generation_id, "yes")   # update, flip -> b
    b.judge(g2.generation_id, "no")    # no update, keep -> c
    b.judge(g3.generation_id, "Yes")   # update, keep -> a (verdicts are case-folded)
    b.judge(g4.generation_id, "no")    # no update, keep -> c
    return b


def test_token_rule_joint_table_and_cdr(db):
    _joint_audit(db)
    r = compute_audit(load_audit(db), n_boot=50, seed=0).arms[0]
    table = r.joint_token
    # a = {q2, q5}, b = {q1}, c = {q3, q4, q7}, d = {q6}; n = 7, one unscored (q8)
    assert table.counts == {"a": 2, "b": 1, "c": 3, "d": 1}
    assert table.n == 7
    assert table.n_unscored == 1
    # CDR = cell (c) = 3/7
    assert r.stats["cdr"].point == pytest.approx(3 / 7)
    assert sum(s.point for s in table.shares.values()) == pytest.approx(1.0)


def test_judge_cdr_uses_verdicts_only_where_present(db):
    _joint_audit(db)
    r = compute_audit(load_audit(db), n_boot=50, seed=0).arms[0]
    [(method, table)] = r.joint_judge.items()
    assert method == "llm_judge:synthetic"
    # Judged: q1 b, q2 c, q3 a, q4 c -> n = 4, CDR = 2/4; the other 4 joint edits unscored
    assert table.counts == {"a": 1, "b": 1, "c": 2, "d": 0}
    assert table.cdr.point == pytest.approx(0.5)
    assert table.n_unscored == 4


def test_tables_show_both_rules_and_a_pooled_panel_row(db):
    _joint_audit(db)
    tables = audit_tables(db, n_boot=50)
    joint = tables["joint"]
    assert list(joint.index) == ["m/cot", "Panel"]
    # Row percentages: c = 3/7 = 42.86 %
    assert joint.loc["m/cot", "(c) no upd, keep"] == pytest.approx(300 / 7)
    assert joint.loc["Panel", "n"] == 7
    rules = tables["cdr_rules"]
    assert rules.loc["m/cot", "cdr_token_pct"] == pytest.approx(300 / 7)
    assert rules.loc["m/cot", "cdr_judge_pct[llm_judge:synthetic]"] == pytest.approx(50.0)
    summary = tables["summary"]
    assert summary.loc["m/cot", "cdr_judge"] == pytest.approx(0.5)


def test_no_judge_verdicts_means_no_judge_column(db):
    b = AuditBuilder(db)
    arm = b.arm("m/cot")
    q = b.item("q1")
    b.baseline(arm, q, answer="A")
    b.perturbed(arm, q, operator_id="M5_severity_a", intent="D", answer="A", output="x",
                new="chronic")
    tables = audit_tables(db, n_boot=20)
    assert not any("judge" in c for c in tables["summary"].columns)
    assert tables["summary"].loc["m/cot", "cdr"] == 1.0
