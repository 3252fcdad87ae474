"""A dose-response study on the embedded SmolLM2-135M (the audited model and the paraphraser):
multi-sentence paraphrases sized per level with the model's own tokenizer.

Two demo triage items at levels 0.05 and 0.4, direct answers of at most 4 tokens, 2
paraphrase attempts (under a minute on 2 idle cores).
"""

from __future__ import annotations

import statistics

import pytest

from store.db import open_db
from store.jobs import list_jobs
from workbench.engine import AuditEngine
from workbench.engine.variants import get_variant
from workbench.counterfactual import StudySpec, run_study
from workbench.datasets.demo import import_demo
from workbench.models import default_model
from workbench.perturb.tokenize import CallableTokenizer, token_change_fraction

pytestmark = pytest.mark.model

LEVELS = (0.05, 0.4)


def test_achieved_fractions_rise_with_the_level(tmp_path):
    db = open_db(tmp_path / "paw.db")
    import_demo(db)
    engine = AuditEngine(db)
    try:
        spec = StudySpec(dataset="demo", targets=(), baselines=("paraphrase_adjusted",),
                         levels=LEVELS, item_ids=("triage-001", "triage-004"), max_tokens=4,
                         max_attempts=2)
        outcome = run_study(db, spec, engine=engine)
        model = default_model(db)
        runner = engine.runner(model)
        tokenizer = CallableTokenizer(lambda t: runner.backend.tokenize(t, special=False))
    finally:
        engine.close()
    achieved: dict[float, list[float]] = {level: [] for level in LEVELS}
    for job in list_jobs(db, outcome.study_id, role="paraphrase"):
        if job.sample_index != 0:
            continue
        variant = get_variant(db, job.variant_id)
        details = variant.details
        level = get_variant(db, details["reference_variant_id"]).details["dose_level"]
        assert details["target_fraction"] == level and details["span"] == "fit"
        if not variant.fired:
            continue
        original = db.execute("SELECT question FROM items WHERE id = ?",
                              [variant.item_id]).fetchone()[0]
        # the recorded fraction is the tokenizer-measured fraction of the stored text
        measured = token_change_fraction(original, variant.text, tokenizer)
        assert variant.token_change_fraction == pytest.approx(measured, abs=1e-6)
        assert details["achieved_fraction"] == variant.token_change_fraction
        assert variant.text.endswith("Should this patient be sent to the emergency "
                                     "department today?")
        achieved[level].append(measured)
    assert all(achieved.values()), achieved  # every level got at least one paraphrase
    assert statistics.mean(achieved[0.4]) > statistics.mean(achieved[0.05])
    assert min(achieved[0.4]) > max(achieved[0.05])
