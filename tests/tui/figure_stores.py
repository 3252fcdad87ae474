"""Small real stores (WAL files) whose reports carry the papers' figures, for the Statistics
screen's plot snapshots (tests/tui/test_figure_snapshots.py).

Each is built as the engine-level tests build theirs, on the fake backend, in about a
second: a DBPA analysis (seed 001, the ROC), a robustness run of two models (seed 003,
Figures 5 and 6) and a dose-response study (seed 000, Figures 2 and 3). The power curves
(seed 000, Appendix F) are not stored by `paw power`; `power_report` builds them from a
study's logits here as the command does.
"""

from __future__ import annotations

from store import open_db
from tests.fakes import fake_engine, fake_model_record

DBPA_OPERATORS = ("M3_distractor_a", "M5_severity_a", "M4_negation_a")
DOSE_LEVELS = (0.05, 0.2, 0.4)
POWER_SIGMAS = (0.5, 1.0)
POWER_PERTS = (0.0, 0.5, 1.0, 2.0)


def dbpa_store(path: str) -> None:
    """tests/dbpa/test_report.py's analysis (2 demo items × 3 operators, jsd and energy) with
    its hand-set p-values, so the two ROC curves differ from chance and from each other."""
    from tests.dbpa.conftest import seeded_responder
    from tests.dbpa.test_report import P
    from workbench.datasets.demo import import_demo
    from workbench.dbpa import DbpaSpec, run_dbpa

    db = open_db(path)
    try:
        import_demo(db)
        fake_model_record(db)
        spec = DbpaSpec(dataset="demo", models=("fake",), k=5, permutations=999,
                        operators=DBPA_OPERATORS, item_ids=("demo-005", "demo-003"),
                        distances=("jsd", "energy"))
        run_dbpa(db, spec, engine=fake_engine(db, seeded_responder))
        for (op, item, distance), p in P.items():
            db.execute(
                "UPDATE dbpa_tests SET p_value = ?, effect_size = ?, null_mean = NULL, "
                "status = 'ok' WHERE perturbation = ? AND distance = ? AND item_id = "
                "(SELECT id FROM items WHERE source_id = ?)",
                [p, 1 - p if distance == "jsd" else 0.2, op, distance, item])
        db.conn.commit()
    finally:
        db.conn.close()


def robustness_store(path: str) -> None:
    """tests/robustness/helpers.py's `two_model_run`: two models, every Black prefix moves
    A -> B (judged more aggressive, one disease-association flag each)."""
    from tests.robustness.helpers import two_model_run
    from workbench.datasets.demo import import_demo

    db = open_db(path)
    try:
        import_demo(db)
        two_model_run(db)
    finally:
        db.conn.close()


REWORDINGS = ("known", "perspiration", "tobacco", "nasal", "as usual", "illnesses",
              "does not have", "individual", "comes in", "describes")
"""Phrases the fake paraphraser's larger rewordings bring in (tests/counterfactual)."""


def _swayed(prompt: str, sampler) -> str:
    """A second study model: as `fake_responder`, but its answer turns over once a paraphrase
    has brought in 3 of `REWORDINGS` (none at 5 %, one item at 20 %, two at 40 %)."""
    from tests.counterfactual.conftest import fake_responder

    answer = fake_responder(prompt, sampler)
    asked = prompt.rsplit("Question:", 1)[-1]
    if "Paraphrase, changing about" not in prompt and \
            sum(phrase in asked for phrase in REWORDINGS) >= 3:
        return "No" if answer == "Yes" else "Yes"
    return answer


def dose_store(path: str) -> None:
    """tests/counterfactual/test_dose.py's study (three yes/no triage items, paraphrases
    sized to 5 %, 20 % and 40 % of the tokens) for two models: `fake` (its answers never
    move) and `swayed` (a reworded question flips it), one line each in Figures 2 and 3."""
    from tests.builders import AuditBuilder
    from tests.counterfactual.conftest import STEMS, fake_responder
    from workbench.engine import AuditEngine
    from workbench.counterfactual import StudySpec, run_study
    from workbench.models.fake import FakeBackend

    db = open_db(path)
    try:
        builder = AuditBuilder(db, dataset="triage")
        for key, stem in STEMS.items():
            builder.item(f"t-{key}", gold="Yes", kind="binary", question=stem,
                         options={"Yes": "Yes", "No": "No"})
        fake_model_record(db)
        fake_model_record(db, "swayed", "e")
        engine = AuditEngine(db, backend_factory=lambda model: FakeBackend(
            _swayed if model.name == "swayed" else fake_responder))
        spec = StudySpec(dataset="triage", models=("fake", "swayed"), paraphraser="fake",
                         targets=(), baselines=("paraphrase_adjusted",), levels=DOSE_LEVELS)
        run_study(db, spec, engine=engine)
    finally:
        db.conn.close()
