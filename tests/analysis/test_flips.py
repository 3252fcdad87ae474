"""The flip queries (`analysis.flips.listing`) on an audit whose every answer is chosen by hand.

Fixture (one dataset, audit 'a1'; item q1 gold A with options A..D):

    arm smollm2/cot, baseline A, distribution P = (.7, .1, .1, .1)
      M4 negation  -> B  flip, chain says "does not"  (token rule: updated), judge yes
      M5 severity  -> C  flip, chain silent on "severe" (not updated),      judge no
      M3 distractor -> A kept (preserving)
      M2 sex       -> unparsed (excluded)
      F1 truncate  -> D  flip (chain edit)
      shuffle      -> B  kept: the shuffle put original option A's text under B
      M1           not fired
    arm qwen/cot, baseline B
      M4 negation  -> B  kept
    item q2, arm smollm2/cot: baseline unparsed; M2 -> A excluded (baseline_unparsed)

So: 3 flips (M4, M5, F1 of smollm2), 3 kept, 2 excluded, 8 answered edits.
"""

from __future__ import annotations

import math

import pytest
from scipy.spatial.distance import jensenshannon

from analysis.flips.index import index_flips, jsd_many, matched_distributions
from analysis.flips.case import flip_case
from analysis.flips.listing import FlipFilter, list_flips
from analysis.audit.frames import load_audit, observations
from store.errors import NotFound, UserError
from tests.builders import AuditBuilder

QUESTION = "A 50-year-old man has mild fever and pain. Which is the diagnosis?"
NEGATED = "A 50-year-old man does not have mild fever and pain. Which is the diagnosis?"
P_BASE = {"A": 0.7, "B": 0.1, "C": 0.1, "D": 0.1}
P_B = {"A": 0.1, "B": 0.7, "C": 0.1, "D": 0.1}
SHUFFLED = {"A": "option B", "B": "option A", "C": "option C", "D": "option D"}


@pytest.fixture
def built(db):
    b = AuditBuilder(db, audit="a1")
    q1 = b.item("q1", gold="A", question=QUESTION)
    q2 = b.item("q2", gold="A", question="A child with a rash. Which is the diagnosis?")
    x = b.arm("smollm2/cot")
    y = b.arm("qwen/cot")
    b.baseline(x, q1, answer="A", output="Fever and pain. Answer: A", option_probs=P_BASE)
    b.baseline(y, q1, answer="B", output="Answer: B", option_probs=P_B)
    ids = {}
    ids["m4"] = b.perturbed(x, q1, operator_id="M4_negation_a", family="M4", intent="D",
                            answer="B", output="He does not have fever. Answer: B",
                            old="has", new="does not have", option_probs=P_B)
    db["variants"].update(ids["m4"].variant_id, {"text": NEGATED})
    ids["m5"] = b.perturbed(x, q1, operator_id="M5_severity_a", family="M5", intent="D",
                            answer="C", output="Pain. Answer: C", old="mild", new="severe")
    ids["m3"] = b.perturbed(x, q1, operator_id="M3_distractor_a", family="M3", intent="P",
                            answer="A", output="Answer: A", new="Her cat is ill.")
    ids["m2"] = b.perturbed(x, q1, operator_id="M2_sex", family="M2", intent="D",
                            answer=None, output="...", old="man", new="woman")
    ids["f1"] = b.perturbed(x, q1, operator_id="F1_truncate_50", family="F1", intent="D",
                            answer="D", output="so D. Answer: D")
    ids["shuffle"] = b.perturbed(x, q1, operator_id="option_shuffle", family="shuffle",
                                 answer="B", options=SHUFFLED, gold="B",
                                 option_probs={"A": 0.1, "B": 0.7, "C": 0.1, "D": 0.1})
    ids["m1"] = b.perturbed(x, q1, operator_id="M1_ablation_a", family="M1", intent="D",
                            fired=False)
    ids["y_m4"] = b.perturbed(y, q1, operator_id="M4_negation_a", family="M4", intent="D",
                              answer="B", output="Answer: B", old="has", new="does not have")
    b.baseline(x, q2, answer=None, output="no idea")
    ids["q2_m2"] = b.perturbed(x, q2, operator_id="M2_sex", family="M2", intent="D",
                               answer="A", output="Answer: A", old="child", new="girl")
    b.judge(ids["m4"].generation_id, "yes")
    b.judge(ids["m5"].generation_id, "no")
    return b, {name: p.job_id for name, p in ids.items()}


def _ids(page) -> list[int]:
    return [r.id for r in page.rows]


def test_default_lists_the_flips_with_their_numbers(db, built):
    _, job = built
    page = list_flips(db, "a1")
    assert page.total == 3 and _ids(page) == [job["m4"], job["m5"], job["f1"]]
    m4, m5, f1 = page.rows
    assert (m4.base_answer, m4.answer, m4.block, m4.arm, m4.model) == \
        ("A", "B", "M", "smollm2/cot", "smollm2")
    # JSD(P, Q), P = (.7,.1,.1,.1), Q = (.1,.7,.1,.1): M = (.4,.4,.1,.1);
    # KL(P‖M) = .7·log2(.7/.4) + .1·log2(.1/.4) = .7·0.807355 − .2 = 0.365148 = KL(Q‖M),
    # so JSD = ½(0.365148 + 0.365148) = 0.365148 bits.
    assert m4.jsd == pytest.approx(0.365148, abs=1e-6)
    assert m4.jsd == pytest.approx(jensenshannon([.7, .1, .1, .1], [.1, .7, .1, .1],
                                                 base=2) ** 2)
    assert m5.jsd is None  # no distribution stored for that answer
    assert (m4.chain_updated, m5.chain_updated, f1.chain_updated) == (True, False, None)
    assert (m4.judge, m5.judge, f1.judge) == (("yes",), ("no",), ())
    assert f1.block == "F" and f1.intent == "D"


def test_the_index_agrees_with_observations(db, built):
    """`flip_index` decides flips and exclusions as `frames.observations` does."""
    _, job = built
    page = list_flips(db, "a1", FlipFilter(flipped=None), limit=100)
    rows = {r.id: r for r in page.rows}
    obs = observations(load_audit(db, "a1"))
    answered = obs[~obs["excluded"].isin(["not_fired", "not_generated"])]
    assert set(rows) == set(answered["job_id"])
    for o in answered.itertuples():
        row = rows[o.job_id]
        assert row.excluded == (o.excluded if isinstance(o.excluded, str) else None)
        expected = None if math.isnan(o.flip) else bool(o.flip)
        assert row.flipped == expected, o.operator_id
    assert rows[job["q2_m2"]].excluded == "baseline_unparsed"
    assert rows[job["m2"]].excluded == "unparsed"
    assert job["m1"] not in rows  # not fired: not an answered edit


def test_a_shuffle_is_judged_by_option_text(db, built):
    _, job = built
    row = next(r for r in list_flips(db, "a1", FlipFilter(flipped=False)).rows
               if r.id == job["shuffle"])
    # Answer B after the shuffle shows 'option A', the baseline's choice: not a flip,
    # and its distribution, matched by text, equals the baseline's: JSD 0.
    assert row.flipped is False and row.answer == "B" and row.jsd == pytest.approx(0.0)
    case = flip_case(db, job["shuffle"])
    assert case.answer_text == case.base_text == "option A"
    assert case.gold_after == "B" and case.options_after == tuple(SHUFFLED.items())


@pytest.mark.parametrize(("flt", "names"), [
    (FlipFilter(families=("M4",)), ["m4"]),
    (FlipFilter(blocks=("F",)), ["f1"]),
    (FlipFilter(flipped=None, intents=("P",)), ["m3"]),
    (FlipFilter(flipped=None, arms=("qwen",)), ["y_m4"]),          # by model name
    (FlipFilter(flipped=None, arms=("qwen/cot",)), ["y_m4"]),      # by arm label
    (FlipFilter(chain_updated=False), ["m5"]),
    (FlipFilter(chain_updated=True), ["m4"]),
    (FlipFilter(judge="yes"), ["m4"]),
    (FlipFilter(judge="none"), ["f1"]),
    (FlipFilter(text="NEGATION"), ["m4"]),                          # operator id
    (FlipFilter(text="severe"), ["m5"]),                            # the edit's words
    (FlipFilter(flipped=None, text="rash"), ["q2_m2"]),             # question text
    (FlipFilter(text="50%"), []),                                   # % is literal
    (FlipFilter(flipped=False), ["m3", "shuffle", "y_m4"]),
    (FlipFilter(flipped=None, operators=("M2_sex",)), ["m2", "q2_m2"]),
    (FlipFilter(dataset="synthetic"), ["m4", "m5", "f1"]),
])
def test_filters(db, built, flt, names):
    _, job = built
    page = list_flips(db, "a1", flt, limit=100)
    assert _ids(page) == sorted(job[n] for n in names)
    assert page.total == len(names)


def test_pages_and_orders(db, built):
    everything = FlipFilter(flipped=None)
    first = list_flips(db, "a1", everything, limit=3)
    assert first.total == 8 and len(first.rows) == 3 and first.next_offset == 3
    rest = list_flips(db, "a1", everything, limit=10, offset=first.next_offset)
    assert rest.next_offset is None
    assert _ids(first) + _ids(rest) == _ids(list_flips(db, "a1", everything, limit=10))
    newest = list_flips(db, "a1", everything, limit=10, order="-id")
    assert _ids(newest) == sorted(_ids(newest), reverse=True)
    by_jsd = [r.jsd for r in list_flips(db, "a1", everything, limit=10, order="jsd").rows]
    known = [v for v in by_jsd if v is not None]
    assert known == sorted(known, reverse=True) and by_jsd[-1] is None  # NULLs last


def test_mistakes_are_one_line_errors(db, built):
    with pytest.raises(NotFound, match="no arm or model 'gpt'.*smollm2/cot"):
        list_flips(db, "a1", FlipFilter(arms=("gpt",)))
    with pytest.raises(NotFound, match="no audit named or numbered 'zz'"):
        list_flips(db, "zz")
    with pytest.raises(NotFound, match="no dataset named 'medqa'"):
        list_flips(db, None, FlipFilter(dataset="medqa"))
    with pytest.raises(UserError, match="order: expected one of"):
        list_flips(db, "a1", order="size")
    with pytest.raises(UserError, match="judge: expected yes, no or none"):
        list_flips(db, "a1", FlipFilter(judge="maybe"))
    with pytest.raises(NotFound, match="no edit with id"):
        flip_case(db, 99999)
    base_job = db.execute("SELECT id FROM jobs WHERE role = 'baseline'").fetchone()[0]
    with pytest.raises(NotFound):
        flip_case(db, base_job)  # a baseline is not an edit


def test_the_index_follows_new_answers_and_status_changes(db, built):
    b, job = built
    assert list_flips(db, "a1").total == 3
    q1 = db.execute("SELECT id FROM items WHERE source_id = 'q1'").fetchone()[0]
    y = db.execute("SELECT id FROM arms WHERE label = 'qwen/cot'").fetchone()[0]
    added = b.perturbed(y, q1, operator_id="M5_severity_a", family="M5", intent="D",
                        answer="D", output="Answer: D", old="mild", new="severe")
    page = list_flips(db, "a1")
    assert page.total == 4 and added.job_id in _ids(page)
    assert index_flips(db, b.audit_id) == 0  # up to date: nothing to add
    db.execute("UPDATE jobs SET status = 'pending' WHERE id = ?", [job["m4"]])
    assert job["m4"] not in _ids(list_flips(db, "a1"))  # no longer answered: dropped
    db.execute("UPDATE jobs SET status = 'done' WHERE id = ?", [job["m4"]])
    db.execute("DELETE FROM flip_index")  # a cache: rebuilt on the next call
    assert _ids(list_flips(db, "a1")) == sorted([job["m4"], job["m5"], job["f1"],
                                                 added.job_id])


def test_flip_case_of_a_question_edit(db, built):
    _, job = built
    case = flip_case(db, job["m4"])
    assert case.flipped is True and (case.base_answer, case.answer) == ("A", "B")
    assert case.question == QUESTION and case.edited_question == NEGATED
    removed, inserted = case.question_spans
    assert [case.question[a:b] for a, b in removed] == ["has"]
    assert [case.edited_question[a:b] for a, b in inserted] == ["does not have"]
    assert case.probs_before == tuple(P_BASE.items())
    assert case.probs_after == tuple(P_B.items())
    assert case.jsd == pytest.approx(0.365148, abs=1e-6)
    assert case.chain_updated is True and case.judge == (("llm_judge:synthetic", "yes"),)
    assert case.output.startswith("He does not have")
    assert case.baseline_output == "Fever and pain. Answer: A"


def test_flip_case_of_a_chain_edit_and_of_one_not_fired(db, built):
    _, job = built
    variant = db.execute("SELECT variant_id FROM jobs WHERE id = ?", [job["f1"]]).fetchone()[0]
    db["variants"].update(variant, {"text": "Fever and pain.",
                                    "details_json": '{"chain_chars": 15}'})
    base = db.execute("SELECT source_generation_id FROM variants WHERE id = ?",
                      [variant]).fetchone()[0]
    db["generations"].update(base, {"output": "Fever and pain. Likely sepsis.\nAnswer: A"})
    case = flip_case(db, job["f1"])
    assert case.block == "F" and case.original_chain == "Fever and pain."
    assert case.edited_chain == "Fever and pain." and case.chain_spans == ((), ())
    assert case.output == "so D. Answer: D" and case.flipped is True
    not_fired = flip_case(db, job["m1"])
    assert not not_fired.fired and not_fired.excluded == "not_fired"
    assert not_fired.flipped is None and not_fired.answer is None


def test_matched_distributions_and_jsd_edge_cases():
    # Labels must match unless options were shuffled; missing distributions give None.
    assert matched_distributions({"A": 1.0}, None, None, None) is None
    assert matched_distributions({"A": .5, "B": .5}, {"A": .5, "C": .5}, None, None) is None
    # Disjoint supports: JSD = 1 bit exactly (M = (½, ½); each KL = log2 2 = 1).
    assert jsd_many([([1.0, 0.0], [0.0, 1.0]), None]) == [pytest.approx(1.0), None]
