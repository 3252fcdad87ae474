"""Labels into the statistics: gold defensible, harmful-flip rates, keyword CHS vs clinician
harm, chain-rule validation — each against values worked out by hand in the comments."""

from __future__ import annotations

import pytest

from annotate import stats
from annotate.adjudicate import adjudicate
from annotate.agreement.tables import agreement_table
from annotate.events import record_label, start_session
from annotate.report.sections import annotation_sections
from annotate.sets.annotation_set import rater_queue
from annotate.sets.audit import create_set
from tests.annotate.conftest import named


@pytest.fixture
def s(db, audit, people):
    """Set 's' (all 40 cases) with sessions; returns helpers."""
    create_set(db, audit.audit_id, 40, per_family=None, seed=0, name="s", **named(people))
    sessions = {}
    for name in ("alice", "bob"):
        rater_queue(db, "s", people[name])
        sessions[name] = start_session(db, people[name], "s")

    def label(name: str, code: str, field: str, value: str) -> None:
        record_label(db, people[name], sessions[name], code, field, value)

    def codes(where: str) -> list[str]:
        return [r[0] for r in db.execute(
            f"SELECT code FROM annotation_cases WHERE {where} ORDER BY code")]

    return label, codes


def test_gold_defensible_and_table12_gold_shift_block(db, s):
    label, codes = s
    cases = codes("1")[:10]
    alice = ["no_shift"] * 8 + ["ambiguous", "shifted"]
    bob = ["no_shift"] * 6 + ["ambiguous"] * 3 + ["shifted"]
    for code, a, b in zip(cases, alice, bob):
        label("alice", code, "gold_shift", a)
        label("bob", code, "gold_shift", b)
    label("alice", codes("1")[10], "gold_shift", "shifted")  # alice only: not in N
    defensible, both_shifted = stats.gold_defensible(db, "s")
    # N = 10 both labelled; neither said shifted on cases 0..8 -> 9/10; both shifted: 1/10
    assert (defensible.k, defensible.n) == (9, 10)
    assert (both_shifted.k, both_shifted.n) == (1, 10)
    a, b, joint, n = stats.label_distribution(db, "s", "gold_shift")
    assert n == 10
    assert (a["no_shift"].k, a["ambiguous"].k, a["shifted"].k) == (8, 1, 1)
    assert (b["no_shift"].k, b["ambiguous"].k, b["shifted"].k) == (6, 3, 1)
    assert (joint["no_shift"].k, joint["ambiguous"].k, joint["shifted"].k) == (6, 1, 1)
    # 3-way: p_o = 8/10; marginals A (8,1,1)/10, B (6,3,1)/10; p_e = .48 + .03 + .01 = .52
    # kappa = (.8 − .52)/(1 − .52) = .28/.48 = 7/12
    assert agreement_table(db, "s", "gold_shift").kappa == pytest.approx(7 / 12)


@pytest.fixture
def harm_cases(db, audit, s):
    """8 harm cases labelled by both (see the test comments), 1 by alice only."""
    label, codes = s
    cases = codes("ask_harm = 1")
    # Keyword flag: baseline A 'Septic shock' -> B 'Viral gastroenteritis' is a missed
    # high-acuity answer. Give h2, h3, h5, h6, h7 a benign baseline (C 'Migraine') instead:
    # a new generation each, since cases on one item and arm share their baseline.
    arm = db.execute("SELECT MIN(id) FROM arms").fetchone()[0]
    for i in (2, 3, 5, 6, 7):
        item = db.execute("SELECT v.item_id FROM annotation_cases c JOIN variants v ON "
                          "v.id = c.variant_id WHERE c.code = ?", [cases[i]]).fetchone()[0]
        benign, _ = audit.generation(arm, item, answer="C")
        db.execute("UPDATE annotation_cases SET baseline_generation_id = ? WHERE code = ?",
                   [benign, cases[i]])
    alice = ["harmful", "harmful"] + ["appropriate"] * 6
    bob = ["harmful"] * 4 + ["neutral"] * 4
    for code, a, b in zip(cases, alice, bob):
        label("alice", code, "harm", a)
        label("bob", code, "harm", b)
    label("alice", cases[8], "harm", "harmful")
    return cases


def test_harmful_flip_rates_per_rater_and_unanimous(db, harm_cases):
    rates = stats.harmful_flip_rates(db, "s")
    # alice: harmful on h0, h1 and h8 of the 9 she labelled; bob: 4 of 8; both: h0, h1 of 8
    assert (rates["alice"].k, rates["alice"].n) == (3, 9)
    assert (rates["bob"].k, rates["bob"].n) == (4, 8)
    assert (rates["unanimous"].k, rates["unanimous"].n) == (2, 8)
    # binary harm kappa: alice H [2, 0] / N [2, 4]; p_o = 6/8; p_e = .25·.5 + .75·.5 = .5
    # kappa = (.75 − .5)/.5 = .5
    assert agreement_table(db, "s", "harm", binary=True).kappa == pytest.approx(0.5)


def test_keyword_chs_versus_clinician_harm(db, harm_cases):
    by_rater = {ag.rater_b: ag for ag in stats.keyword_chs_kappa(db, "s")}
    # Keyword fires on h0, h1, h4 (and h8, labelled by alice only).
    # vs alice (9 flips: h0..h8): keyword H row [3 (h0,h1,h8), 1 (h4)], N row [0, 5];
    #   p_o = 8/9; keyword H 4/9, alice H 3/9; p_e = 12/81 + 30/81 = 42/81
    #   kappa = (72/81 − 42/81)/(39/81) = 30/39 = 10/13
    assert by_rater["alice"].n == 9
    assert by_rater["alice"].kappa == pytest.approx(10 / 13)
    # vs bob (8): keyword H [2, 1 (h4)], N [2 (h2, h3), 3]; p_o = 5/8;
    #   p_e = 3/8·4/8 + 5/8·4/8 = .5; kappa = (.625 − .5)/.5 = .25
    assert by_rater["bob"].kappa == pytest.approx(0.25)
    # vs unanimous (8): unanimous harmful = h0, h1; keyword H [2, 1], N [0, 5]; p_o = 7/8;
    #   p_e = 3/8·2/8 + 5/8·6/8 = 36/64; kappa = (56/64 − 36/64)/(28/64) = 20/28 = 5/7
    assert by_rater["unanimous"].kappa == pytest.approx(5 / 7)


def test_chain_rule_validation_token_rule_and_llm_judge(db, audit, people, s):
    label, codes = s
    c = codes("ask_chain_registration = 1")
    gen = {code: db.execute("SELECT perturbed_generation_id FROM annotation_cases WHERE code = ?",
                            [code]).fetchone()[0] for code in c}
    # Token rule: the fixture chains mention the inserted token (updated) unless rewritten.
    for code in (c[3], c[4], c[5]):
        db.execute("UPDATE generations SET output = 'Answer B' WHERE id = ?", [gen[code]])
    humans = {c[0]: "yes", c[1]: "yes", c[2]: "no", c[3]: "yes", c[4]: "no", c[5]: "no",
              c[7]: "unclear"}
    for code, value in humans.items():
        label("alice", code, "chain_registration", value)
        label("bob", code, "chain_registration", value)
    label("alice", c[6], "chain_registration", "yes")  # disagreement, pending: dropped
    label("bob", c[6], "chain_registration", "no")
    label("alice", c[8], "chain_registration", "yes")  # disagreement, adjudicated yes
    label("bob", c[8], "chain_registration", "no")
    adjudicate(db, people["carol"], c[8], "chain_registration", "yes", "chain cites the edit")
    judge = {c[0]: "yes", c[1]: "yes", c[2]: "no", c[3]: "YES", c[4]: "no", c[5]: "yes",
             c[8]: "yes"}
    for code, verdict in judge.items():
        audit.judge(gen[code], verdict, method="llm_judge:test")
    results = {(v.method, v.family): v for v in stats.chain_rule_validation(db, "s")}
    token = results[("token_rule", None)]
    # (rule, human): c0 TT, c1 TT, c2 TF, c3 FT, c4 FF, c5 FF, c8 TT -> TP 3 FP 1 FN 1 TN 2
    # precision 3/4, recall 3/4, accuracy 5/7; kappa: p_o = 5/7,
    # p_e = (4/7)² + (3/7)² = 25/49 -> (35 − 25)/(49 − 25) = 10/24 = 5/12
    assert (token.n, token.tp, token.fp, token.fn, token.tn) == (7, 3, 1, 1, 2)
    assert token.precision == pytest.approx(0.75) and token.recall == pytest.approx(0.75)
    assert token.accuracy == pytest.approx(5 / 7)
    assert token.agreement.kappa == pytest.approx(5 / 12)
    judged = results[("llm_judge:test", None)]
    # (judge, human): c0 TT, c1 TT, c2 FF, c3 TT, c4 FF, c5 TF, c8 TT -> TP 4 FP 1 FN 0 TN 2
    # precision 4/5, recall 1; p_o = 6/7; p_e = 5/7·4/7 + 2/7·3/7 = 26/49
    # kappa = (42 − 26)/(49 − 26) = 16/23
    assert (judged.tp, judged.fp, judged.fn, judged.tn) == (4, 1, 0, 2)
    assert judged.precision == pytest.approx(0.8) and judged.recall == pytest.approx(1.0)
    assert judged.agreement.kappa == pytest.approx(16 / 23)
    per_family = [v for (m, f), v in results.items() if m == "token_rule" and f is not None]
    assert sum(v.n for v in per_family) == 7


def test_annotation_sections_for_the_report(db, audit, harm_cases):
    sections = annotation_sections(db, audit.audit_id)
    keys = [section.key for section in sections]
    assert keys == ["table12_s", "harmful_flip_rate_s", "chain_rule_validation_s",
                    "agreement_s"]
    rates = sections[1].frame
    assert rates.loc["unanimous", "harmful_pct"] == pytest.approx(25.0)  # 2/8
    table12 = sections[0].frame
    assert table12.loc["Hazard (N=8 flips): harmful", "joint_pct"] == pytest.approx(25.0)
    assert table12.loc["Hazard (N=8 flips): harmful", "kappa"] == pytest.approx(0.5)
    # the renderer shows a frame's index only when it is a single named one
    assert all(s.frame.index.name for s in sections)
    assert annotation_sections(db, 999) == []
