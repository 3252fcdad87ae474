"""The annotation frame of seed 002 Appendix M: M2/M3/M4/M5 edits (~50 each), PubMedQA stems
excluded, the harm subset = M3/M4/M5 flips with greedy tier balancing."""

from __future__ import annotations

from collections import Counter

import pytest

from annotate.sets.audit import create_set
from store.db import dumps
from store.errors import UserError
from tests.builders import AuditBuilder

OPTIONS = {"A": "Septic shock", "B": "Viral gastroenteritis", "C": "Migraine",
           "D": "Tension headache"}
# The battery's tags (Table 1): M3 distractor is P, the others D; M1 and M6 are outside
# the sample.
FAMILIES = (("M1_ablation_a", "M1", "D"), ("M2_sex", "M2", "D"), ("M3_distractor_a", "M3", "P"),
            ("M4_negation_a", "M4", "D"), ("M5_severity_a", "M5", "D"),
            ("M6_temporal_a", "M6", "P"))


def _cases(db, set_name):
    return list(db.query(
        "SELECT c.*, v.family, d.name AS dataset, m.name AS model, g.answer "
        "FROM annotation_cases c JOIN annotation_sets s ON s.id = c.set_id "
        "JOIN variants v ON v.id = c.variant_id JOIN items i ON i.id = v.item_id "
        "JOIN datasets d ON d.id = i.dataset_id JOIN generations g "
        "ON g.id = c.perturbed_generation_id JOIN models m ON m.id = g.model_id "
        "WHERE s.name = ?", [set_name]))


def _audit(db, dataset: str, audit: str, models: dict[str, str], n_items: int,
           flip: set[str]) -> AuditBuilder:
    """Every model answers A; on every item its M edits flip to B when it is in `flip`."""
    b = AuditBuilder(db, dataset=dataset, audit=audit)
    for name, tier in models.items():
        model_id = b.model(name)
        db["models"].update(model_id, {"metadata_json": dumps({"tier": tier})})
    arms = {name: b.arm(f"{name}/cot") for name in models}
    for i in range(n_items):
        item = b.item(f"{dataset}-q{i}", gold="A", options=OPTIONS)
        for name, arm in arms.items():
            b.baseline(arm, item, answer="A")
            for operator, family, intent in FAMILIES:
                b.perturbed(arm, item, operator_id=operator, family=family, intent=intent,
                            answer="B" if name in flip else "A", new="x", output="x")
    return b


def test_sample_is_m2_to_m5_about_fifty_each_without_pubmedqa(db):
    """Appendix M: "N=197 M-block perturbations stratified by operator family (∼50 items
    across M2/M3/M4/M5) and three medical benchmarks (PubMedQA stems do not host M-block
    edits)"."""
    b = _audit(db, "medqa", "a-medqa", {"m": "open"}, 60, flip=set())
    pub = _audit(db, "pqa", "a-pqa", {"m": "open"}, 5, flip=set())
    db.execute("UPDATE datasets SET format = 'pubmedqa' WHERE name = 'pqa'")
    the_set = create_set(db, b.audit_id, 197, per_family=50, seed=0, name="m")
    families = Counter(c["family"] for c in _cases(db, "m"))
    # M1 and M6 are not in the frame; each of M2..M5 has 60 fired edits, capped at 50:
    # 4 × 50 = 200 available, 197 drawn round-robin -> 50, 49, 49, 49 in some order.
    assert set(families) == {"M2", "M3", "M4", "M5"}
    assert sorted(families.values()) == [49, 49, 49, 50] and the_set.size == 197
    # A PubMedQA audit has nothing to sample: a clear error, not an empty set.
    with pytest.raises(UserError, match="PubMedQA"):
        create_set(db, pub.audit_id, 10, seed=0, name="p")


def test_m3_flips_get_the_harm_question_though_m3_is_tagged_p(db):
    """Appendix M: "75 rows additionally carry one randomly-selected model's destructive
    flip on M3/M4/M5" — the paper counts M3 distractor flips in the harm subset although
    Table 1 tags M3 P (preserving)."""
    b = _audit(db, "medqa", "a", {"m": "open"}, 3, flip={"m"})
    create_set(db, b.audit_id, 100, per_family=None, seed=0, name="s")
    cases = _cases(db, "s")
    asked = Counter(c["family"] for c in cases if c["ask_harm"])
    # Every M edit flipped: M3, M4, M5 ask harm (3 items each); M2 does not.
    assert asked == {"M3": 3, "M4": 3, "M5": 3}
    assert all(c["answer"] == "B" for c in cases if c["ask_harm"])


def test_harm_flips_are_balanced_over_tiers_greedily(db):
    """Appendix M: "with greedy tier balancing (open-weight: 29, reasoning-tuned: 37,
    closed-source: 9)". Here two open-weight models and one closed model flip on every
    edit; choosing a flipping model at random would give open-weight 2/3 of the harm cases,
    greedy balancing alternates tiers: 12 M3/M4/M5 harm cases -> 6 and 6."""
    b = _audit(db, "medqa", "a", {"open-a": "open", "open-b": "open", "closed": "closed"}, 4,
               flip={"open-a", "open-b", "closed"})
    create_set(db, b.audit_id, 100, per_family=None, seed=5, name="s")
    harm = [c for c in _cases(db, "s") if c["ask_harm"]]
    assert len(harm) == 12
    tiers = Counter("open" if c["model"].startswith("open") else "closed" for c in harm)
    assert tiers == {"open": 6, "closed": 6}
    # Within a tier the model is random: both open-weight models are represented.
    assert {c["model"] for c in harm} == {"open-a", "open-b", "closed"}
    # A case without a flip shows a random arm's answer and asks no harm question.
    b2 = _audit(db, "mmlu", "b", {"m1": "open", "m2": "open"}, 2, flip={"m2"})
    create_set(db, b2.audit_id, 100, per_family=None, seed=0, name="t")
    for case in _cases(db, "t"):
        if case["family"] in ("M3", "M4", "M5"):
            assert case["ask_harm"] == 1 and case["model"] == "m2"
        else:
            assert case["ask_harm"] == 0


def test_one_sample_across_the_panel_audits_without_pubmedqa(db):
    """Appendix M: stratified "by operator family ... and three medical benchmarks
    (PubMedQA stems do not host M-block edits)": one set drawn from one audit per dataset."""
    medqa = _audit(db, "medqa", "a-medqa", {"m": "open"}, 10, flip=set())
    mmlu = _audit(db, "mmlu", "a-mmlu", {"m": "open"}, 10, flip=set())
    pqa = _audit(db, "pqa", "a-pqa", {"m": "open"}, 10, flip=set())
    db.execute("UPDATE datasets SET format = 'pubmedqa' WHERE name = 'pqa'")
    create_set(db, medqa.audit_id, 16, per_family=None, seed=0, name="panel",
               also_audits=(mmlu.audit_id, pqa.audit_id))
    cases = _cases(db, "panel")
    # 16 cases round-robin over 4 families × 2 datasets (PubMedQA excluded): 2 per stratum.
    assert Counter((c["family"], c["dataset"]) for c in cases) == {
        (f, ds): 2 for f in ("M2", "M3", "M4", "M5") for ds in ("medqa", "mmlu")}
    with pytest.raises(UserError, match="only other seed-002 audits"):
        create_set(db, medqa.audit_id, 4, seed=0, name="self", also_audits=(medqa.audit_id,))
