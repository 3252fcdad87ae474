"""The staged engine on its own: a tiny two-model kind with k samples, a planned second stage
and a judge stage, on the fake backend (the real model runs in test_audit_real.py)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from store.datasets import dataset_id, get_items
from store.generations import get_generation
from store.jobs import JobSpec, add_arm, add_jobs, create_audit, list_jobs
from store.models import add_model
from store.runs import find_run
from workbench.engine import BlockProgress, Stage, StageStarted, StudyContext, run_staged
from workbench.engine.events import AuditFinished, AuditPlanned
from workbench.models import GenerationRequest, Sampler
from workbench.models.prompts import PLAIN_CHAT_TEMPLATE

SEEDS = (0, 1, 42)
ROLE_BLOCK = {"sample": "samples", "followup": "followups", "check": "judge"}


def _ctx(db, engine, judge_model=None, n_items=2):
    ds = dataset_id(db, "demo")
    items = get_items(db, "demo", n_items)
    models = [add_model(db, name=n, path=f"/nowhere/{n}.gguf", sha256=c * 64,
                        chat_template=PLAIN_CHAT_TEMPLATE) for n, c in (("m1", "a"), ("m2", "b"))]
    audit = create_audit(db, "tiny", "study", ds, {"seeds": list(SEEDS)})
    arms = tuple(add_arm(db, audit.id, m.name, m.id, "neutral_cot@1") for m in models)
    add_jobs(db, audit.id, [
        JobSpec(arm_id=arm.id, item_id=item.id, role="sample", sample_index=k, seed=seed)
        for arm in arms for item in items for k, seed in enumerate(SEEDS)])
    by_id = {m.id: m for m in models}
    if judge_model is not None:
        by_id[judge_model.id] = judge_model
    return StudyContext(db, audit, arms, by_id, {i.id: i for i in items}, engine, judge_model)


def _sample(ctx: StudyContext, job) -> GenerationRequest:
    return GenerationRequest(ctx.items[job.item_id], "cot", "neutral_cot@1",
                             Sampler(temperature=0.7, seed=job.seed, max_tokens=64))


def _followup(ctx: StudyContext, job) -> GenerationRequest:
    return GenerationRequest(ctx.items[job.item_id], "direct", "direct@1",
                             Sampler(max_tokens=4))


def _plan_followups(ctx: StudyContext, arms: Sequence, runner) -> int:
    # One follow-up per (arm, item) once all of its samples are stored: a later stage that
    # depends on earlier generations, like the F-block or a CFV re-answer.
    specs = []
    for arm in arms:
        for job in list_jobs(ctx.db, ctx.audit.id, role="sample", arm_id=arm.id, status="done"):
            if job.sample_index == 0:
                specs.append(JobSpec(arm_id=arm.id, item_id=job.item_id, role="followup",
                                     stage=2))
    return add_jobs(ctx.db, ctx.audit.id, specs)


def _plan_checks(ctx: StudyContext, arms: Sequence, runner) -> int:
    specs = [JobSpec(arm_id=j.arm_id, item_id=j.item_id, role="check", stage=3)
             for j in list_jobs(ctx.db, ctx.audit.id, role="followup", status="done")]
    return add_jobs(ctx.db, ctx.audit.id, specs)


def _check(ctx: StudyContext, job) -> GenerationRequest:
    messages = ({"role": "user", "content": f"Is item {job.item_id} of arm {job.arm_id} ok?"},)
    return GenerationRequest(ctx.items[job.item_id], "judge", "tiny_check@1",
                             Sampler(max_tokens=8), messages=messages, labels=("Yes", "No"))


STAGES = [Stage("samples", 1, _sample), Stage("followups", 2, _followup, plan=_plan_followups),
          Stage("check", 3, _check, plan=_plan_checks, on="judge")]


def test_stages_run_per_model_then_judge_and_rerun_generates_nothing(demo_db, make_engine):
    db = demo_db
    engine = make_engine()
    judge = add_model(db, name="judge", path="/nowhere/j.gguf", sha256="c" * 64,
                      chat_template=PLAIN_CHAT_TEMPLATE)
    ctx = _ctx(db, engine, judge)
    events = []
    outcome = run_staged(ctx, STAGES, command="study", role_block=ROLE_BLOCK,
                         blocks=("samples", "followups", "judge"), on_event=events.append)
    # 2 arms x 2 items x 3 seeds samples, 2 x 2 follow-ups, 4 checks on the judge model.
    assert outcome.job_counts == {"done": 12 + 4 + 4}
    assert not outcome.stopped
    assert isinstance(events[0], AuditPlanned) and isinstance(events[-1], AuditFinished)
    stages = [(e.stage, e.model) for e in events if isinstance(e, StageStarted)]
    assert stages == [("samples", "m1"), ("followups", "m1"), ("samples", "m2"),
                      ("followups", "m2"), ("check", "judge")]
    final = {e.block: (e.done, e.total) for e in events if isinstance(e, BlockProgress)}
    assert final == {"samples": (12, 12), "followups": (4, 4), "judge": (4, 4)}
    # Each sample's seed is in its generation (content key differs per seed).
    samples = list_jobs(db, ctx.audit.id, role="sample")
    seeds = {get_generation(db, j.generation_key).seed for j in samples}
    assert seeds == set(SEEDS)
    # Judge generations are stored under the judge model.
    checks = list_jobs(db, ctx.audit.id, role="check")
    assert {get_generation(db, j.generation_key).model_id for j in checks} == {judge.id}
    assert find_run(db, "tiny").status == "finished"

    again = run_staged(_ctx_again(ctx, make_engine()), STAGES, command="study",
                       role_block=ROLE_BLOCK)
    assert again.generated == 0 and again.job_counts == outcome.job_counts


def _ctx_again(ctx: StudyContext, engine) -> StudyContext:
    return StudyContext(ctx.db, ctx.audit, ctx.arms, ctx.models, ctx.items, engine,
                        ctx.judge_model)


def test_stop_leaves_an_interrupted_run_that_resumes(demo_db, make_engine):
    db = demo_db
    ctx = _ctx(db, make_engine())
    calls = {"n": 0}

    def stop_after_five() -> bool:
        calls["n"] += 1
        return calls["n"] > 5

    first = run_staged(ctx, STAGES[:2], command="study", role_block=ROLE_BLOCK,
                       should_stop=stop_after_five)
    assert first.stopped and first.generated == 5
    assert find_run(db, "tiny").status == "interrupted"
    second = run_staged(_ctx_again(ctx, make_engine()), STAGES[:2], command="study",
                        role_block=ROLE_BLOCK)
    assert not second.stopped
    assert second.generated == 12 + 4 - 5
    assert second.job_counts == {"done": 16}
    assert find_run(db, "tiny").status == "finished"


def test_a_backend_failure_marks_jobs_error_and_the_next_run_retries(demo_db, make_engine):
    db = demo_db
    failing = make_engine(fail_on=lambda prompt: True)
    ctx = _ctx(db, failing, n_items=1)
    outcome = run_staged(ctx, STAGES[:1], command="study", role_block=ROLE_BLOCK)
    assert outcome.job_counts.get("error") == 6
    retry = run_staged(_ctx_again(ctx, make_engine()), STAGES[:1], command="study",
                       role_block=ROLE_BLOCK)
    assert retry.job_counts == {"done": 6}


@pytest.mark.parametrize("n_items", [1])
def test_models_are_freed_between_models(demo_db, make_engine, n_items):
    engine = make_engine()
    ctx = _ctx(demo_db, engine, n_items=n_items)
    run_staged(ctx, STAGES[:1], command="study", role_block=ROLE_BLOCK)
    # Each model's runner is dropped before the next model loads (two backends were built,
    # none is kept: the engine holds no runner after the last model).
    assert len(engine.backends) == 2
    assert engine._runners == {}
