"""Every judge verdict and every clinician unit belongs to one (model, item, prefix or CFV
attempt), even when one judge generation serves several units.

The judge's prompts are content-addressed like every generation: the direction prompt
shows the question and the two answers, so two prefixes that move an item the same way
(A -> B, the paper's own example: "The answer changed from A to B for male_white and
female_black") and two models that give the same answers ask the judge the same thing, and
get one judge generation. These tests build exactly that — two Black prefixes both moving
every item A -> B, under two models — and read it back through the real loader, the real
report and the real annotation set (no prompt made unique by the test).
"""

from __future__ import annotations

import pytest

from workbench.kinds import build_run_report
from analysis.robustness.data import load_robustness
from annotate.events import record_label, start_session
from annotate.robustness.validation import judge_validation
from annotate.sets.audit import create_set
from annotate.trust.people import register
from tests.robustness.helpers import two_model_run

PW = "correct horse battery"


@pytest.fixture
def shared(demo_db):
    """Two models (same answers, different reasoning) on demo-001..003: the two Black
    prefixes move every item A -> B under both models."""
    return two_model_run(demo_db)


def test_each_verdict_is_read_through_its_own_unit(demo_db, shared):
    data = load_robustness(demo_db, shared.audit_id)
    v = data.verdicts
    assert not v.duplicated(["role", "arm_id", "item_id", "variant_id"]).any()
    direction = v[v["role"] == "judge_direction"]
    # 2 models x 3 items x 2 Black prefixes, each A -> B: 12 verdicts, not 12 x 4.
    assert len(direction) == 12
    # One judge generation per item serves its 4 units (2 prefixes x 2 models).
    assert direction.groupby("judge_generation_id").size().tolist() == [4, 4, 4]
    assert set(direction["n_sharing"]) == {4}
    # The flags prompts differ (each model's own reasoning): one unit each.
    flags = v[v["role"] == "judge_flags"]
    assert len(flags) == 36 and set(flags["n_sharing"]) == {1}
    # Each verdict's subject is the answer of its own (arm, item, prefix).
    answers = data.answers.set_index(["arm_id", "item_id", "variant_id"])
    for r in v[v["role"] != "judge_cfv"].itertuples():
        assert answers.loc[(r.arm_id, r.item_id, r.variant_id), "generation_id"] == \
            r.subject_generation_id


def test_the_report_counts_each_unit_once_and_shows_the_sharing(demo_db, shared):
    report = build_run_report(demo_db, shared.audit_id, kind="robustness", n_boot=0)
    sections = {s.json_key: s.frame for s in report.sections}
    directions = sections["directions"]
    assert directions["n_classified"].tolist() == [6, 6]  # per model, not 12 or 24
    assert directions["more_aggressive_pct"].tolist() == [100.0, 100.0]
    exclusions = sections["exclusions"]
    # Per model: its 6 direction verdicts (each judge generation serves 4 units) and its 3
    # CFV verdicts (both models propose the same change, so the judge is asked once).
    assert exclusions["n_judge_shared"].tolist() == [9, 9]


def test_the_annotation_set_draws_each_judge_decision_once(demo_db, shared):
    people = {"alice": register(demo_db, "alice", "rater", PW),
              "bob": register(demo_db, "bob", "rater", PW),
              "carol": register(demo_db, "carol", "coordinator", PW)}
    the_set = create_set(demo_db, shared.audit_id, 200, seed=3, raters=("alice", "bob"),
                         coordinator=people["carol"])
    cases = list(demo_db.query(
        "SELECT c.code, c.stratum, c.variant_id, c.perturbed_generation_id AS perturbed, "
        "j.variant_id AS answer_variant, j.arm_id, ar.label FROM annotation_cases c "
        "JOIN jobs j ON j.audit_id = ? AND j.role = 'demographic' AND j.generation_key = "
        "(SELECT key FROM generations WHERE id = c.perturbed_generation_id) "
        "JOIN arms ar ON ar.id = j.arm_id "
        "WHERE c.set_id = ? AND c.stratum NOT LIKE 'cfv|%'", [shared.audit_id, the_set.id]))
    # The question a case shows (its variant) is the prefix of the answer it shows, and the
    # case's model (stratum) is the model that gave that answer.
    for case in cases:
        assert case["variant_id"] == case["answer_variant"], case
        assert case["stratum"].endswith("|" + case["label"]), case
    direction = [c for c in cases if c["stratum"].startswith("direction|")]
    assert len(direction) == 3  # one per judge decision (3 items), not 12
    # One case per (test, answer): a prefixed answer may be checked for its direction and,
    # separately, for its flags.
    assert len({(c["stratum"].split("|")[0], c["perturbed"]) for c in cases}) == len(cases)
    # Judge vs clinicians counts each decision once.
    sessions = {n: start_session(demo_db, people[n], the_set.name) for n in ("alice", "bob")}
    for case in direction:
        for name in ("alice", "bob"):
            record_label(demo_db, people[name], sessions[name], case["code"], "direction",
                         "more_aggressive")
    (overall,) = [v for v in judge_validation(demo_db, the_set.name)
                  if v.test == "direction" and v.model is None]
    assert overall.n == 3 and overall.tp == 3
