"""The planner on the fake backend: operator selection, stage-1 jobs, not-fired jobs, F-block."""

from __future__ import annotations

import pytest

from store.errors import UserError
from store.generations import get_generation
from store.jobs import list_jobs, mark_done
from workbench.audit import AuditSpec, create_plan, plan_fblock
from workbench.perturb import resolve_operators
from workbench.audit.plan import exact_prefix_ids
from workbench.engine.plans import resolve_templates
from workbench.engine.variants import get_variant
from workbench.perturb import F_BLOCK, M_BLOCK, strip_final_answer

from tests.audit.conftest import CHAIN


def test_resolve_operators_words() -> None:
    # all = 17 F + 13 M + the option shuffle (seed 002 App. F and D).
    assert len(resolve_operators("all")) == 17 + 13 + 1
    assert resolve_operators("F") == tuple(F_BLOCK)
    assert resolve_operators("M") == tuple(M_BLOCK)
    assert resolve_operators("M2") == ("M2_age_a", "M2_age_b", "M2_sex")
    # Catalogue order, duplicates folded: shuffle last, F before M.
    assert resolve_operators("shuffle,M4_negation_b,F1_truncate_25,M4") == (
        "F1_truncate_25", "M4_negation_a", "M4_negation_b", "option_shuffle")


@pytest.mark.parametrize("word", ["F9", "control_recall", "nope", ","])
def test_resolve_operators_rejects_non_battery_words(word: str) -> None:
    with pytest.raises(UserError, match="--operators"):
        resolve_operators(word)


def test_resolve_templates_accepts_cot_only() -> None:
    assert resolve_templates("neutral_cot,strict_medical@1") == ("neutral_cot@1",
                                                                 "strict_medical@1")
    with pytest.raises(UserError, match="chain-of-thought"):
        resolve_templates("direct")


def test_same_settings_same_name_other_settings_other_name() -> None:
    a = AuditSpec(dataset="demo", models=("m",), limit=2)
    assert a.audit_name == AuditSpec(dataset="demo", models=("m",), limit=2).audit_name
    assert a.audit_name != AuditSpec(dataset="demo", models=("m",), limit=3).audit_name
    assert a.audit_name.startswith("demo-")


def _spec(**kw) -> AuditSpec:
    base = dict(dataset="demo", models=("fake",), item_ids=("demo-001", "triage-001"),
                operators=resolve_operators("M,shuffle"))
    base.update(kw)
    return AuditSpec(**base)


def test_stage1_plan_jobs_and_not_fired(demo_db, fake_model, make_engine) -> None:
    engine = make_engine()
    plan = create_plan(demo_db, _spec(), engine.runner)
    jobs = list_jobs(demo_db, plan.audit.id)
    # Per item and arm: baseline + direct + 13 M + shuffle = 16 jobs; 2 items x 1 arm.
    assert len(jobs) == 32
    assert {j.stage for j in jobs} == {1}
    for job in jobs:
        variant = get_variant(demo_db, job.variant_id) if job.variant_id else None
        if variant is not None and not variant.fired:
            assert job.status == "not_fired" and job.generation_key is None
        else:
            assert job.status == "pending" and job.generation_key is not None
    # A yes/no item's options are its labels: the shuffle is recorded as not fired.
    triage = next(i for i in plan.items if i.source_id == "triage-001")
    (shuffle,) = [j for j in jobs if j.role == "shuffle" and j.item_id == triage.id]
    assert shuffle.status == "not_fired"
    assert "binary" in get_variant(demo_db, shuffle.variant_id).reason
    # demo-001 has no severity qualifier (mild/severe/...): both M5 variants do not fire.
    first = next(i for i in plan.items if i.source_id == "demo-001")
    m5 = [get_variant(demo_db, j.variant_id) for j in jobs
          if j.item_id == first.id and j.role == "m_block"]
    assert {v.fired for v in m5 if v.family == "M5"} == {False}
    # Planning again adds nothing.
    create_plan(demo_db, _spec(), engine.runner)
    assert len(list_jobs(demo_db, plan.audit.id)) == 32


def test_user_defined_and_baseline_operators_run_in_audits(
        demo_db, fake_model, make_engine, tmp_path, monkeypatch) -> None:
    rules = tmp_path / "ops.toml"
    rules.write_text('[[operator]]\nid = "U_smoker"\nintent = "D"\nlocus = "Sur"\n'
                     'pattern = "\\\\bhypertension\\\\b"\nreplacement = "asthma"\n'
                     'example = "He has hypertension."\n', encoding="utf-8")
    monkeypatch.setenv("PAW_OPERATORS", str(rules))
    # Battery ids first (catalogue order), then the extras in the order given.
    assert resolve_operators("U_smoker,M5,fixed_sentence") == (
        "M5_severity_a", "M5_severity_b", "U_smoker", "fixed_sentence")
    engine = make_engine()
    spec = _spec(item_ids=("demo-001",), operators=resolve_operators("U_smoker,fixed_sentence"))
    plan = create_plan(demo_db, spec, engine.runner)
    jobs = [j for j in list_jobs(demo_db, plan.audit.id) if j.role == "m_block"]
    variants = {get_variant(demo_db, j.variant_id).operator_id: get_variant(demo_db, j.variant_id)
                for j in jobs}
    # demo-001 "has a history of hypertension": the user rule fires and keeps its tags.
    assert variants["U_smoker"].fired and "asthma" in variants["U_smoker"].text
    assert (variants["U_smoker"].family, variants["U_smoker"].intent) == ("user", "D")
    assert variants["fixed_sentence"].fired
    assert {j.status for j in jobs} == {"pending"}


def test_two_templates_share_question_variants(demo_db, fake_model, make_engine) -> None:
    engine = make_engine()
    spec = _spec(templates=("neutral_cot@1", "strict_medical@1"))
    plan = create_plan(demo_db, spec, engine.runner)
    assert [a.label for a in plan.arms] == ["fake/neutral_cot@1", "fake/strict_medical@1"]
    jobs = list_jobs(demo_db, plan.audit.id)
    assert len(jobs) == 64
    # 2 items x 14 question/option operators: variants are per item, not per arm.
    n_variants = demo_db.execute("SELECT COUNT(*) FROM variants").fetchone()[0]
    assert n_variants == 2 * 14
    # The arms differ in their system prompt, so their baseline keys differ ...
    baselines = [j for j in jobs if j.role == "baseline"]
    assert len({j.generation_key for j in baselines}) == 4
    # ... but the direct baseline uses the direct template in both: one key per item.
    directs = [j for j in jobs if j.role == "direct"]
    assert len({j.generation_key for j in directs}) == 2


def test_fblock_is_planned_on_the_arms_own_baseline(demo_db, fake_model, make_engine) -> None:
    engine = make_engine()
    spec = _spec(item_ids=("demo-001",), operators=resolve_operators("F"))
    plan = create_plan(demo_db, spec, engine.runner)
    # Without a stored baseline there is nothing to edit yet.
    assert plan_fblock(demo_db, plan, engine.runner) == 0
    runner = engine.runner(fake_model)
    (baseline_job,) = list_jobs(demo_db, plan.audit.id, role="baseline")
    from workbench.audit.plan import request_for
    runner.run([request_for("baseline", plan.items[0], plan.arms[0], None, plan.audit.config)])
    mark_done(demo_db, [baseline_job.id])
    assert plan_fblock(demo_db, plan, engine.runner) == 17
    assert plan_fblock(demo_db, plan, engine.runner) == 0  # idempotent
    baseline = get_generation(demo_db, baseline_job.generation_key)
    chain = strip_final_answer(baseline.output)
    assert chain == CHAIN.rsplit("\n", 1)[0]  # 'Answer: A' line stripped
    jobs = list_jobs(demo_db, plan.audit.id, role="f_block")
    assert {j.stage for j in jobs} == {2}
    variants = {get_variant(demo_db, j.variant_id).operator_id: get_variant(demo_db, j.variant_id)
                for j in jobs}
    assert {v.source_generation_id for v in variants.values()} == {baseline.id}
    # F1 truncate-50 of 3 steps keeps floor(3 * 50 / 100) = 1 step; the fake backend's tokens
    # are characters, so the exact prefix ids are the code points of that step.
    kept = variants["F1_truncate_50"]
    assert kept.text == "Step 1: The patient has 3 findings and we compute the score."
    assert kept.details["prefix_token_ids"] == [ord(c) for c in kept.text]
    # Every other fired F edit is continued from re-tokenized text (no ids stored).
    assert variants["F2_delete_a"].details.get("prefix_token_ids") is None
    # F1 truncate-75 keeps floor(3*75/100) = 2 of 3 steps: fires; none keeps all 3.
    assert variants["F1_truncate_75"].fired


def test_exact_prefix_ids_only_on_a_token_boundary() -> None:
    pieces = {1: b"Step", 2: b" 1", 3: b":", 4: b" ok", 5: b"ay"}
    output = "Step 1: okay"
    ids = [1, 2, 3, 4, 5]
    assert exact_prefix_ids(pieces.__getitem__, output, ids, "Step 1:") == (1, 2, 3)
    assert exact_prefix_ids(pieces.__getitem__, output, ids, "Step 1: okay") == (1, 2, 3, 4, 5)
    # 'Step 1: o' ends inside the token ' ok': no exact ids, the runner re-tokenizes.
    assert exact_prefix_ids(pieces.__getitem__, output, ids, "Step 1: o") is None
    # Not a prefix of the output at all.
    assert exact_prefix_ids(pieces.__getitem__, output, ids, "Step 2") is None
    # Pieces that do not spell the output (a stale id list) are not trusted.
    assert exact_prefix_ids(pieces.__getitem__, "Step 1: okay!", ids, "Step 1:") is None
