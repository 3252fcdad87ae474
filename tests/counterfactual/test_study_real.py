"""A tiny real seed-000 study with the embedded SmolLM2-135M: k = 3 samples, the LLM paraphraser's
measure-and-retry on the real model, resume, and the report.

Run once per module (about a minute and a half on 2 idle cores): two demo triage items (a man,
a woman) under the gender swap and the precision control, both baselines, direct answers of at
most 4 tokens, 3 paraphrase attempts.
"""

from __future__ import annotations

import pytest

from analysis.counterfactual.report import StudyReportOptions, build_report
from store.db import open_db
from store.generations import get_generation
from store.jobs import list_jobs
from workbench.engine import AuditEngine
from workbench.engine.variants import get_variant
from workbench.counterfactual import StudySpec, resolve_targets, run_study
from workbench.counterfactual.paraphrase import PROMPT_ID
from workbench.datasets.demo import import_demo
from workbench.models import default_model
from workbench.perturb.tokenize import CallableTokenizer, token_change_fraction

pytestmark = pytest.mark.model

ATTEMPTS = 3


def _spec() -> StudySpec:
    return StudySpec(dataset="demo", targets=resolve_targets("gender_swap,control_precision"),
                     item_ids=("triage-001", "triage-002"), max_tokens=4,
                     max_attempts=ATTEMPTS)


@pytest.fixture(scope="module")
def studied(tmp_path_factory):
    """(db, outcome, engine) of the study, run once for the module on an on-disk store."""
    db = open_db(tmp_path_factory.mktemp("study") / "paw.db")
    import_demo(db)
    engine = AuditEngine(db)
    outcome = run_study(db, _spec(), engine=engine)
    yield db, outcome, engine
    engine.close()


def _count(db, sql: str) -> int:
    return db.execute(sql).fetchone()[0]


def test_every_prompt_has_three_seeded_samples(studied):
    db, outcome, _ = studied
    assert not outcome.stopped
    assert set(outcome.job_counts) <= {"done", "not_fired"}
    done = [j for j in list_jobs(db, outcome.study_id) if j.status == "done"]
    assert {j.role for j in done} == {"original", "target", "fixed", "paraphrase"}
    slots: dict[tuple, list] = {}
    for job in done:
        slots.setdefault((job.arm_id, job.item_id, job.role, job.variant_id), []).append(job)
    for jobs in slots.values():
        assert sorted(j.seed for j in jobs) == [0, 1, 42]
        generations = [get_generation(db, j.generation_key) for j in jobs]
        assert {g.sampler["temperature"] for g in generations} == {0.7}
        assert sorted(g.seed for g in generations) == [0, 1, 42]
        # Direct mode: every sample's distribution is the next token after 'Answer:' —
        # sampling happens after it, so the k distributions are one and the same.
        first = generations[0].option_probs
        for g in generations[1:]:
            assert g.option_probs == pytest.approx(first, abs=1e-9)


def test_the_llm_paraphraser_measures_and_retries_on_the_real_model(studied):
    db, outcome, engine = studied
    model = default_model(db)
    tokenizer = CallableTokenizer(lambda t: engine.runner(model).backend.tokenize(
        t, special=False))
    variants = [get_variant(db, j.variant_id) for j in
                list_jobs(db, outcome.study_id, role="paraphrase") if j.sample_index == 0]
    assert len(variants) == 4
    for variant in variants:
        details = variant.details
        target = get_variant(db, details["reference_variant_id"])
        original = target.details.get("control_baseline_text") or db.execute(
            "SELECT question FROM items WHERE id = ?", [variant.item_id]).fetchone()[0]
        # Target fraction: the targeted edit, measured with SmolLM2's own tokenizer.
        assert details["target_fraction"] == pytest.approx(
            token_change_fraction(original, target.text, tokenizer), abs=1e-6)
        attempts = details["attempts"]
        assert 1 <= len(attempts) <= ATTEMPTS
        for index, attempt in enumerate(attempts):
            generation = get_generation(db, attempt["key"])
            assert generation.template == PROMPT_ID and generation.mode == "judge"
            assert generation.seed == attempt["seed"] == index
            if "fraction" in attempt:  # passed the meaning checks: measured
                assert attempt["status"] in ("accepted", "outside tolerance")
        if details["source"] == "none":
            assert not variant.fired
            continue
        assert variant.fired
        assert variant.token_change_fraction == pytest.approx(
            token_change_fraction(original, variant.text, tokenizer), abs=1e-6)
        assert details["achieved_fraction"] == variant.token_change_fraction
        within = abs(details["achieved_fraction"] - details["target_fraction"]) <= 0.03
        assert details["within_tolerance"] == within
        if details["source"] == "llm":  # the first attempt within tolerance was taken
            assert attempts[-1]["status"] == "accepted" and within
            assert all(a["status"] != "accepted" for a in attempts[:-1])
        else:  # bounded: every attempt was used before falling back
            assert len(attempts) == ATTEMPTS
            assert all(a["status"] != "accepted" for a in attempts)
            assert "fallback" in details
        if target.details.get("control_baseline_text"):
            assert variant.text.endswith("Is this patient male?")


def test_rerun_generates_nothing(studied):
    db, outcome, engine = studied
    before = _count(db, "SELECT COUNT(*) FROM generations")
    variants = _count(db, "SELECT COUNT(*) FROM variants")
    again = run_study(db, _spec(), engine=engine)
    assert again.study_id == outcome.study_id
    assert again.generated == 0
    assert _count(db, "SELECT COUNT(*) FROM generations") == before
    assert _count(db, "SELECT COUNT(*) FROM variants") == variants
    assert again.job_counts == outcome.job_counts


def test_report_of_the_real_study(studied, tmp_path):
    db, outcome, _ = studied
    report = build_report(db, outcome.study, options=StudyReportOptions(n_boot=200))
    table4 = report.section("table4").frame
    assert table4["perturbation"].tolist() == ["gender_swap"]
    assert table4["task"].tolist() == ["yes/no"]
    votes = report.section("votes").frame
    assert set(votes["k"]) == {3}
    agreement = report.section("paraphrase").frame
    assert agreement[agreement["model"] == "all"]["n_units"].iloc[0] == 4
    tests = report.section("tests").frame
    finite = tests["p"].dropna()
    assert ((finite >= 0) & (finite <= 1)).all()
    path, pngs = report.write(tmp_path / "study.md", "md")
    assert "Table 6: recall and precision checks" in path.read_text()
