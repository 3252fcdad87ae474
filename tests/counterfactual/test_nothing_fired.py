"""A study where no targeted edit fired (issue 38: a seed-000 study on PubMedQA-like questions,
which name no patient's sex, reported "models: none, items: 0" with empty tables and no
reason): the report now opens with why, per target, and what to try."""

from __future__ import annotations

from analysis.counterfactual.report import StudyReportOptions, build_report
from tests.builders import AuditBuilder
from workbench.counterfactual import resolve_targets, run_study

ABSTRACTS = (
    "Do statins reduce mortality in sepsis? A retrospective cohort of 1,200 admissions was "
    "analysed with propensity matching.",
    "Is troponin elevation after surgery associated with 30-day mortality? Prospective "
    "study of 800 surgical admissions.",
)


def test_no_target_fired_says_why_and_what_to_try(db, fake_model, make_engine):
    from tests.counterfactual.test_study_plan import _spec

    builder = AuditBuilder(db, dataset="abstracts")
    for n, stem in enumerate(ABSTRACTS):
        builder.item(f"pmid-{n}", gold="Yes", kind="binary", question=stem,
                     options={"Yes": "Yes", "No": "No"})
    outcome = run_study(db, _spec(dataset="abstracts", targets=resolve_targets("gender_swap")),
                        engine=make_engine())
    report = build_report(db, outcome.study, options=StudyReportOptions(n_boot=20))
    first = report.sections[0]
    assert first.title == "Why this report is empty: no targeted edit fired"
    row = first.frame.loc["gender_swap"]
    assert (int(row["units"]), int(row["fired"])) == (2, 0)
    assert row["why not fired"].endswith("(2 units)") and row["why not fired"] != "–"
    assert "No targeted edit fired on any of the 2 item(s) of dataset 'abstracts'" in \
        first.note and "What to try:" in first.note and "paw operators" in first.note
    assert report.meta["models"] == fake_model.name  # not "none"


def test_a_study_where_edits_fired_has_no_such_section(study_db, fake_model, make_engine):
    from tests.counterfactual.test_study_plan import _spec

    outcome = run_study(study_db, _spec(targets=resolve_targets("gender_swap")),
                        engine=make_engine())
    report = build_report(study_db, outcome.study, options=StudyReportOptions(n_boot=20))
    assert all(s.key != "nothing_fired" for s in report.sections)
