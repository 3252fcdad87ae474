"""The study's plan and run on the fake backend: units, k seeded samples, baselines, resume."""

from __future__ import annotations

import pytest

from store.errors import UserError
from store.generations import get_generation
from store.jobs import list_jobs
from workbench.engine.variants import get_variant
from workbench.counterfactual import StudySpec, default_seeds, resolve_targets, run_study
from workbench.counterfactual.plan import create_study, request_for
from workbench.perturb.baselines import CONTROL_QUESTION, FIXED_SENTENCES
from workbench.perturb.tokenize import CallableTokenizer, token_change_fraction

TARGETS = "gender_swap,control_recall"


def _spec(**kw) -> StudySpec:
    values = dict(dataset="triage", models=("fake",), targets=resolve_targets(TARGETS),
                  paraphraser="fake")
    values.update(kw)
    return StudySpec(**values)


def _count(db, table: str) -> int:
    return db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def test_plan_has_k_seeded_jobs_per_prompt_and_records_edits_that_did_not_fire(
        study_db, fake_model, make_engine):
    engine = make_engine()
    plan = create_study(study_db, _spec(), engine.runner)
    jobs = list_jobs(study_db, plan.audit.id)
    # 3 items × 2 targets; gender_swap and control_recall do not fire on the genderless item.
    not_fired = [j for j in jobs if j.status == "not_fired"]
    assert len(not_fired) == 2 and {j.role for j in not_fired} == {"target"}
    fired = [j for j in jobs if j.status == "pending"]
    by_role: dict[str, int] = {}
    for job in fired:
        by_role[job.role] = by_role.get(job.role, 0) + 1
    # 4 fired units × 3 samples for each stage-1 role (paraphrases come in stage 2).
    assert by_role == {"original": 12, "target": 12, "fixed": 12}
    for role in ("original", "target", "fixed"):
        seeds = sorted({(j.sample_index, j.seed) for j in fired if j.role == role})
        assert seeds == [(0, 0), (1, 1), (2, 42)]
    assert plan.audit.kind == "study" and plan.audit.config["temperature"] == 0.7
    # Planning again adds nothing.
    again = create_study(study_db, _spec(), engine.runner)
    assert again.audit.id == plan.audit.id
    assert len(list_jobs(study_db, plan.audit.id)) == len(jobs)


def test_a_control_units_prompts_all_ask_the_controls_question(study_db, fake_model,
                                                               make_engine):
    engine = make_engine()
    plan = create_study(study_db, _spec(), engine.runner)
    arm = plan.arms[0]
    jobs = list_jobs(study_db, plan.audit.id)
    control = next(j for j in jobs if j.role == "target" and j.status == "pending"
                   and get_variant(study_db, j.variant_id).operator_id == "control_recall")
    target = get_variant(study_db, control.variant_id)
    item = next(i for i in plan.items if i.id == control.item_id)
    original = request_for("original", item, target, arm, 0, plan.audit.config)
    assert original.question == target.details["control_baseline_text"]
    assert original.question.endswith(CONTROL_QUESTION)
    assert original.options == {"Yes": "Yes", "No": "No"} and original.variant_id is None
    fixed_job = next(j for j in jobs if j.role == "fixed" and j.item_id == control.item_id
                     and get_variant(study_db, j.variant_id).details.get(
                         "reference_variant_id") == target.id)
    fixed = get_variant(study_db, fixed_job.variant_id)
    assert fixed.text == f"{FIXED_SENTENCES['family_member']} {original.question}"
    assert fixed.options == {"Yes": "Yes", "No": "No"}
    # The stem unit's fixed variant prepends the same sentence to the item's own question.
    stem_job = next(j for j in jobs if j.role == "fixed" and j.item_id == control.item_id
                    and j.variant_id != fixed.id)
    assert get_variant(study_db, stem_job.variant_id).text == \
        f"{FIXED_SENTENCES['family_member']} {item.question}"


def test_run_stores_every_sample_and_a_rerun_generates_nothing(study_db, fake_model,
                                                               make_engine):
    outcome = run_study(study_db, _spec(), engine=make_engine())
    assert not outcome.stopped
    assert outcome.job_counts == {"done": 48, "not_fired": 2}
    generations = _count(study_db, "generations")
    assert outcome.generated == generations  # answers and the paraphraser's attempts
    again = run_study(study_db, _spec(), engine=make_engine())
    assert again.generated == 0 and again.study_id == outcome.study_id
    assert _count(study_db, "generations") == generations
    assert again.job_counts == outcome.job_counts


def test_samples_carry_their_seed_and_temperature(study_db, fake_model, make_engine):
    outcome = run_study(study_db, _spec(), engine=make_engine())
    jobs = [j for j in list_jobs(study_db, outcome.study_id) if j.status == "done"]
    for job in jobs:
        generation = get_generation(study_db, job.generation_key)
        assert generation.sampler["temperature"] == 0.7
        assert generation.sampler["seed"] == job.seed == generation.seed
        assert generation.mode == "direct"


def test_paraphrase_is_sized_with_the_audited_models_tokenizer(study_db, fake_model,
                                                               make_engine):
    engine = make_engine()
    outcome = run_study(study_db, _spec(), engine=engine)
    tokenizer = CallableTokenizer(lambda t: engine.runner(fake_model).backend.tokenize(
        t, special=False))
    paraphrases = [get_variant(study_db, j.variant_id) for j in
                   list_jobs(study_db, outcome.study_id, role="paraphrase")
                   if j.sample_index == 0]
    assert len(paraphrases) == 4
    for variant in paraphrases:
        target = get_variant(study_db, variant.details["reference_variant_id"])
        reference = target.details.get("control_baseline_text", None)
        item_question = study_db.execute("SELECT question FROM items WHERE id = ?",
                                         [variant.item_id]).fetchone()[0]
        original = reference or item_question
        # The fake backend's tokens are characters: the fractions are character-level.
        assert variant.details["target_fraction"] == pytest.approx(
            token_change_fraction(original, target.text, tokenizer), abs=1e-6)
        assert variant.token_change_fraction == pytest.approx(
            token_change_fraction(original, variant.text, tokenizer), abs=1e-6)
        assert variant.details["achieved_fraction"] == variant.token_change_fraction
        assert variant.details["source"] in ("llm", "fallback", "llm_closest")
        assert variant.details["tokenizer"] == "fake"
        for attempt in variant.details["attempts"]:
            stored = get_generation(study_db, attempt["key"])
            assert stored is not None and stored.mode == "judge"


def test_more_samples_generate_only_the_new_seed(study_db, fake_model, make_engine):
    first = run_study(study_db, _spec(), engine=make_engine())
    before = _count(study_db, "generations")
    more = run_study(study_db, _spec(seeds=default_seeds(4)), engine=make_engine())
    assert more.study_id != first.study_id  # another study (its config differs) …
    # … whose first three samples and paraphrases are already stored: one prompt in four.
    assert more.generated == _count(study_db, "generations") - before
    new_jobs = [j for j in list_jobs(study_db, more.study_id) if j.seed == 43]
    assert more.generated == len({j.generation_key for j in new_jobs})


def test_table_paraphraser_needs_no_llm(study_db, fake_model, make_engine):
    outcome = run_study(study_db, _spec(paraphraser="table"), engine=make_engine())
    judge = study_db.execute("SELECT COUNT(*) FROM generations WHERE mode = 'judge'").fetchone()
    assert judge[0] == 0
    variants = [get_variant(study_db, j.variant_id) for j in
                list_jobs(study_db, outcome.study_id, role="paraphrase") if j.sample_index == 0]
    assert {v.details["paraphraser"] for v in variants} == {"table"}


@pytest.mark.parametrize("kw, message", [
    (dict(seeds=(0, 0)), "--seeds: expected distinct seeds"),
    (dict(seeds=()), "--seeds: expected at least one seed"),
    (dict(mode="chat"), "--mode: expected direct or cot"),
    (dict(tolerance=0.0), "--tolerance"),
    (dict(baselines=("paraphrase",)), "--baselines: expected paraphrase_adjusted"),
    (dict(template="neutral_cot@1"), "not usable with --mode direct"),
    (dict(max_attempts=0), "--attempts"),
])
def test_bad_settings_are_one_line_user_errors(kw, message):
    with pytest.raises(UserError, match=message):
        _spec(**kw)


def test_targets_must_edit_the_question():
    assert resolve_targets("gender_swap, M2_sex") == ("gender_swap", "M2_sex")
    with pytest.raises(UserError, match="got 'fixed_sentence'"):
        resolve_targets("fixed_sentence")
    with pytest.raises(UserError, match="F1_truncate_25"):
        resolve_targets("F1_truncate_25")
    with pytest.raises(UserError, match="expected one of"):
        resolve_targets("nonsense")


def test_default_seeds_follow_the_paper():
    assert default_seeds(3) == (0, 1, 42)
    assert default_seeds(1) == (0,)
    assert default_seeds(5) == (0, 1, 42, 43, 44)


def test_a_paraphraser_failure_is_retried_next_run_not_settled_by_the_fallback(
        study_db, fake_model, make_engine):
    failing = make_engine(fail_on=lambda prompt: "Paraphrase, changing about" in prompt)
    first = run_study(study_db, _spec(), engine=failing)
    assert list_jobs(study_db, first.study_id, role="paraphrase") == []
    assert study_db.execute("SELECT COUNT(*) FROM variants WHERE operator_id = "
                            "'paraphrase_token_adjusted'").fetchone()[0] == 0
    second = run_study(study_db, _spec(), engine=make_engine())
    paraphrases = [get_variant(study_db, j.variant_id)
                   for j in list_jobs(study_db, second.study_id, role="paraphrase")
                   if j.sample_index == 0]
    assert len(paraphrases) == 4
    assert {v.details["source"] for v in paraphrases} == {"llm"}
