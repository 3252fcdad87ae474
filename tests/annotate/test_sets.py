"""Annotation sets: stratified, seeded, capped per family; same cases, own order per rater."""

from __future__ import annotations

from collections import Counter

import pytest

from annotate.sets.annotation_set import get_set, rater_queue
from annotate.sets.audit import create_set
from store.errors import NotFound, UserError


def _cases(db, set_name):
    return list(db.query(
        "SELECT c.*, v.family, v.operator_id FROM annotation_cases c JOIN annotation_sets s "
        "ON s.id = c.set_id JOIN variants v ON v.id = c.variant_id WHERE s.name = ? "
        "ORDER BY c.id", [set_name]))


def test_only_fired_m_block_question_edits_are_sampled_each_edit_once(db, audit):
    the_set = create_set(db, audit.audit_id, 1000, per_family=None, seed=1, name="all")
    cases = _cases(db, "all")
    # 10 items × 4 M families = 40 distinct edits (shared by both arms): each exactly once.
    assert the_set.size == len(cases) == 40
    assert len({c["variant_id"] for c in cases}) == 40
    assert {c["family"] for c in cases} == {"M2", "M3", "M4", "M5"}  # no F1, shuffle, M1


def test_round_robin_over_family_dataset_strata(db, audit):
    # Appendix M stratifies edits by family (× dataset): 4 families × 1 dataset; 8 cases
    # -> two per family. A case's stratum also names the model whose answer it shows.
    create_set(db, audit.audit_id, 8, seed=3, name="s8")
    cases = _cases(db, "s8")
    assert Counter(c["family"] for c in cases) == {"M2": 2, "M3": 2, "M4": 2, "M5": 2}
    assert all(c["stratum"].count("|") == 2 for c in cases)
    assert {c["stratum"].split("|")[2] for c in cases} <= {"smollm2", "qwen-7b"}


def test_per_family_cap(db, audit):
    create_set(db, audit.audit_id, 100, per_family=3, seed=0, name="capped")
    families = Counter(c["family"] for c in _cases(db, "capped"))
    assert families == {"M2": 3, "M3": 3, "M4": 3, "M5": 3}


def test_same_seed_same_sample_other_seed_other_sample(db, audit):
    create_set(db, audit.audit_id, 10, seed=7, name="a")
    create_set(db, audit.audit_id, 10, seed=7, name="b")
    create_set(db, audit.audit_id, 10, seed=8, name="c")
    pick = {name: sorted((c["variant_id"], c["stratum"]) for c in _cases(db, name))
            for name in "abc"}
    assert pick["a"] == pick["b"]
    assert pick["a"] != pick["c"]
    # Codes are unique across sets even for the same draw.
    codes = [c["code"] for name in "abc" for c in _cases(db, name)]
    assert len(codes) == len(set(codes))


def test_codes_and_ids_do_not_follow_the_strata(db, audit):
    create_set(db, audit.audit_id, 40, per_family=None, seed=0, name="all")
    cases = _cases(db, "all")
    strata_by_id = [c["stratum"] for c in cases]
    assert strata_by_id != sorted(strata_by_id)  # shuffled before insertion
    for case in cases:
        assert len(case["code"]) == 6 and case["code"].isalnum() and case["code"].isupper()
    strata_by_code = [c["stratum"] for c in sorted(cases, key=lambda c: c["code"])]
    assert strata_by_code != sorted(strata_by_code)


def test_harm_only_for_destructive_m3_m4_m5_flips(db, audit):
    create_set(db, audit.audit_id, 40, per_family=None, seed=0, name="all")
    for case in _cases(db, "all"):
        flipped = db.execute("SELECT answer FROM generations WHERE id = ?",
                             [case["perturbed_generation_id"]]).fetchone()[0] == "B"
        assert case["ask_harm"] == int(flipped and case["family"] in {"M3", "M4", "M5"})
    # odd items flip: 5 of 10 items × 3 families
    assert get_set(db, "all").n_harm == 15


def test_chain_registration_sample_is_m2_m4_m5_and_capped(db, audit):
    create_set(db, audit.audit_id, 40, per_family=None, seed=0, name="all")
    asked = [c for c in _cases(db, "all") if c["ask_chain_registration"]]
    assert {c["family"] for c in asked} == {"M2", "M4", "M5"} and len(asked) == 30
    create_set(db, audit.audit_id, 40, per_family=None, seed=0, name="six", chain_size=6)
    asked = [c for c in _cases(db, "six") if c["ask_chain_registration"]]
    assert len(asked) == 6
    assert Counter(c["family"] for c in asked) == {"M2": 2, "M4": 2, "M5": 2}


def test_every_rater_gets_the_same_cases_in_their_own_stable_order(db, audit, people):
    create_set(db, audit.audit_id, 20, seed=0, name="s")
    alice = [v.code for v in rater_queue(db, "s", people["alice"])]
    bob = [v.code for v in rater_queue(db, "s", people["bob"])]
    assert sorted(alice) == sorted(bob) and len(alice) == 20
    assert alice != bob
    assert [v.code for v in rater_queue(db, "s", people["alice"])] == alice
    positions = [v.position for v in rater_queue(db, "s", people["bob"])]
    assert positions == list(range(1, 21))


def test_bad_requests_are_user_errors(db, audit):
    with pytest.raises(NotFound):
        create_set(db, 999, 10)
    with pytest.raises(UserError, match="size"):
        create_set(db, audit.audit_id, 0)
    create_set(db, audit.audit_id, 5, name="x")
    with pytest.raises(UserError, match="already exists"):
        create_set(db, audit.audit_id, 5, name="x")
    with pytest.raises(NotFound, match="known sets: x"):
        get_set(db, "nope")
