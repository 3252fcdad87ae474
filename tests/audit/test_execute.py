"""Running an audit on the fake backend: progress, resume, errors, stop, panel, judge storage."""

from __future__ import annotations

from store.jobs import get_audit, job_counts, list_jobs
from store.models import add_model
from workbench.audit import AuditSpec, run_audit
from workbench.engine import AuditFinished, AuditPlanned, BlockProgress
from workbench.perturb import resolve_operators
from workbench.audit.judge import JUDGE_KIND, edit_words, judge_messages, read_verdict
from workbench.models.prompts import PLAIN_CHAT_TEMPLATE

OPERATORS = "F1_truncate_50,F2_delete_a,F4_insert_a,M2,M3_distractor_a,M4_negation_a,M5,shuffle"
"""One or more operators of every block, and M2/M4/M5 for the judge."""


def _spec(**kw) -> AuditSpec:
    base = dict(dataset="demo", models=("fake",), item_ids=("demo-003", "triage-001"),
                operators=resolve_operators(OPERATORS), max_tokens=64)
    base.update(kw)
    return AuditSpec(**base)


def _n_generations(db) -> int:
    return db.execute("SELECT COUNT(*) FROM generations").fetchone()[0]


def test_full_run_progress_and_rerun_generates_nothing(demo_db, fake_model, make_engine):
    events = []
    outcome = run_audit(demo_db, _spec(), engine=make_engine(), judge_model=fake_model,
                        on_event=events.append)
    assert not outcome.stopped
    assert set(outcome.job_counts) <= {"done", "not_fired"}
    planned = next(e for e in events if isinstance(e, AuditPlanned))
    assert planned.items == 2 and planned.arms == ("fake/neutral_cot@1",)
    # The last progress of every block is complete: done == total, and totals exclude
    # not-fired jobs (they never need a generation).
    last = {}
    for event in events:
        if isinstance(event, BlockProgress):
            last[event.block] = event
    assert set(last) == {"baseline", "direct", "M", "F", "shuffle", "judge"}
    for block, event in last.items():
        assert event.done == event.total > 0, block
    jobs = list_jobs(demo_db, outcome.audit_id)
    done = [j for j in jobs if j.status == "done"]
    assert last["M"].total == sum(j.role == "m_block" for j in done)
    assert last["F"].total == sum(j.role == "f_block" for j in done)
    assert isinstance(events[-1], AuditFinished)
    assert get_audit(demo_db, outcome.audit).status == "finished"
    before = _n_generations(demo_db)
    assert before == outcome.generated
    again = run_audit(demo_db, _spec(), engine=make_engine(), judge_model=fake_model)
    assert again.generated == 0
    assert _n_generations(demo_db) == before
    assert again.job_counts == outcome.job_counts


def test_not_fired_jobs_have_no_generation(demo_db, fake_model, make_engine):
    outcome = run_audit(demo_db, _spec(), engine=make_engine(), judge_model=fake_model)
    rows = demo_db.execute(
        "SELECT j.status, j.generation_key, v.fired, "
        "(SELECT COUNT(*) FROM generations g WHERE g.variant_id = v.id) "
        "FROM jobs j JOIN variants v ON v.id = j.variant_id WHERE j.audit_id = ?",
        [outcome.audit_id]).fetchall()
    not_fired = [r for r in rows if r[2] == 0]
    # triage-001 has no severity word (M5 a/b) and is yes/no (shuffle): at least 3.
    assert len(not_fired) >= 3
    assert all(r[0] == "not_fired" and r[1] is None and r[3] == 0 for r in not_fired)
    assert all(r[0] == "done" for r in rows if r[2] == 1)


def test_backend_errors_are_marked_and_retried(demo_db, fake_model, make_engine):
    def fails_on_direct(prompt: str) -> bool:
        return "Answer with" in prompt[-200:]

    first = run_audit(demo_db, _spec(), engine=make_engine(fail_on=fails_on_direct),
                      judge_model=fake_model)
    errors = list_jobs(demo_db, first.audit_id, status="error")
    assert {j.role for j in errors} == {"direct"} and len(errors) == 2
    second = run_audit(demo_db, _spec(), engine=make_engine(), judge_model=fake_model)
    assert second.generated == 2  # only the two direct answers
    assert "error" not in job_counts(demo_db, second.audit_id)


def test_stopped_run_resumes_without_duplicates(demo_db, fake_model, make_engine, db):
    calls = {"n": 0}

    def stop_after_five() -> bool:
        calls["n"] += 1
        return calls["n"] > 5

    stopped = run_audit(demo_db, _spec(), engine=make_engine(), judge_model=fake_model,
                        should_stop=stop_after_five)
    assert stopped.stopped and stopped.generated == 5
    assert get_audit(demo_db, stopped.audit).status == "stopped"
    rest = run_audit(demo_db, _spec(), engine=make_engine(), judge_model=fake_model)
    assert not rest.stopped
    # Everything the audit needs exists exactly once: one generation per distinct key of
    # a done job, plus the judge's generations.
    keys = {j.generation_key for j in list_jobs(demo_db, rest.audit_id, status="done")}
    judged = demo_db.execute("SELECT COUNT(*) FROM generations WHERE mode = 'judge'").fetchone()[0]
    assert _n_generations(demo_db) == len(keys) + judged == stopped.generated + rest.generated


def test_panel_of_two_models_loads_each_once(demo_db, fake_model, make_engine):
    other = add_model(demo_db, name="fake2", path="/nowhere/fake2.gguf", sha256="e" * 64,
                      chat_template=PLAIN_CHAT_TEMPLATE)
    engine = make_engine()
    outcome = run_audit(demo_db, _spec(models=("fake", "fake2")), engine=engine,
                        judge_model=fake_model)
    labels = [r[0] for r in demo_db.execute(
        "SELECT label FROM arms WHERE audit_id = ? ORDER BY id", [outcome.audit_id])]
    assert labels == ["fake/neutral_cot@1", "fake2/neutral_cot@1"]
    # One backend per model: the judge (model 'fake') runs last on the already loaded one.
    assert len(engine.backends) == 2
    models = {r[0] for r in demo_db.execute(
        "SELECT DISTINCT g.model_id FROM jobs j JOIN generations g ON g.key = j.generation_key "
        "WHERE j.audit_id = ? AND j.role = 'baseline'", [outcome.audit_id])}
    assert models == {fake_model.id, other.id}


def test_judge_verdicts_are_stored_for_fired_m2_m4_m5(demo_db, fake_model, make_engine):
    outcome = run_audit(demo_db, _spec(), engine=make_engine(), judge_model=fake_model)
    subjects = demo_db.execute(
        "SELECT DISTINCT g.id FROM jobs j JOIN variants v ON v.id = j.variant_id "
        "JOIN generations g ON g.key = j.generation_key WHERE j.audit_id = ? AND "
        "j.status = 'done' AND v.family IN ('M2', 'M4', 'M5')", [outcome.audit_id]).fetchall()
    rows = demo_db.execute(
        "SELECT ju.kind, ju.method, ju.verdict, jg.mode, ju.variant_id, ju.evidence "
        "FROM judgements ju JOIN generations jg ON jg.id = ju.judge_generation_id").fetchall()
    assert len(rows) == len(subjects) > 0
    assert outcome.judgements == len(rows)
    # The fake judge writes 'Answer: No' to every case.
    assert {(r[0], r[1], r[2], r[3]) for r in rows} == {
        (JUDGE_KIND, "llm_judge:fake", "no", "judge")}
    assert all(r[4] is not None and '"read_from":"answer"' in r[5] for r in rows)
    again = run_audit(demo_db, _spec(), engine=make_engine(), judge_model=fake_model)
    assert again.judgements == 0 and again.generated == 0


def test_read_verdict_prefers_the_parsed_answer() -> None:
    assert read_verdict("Yes", "ok", {"Yes": 0.2, "No": 0.8}) == ("yes", "answer")
    # No parsable answer: the likelier label at the answer position.
    assert read_verdict(None, "no_answer", {"Yes": 0.3, "No": 0.7}) == ("no", "option_probs")
    assert read_verdict(None, "empty", None) == (None, None)
    assert read_verdict(None, "no_answer", {"Yes": 0.5, "No": 0.5}) == (None, None)


def test_judge_prompt_shows_the_edit_and_the_chain() -> None:
    messages = judge_messages("severe", "mild", "The pain is mild, so ...")
    assert messages[0]["role"] == "system"
    roles = [m["role"] for m in messages[1:]]
    assert roles == ["user", "assistant"] * ((len(roles) - 1) // 2) + ["user"]
    yes = sum(m["content"] == "Answer: Yes" for m in messages)
    no = sum(m["content"] == "Answer: No" for m in messages)
    assert yes == no >= 2  # a balanced few-shot rubric
    assert '"severe" was changed to "mild"' in messages[-1]["content"]
    assert "The pain is mild" in messages[-1]["content"]
    # An M2 age edit is shown as the whole phrase, not the bare number.
    assert edit_words("M2", "58", "8", {"old_phrase": "58-year-old"}) == ("58-year-old",
                                                                          "8-year-old")
    assert edit_words("M4", "reports", "does not report", {}) == ("reports", "does not report")
