"""A robustness run on the fake backend: every outcome scripted, the profile checked by hand,
resume, judgements stored (also unparsed ones), progress blocks, stop and bad input."""

from __future__ import annotations

import json

import pytest

from analysis.robustness.data import load_robustness
from analysis.robustness.profiles import compute_profiles
from workbench.kinds import build_run_report
from store.errors import UserError
from store.jobs import list_jobs
from tests.robustness.helpers import fake_embed, hand, scripted_run, scripted_spec
from workbench.engine.events import AuditFinished, BlockProgress
from workbench.robustness import RobustnessSpec, run_robustness


def test_profile_numbers_by_hand(demo_db, fake_model, make_engine, marked) -> None:
    outcome = scripted_run(demo_db, make_engine(hand))
    assert not outcome.stopped and set(outcome.job_counts) <= {"done", "not_fired"}
    p = compute_profiles(load_robustness(demo_db, outcome.audit), n_boot=0, seed=0)
    arm = p.arms[0]
    e = {k: v.value for k, v in arm.estimates.items()}
    n = {k: v.n for k, v in arm.estimates.items()}
    assert e["accuracy"] == pytest.approx(2 / 3) and n["accuracy"] == 3
    # CFV: demo-003 valid, demo-001 format failure (no 'New case:'), demo-002 circular.
    assert e["cfv_valid"] == pytest.approx(1 / 3) and n["cfv_valid"] == 3
    assert e["cfv_format_failure"] == pytest.approx(1 / 3)
    assert e["cfv_circular"] == pytest.approx(1 / 3)
    assert e["cfv_same_direction"] == e["cfv_too_dramatic"] == 0.0
    # 2 Black prefixes x 3 items changed of 6 x 3 comparisons.
    assert e["change"] == pytest.approx(6 / 18) and n["change"] == 18
    assert e["change[demo_prefix_male_black]"] == 1.0
    assert e["change[demo_prefix_female_white]"] == 0.0
    # Directions: 3 male_black changes 'more aggressive'; 3 female_black verdicts unparsed.
    assert e["direction_more_aggressive"] == 1.0 and n["direction_more_aggressive"] == 3
    assert arm.counts["direction_unparsed"] == 3
    # Flags: 6 flags over 15 parsed verdicts (female_hispanic's 3 are unparsed), x 6 prefixes.
    assert arm.counts["flags"] == 6 and arm.counts["flags_unparsed"] == 3
    assert e["flags_per_question"] == pytest.approx(6 / 15 * 6)
    assert e["flags_disease_association"] == pytest.approx(6 / 15 * 6)
    assert e["flags_clinically_misleading"] == pytest.approx(6 / 15 * 6)
    assert e["flagged_share"] == pytest.approx(6 / 15)
    # EDD: every question has its seven explanations embedded.
    assert n["edd"] == 3 and 0.0 < e["edd"] < 1.0


def test_judgements_stored_with_unparsed_ones_and_rerun_does_nothing(
        demo_db, fake_model, make_engine, marked) -> None:
    first = scripted_run(demo_db, make_engine(hand))
    rows = demo_db.execute("SELECT kind, verdict, evidence FROM judgements").fetchall()
    kinds: dict[str, list[str]] = {}
    for kind, verdict, _ in rows:
        kinds.setdefault(kind, []).append(verdict)
    assert sorted(kinds["cfv_plausibility"]) == ["plausible_limited"] * 2  # 2 parsed proposals
    assert sorted(kinds["change_direction"]) == ["more_aggressive"] * 3 + ["unparsed"] * 3
    assert kinds["stereotype_flags"].count("unparsed") == 3
    unparsed = [json.loads(ev) for kind, v, ev in rows if v == "unparsed"]
    assert all(ev["problem"] for ev in unparsed)
    assert first.judgements == len(rows) and first.embedded == 21
    engine = make_engine(hand)
    again = scripted_run(demo_db, engine)
    assert (again.generated, again.judgements, again.embedded) == (0, 0, 0)
    assert all(not backend.calls for backend in engine.backends)  # nothing generated


def test_format_failure_is_a_not_fired_variant(demo_db, fake_model, make_engine, marked) -> None:
    outcome = scripted_run(demo_db, make_engine(hand), tests=("cfv",))
    answers = list_jobs(demo_db, outcome.audit_id, role="cfv_answer")
    assert sorted(j.status for j in answers) == ["done", "done", "not_fired"]
    reason = demo_db.execute("SELECT reason FROM variants WHERE operator_id = 'cfv_change' "
                             "AND fired = 0").fetchone()[0]
    assert reason == "format failure: no 'New case:' section"
    # CFV only: no demographic jobs, no embedder in the settings, no EDD stage.
    assert not list_jobs(demo_db, outcome.audit_id, role="demographic")
    assert outcome.embedded == 0


def test_progress_blocks_complete(demo_db, fake_model, make_engine, marked) -> None:
    events = []
    run_robustness(demo_db, scripted_spec(), engine=make_engine(hand), embed=fake_embed,
                   on_event=events.append)
    last = {}
    for event in events:
        if isinstance(event, BlockProgress):
            last[event.block] = event
    assert {"baseline", "demographic", "CFV", "CFV answer", "judge", "EDD"} <= set(last)
    for block, event in last.items():
        assert event.done == event.total > 0, block
    assert isinstance(events[-1], AuditFinished)


def test_stop_then_resume(demo_db, fake_model, make_engine, marked) -> None:
    calls = {"n": 0}

    def stop() -> bool:
        calls["n"] += 1
        return calls["n"] > 5

    stopped = run_robustness(demo_db, scripted_spec(), engine=make_engine(hand), embed=fake_embed,
                             should_stop=stop)
    assert stopped.stopped
    done = scripted_run(demo_db, make_engine(hand))
    assert not done.stopped and done.generated > 0
    p = compute_profiles(load_robustness(demo_db, done.audit), n_boot=0, seed=0)
    assert p.arms[0].estimates["cfv_valid"].value == pytest.approx(1 / 3)


def test_report_has_every_section_and_two_figures(demo_db, fake_model, make_engine,
                                                  marked) -> None:
    outcome = scripted_run(demo_db, make_engine(hand))
    report = build_run_report(demo_db, outcome.audit, n_boot=20)
    keys = [s.json_key for s in report.sections]
    assert keys[:3] == ["profiles", "cfv_outcomes", "cfv_failures"]
    assert {"directions", "flag_categories", "flag_severities", "edd", "exclusions"} <= set(keys)
    assert report.meta["kind"] == "robustness" and report.meta["embedder"] == "fake-letters"
    assert [f.name for f in report.figures] == ["directions", "flag_categories"]
    for figure in report.figures:
        assert figure.render()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [f.why_empty() for f in report.figures] == ["", ""]  # both have bars
    pooled = report.section("cfv_failures").frame
    assert pooled.loc["circular", "n"] == 1 and pooled.loc["format failure", "n"] == 1


def test_a_figure_without_a_bar_says_why_instead_of_drawing_a_frame() -> None:
    # The HTML report lists such a figure under "Not computable here, and why" (issue 38).
    from types import SimpleNamespace

    import pandas as pd

    from analysis.robustness.definitions import DIRECTIONS, STEREOTYPE_CATEGORIES
    from analysis.robustness.report import direction_figure, flags_figure

    none = pd.DataFrame({f"{d}_pct": [float("nan")] for d in DIRECTIONS}, index=["m"])
    assert direction_figure(none, "r").why_empty() == "no classified change"
    some = none.assign(lateral_pct=[100.0])
    assert direction_figure(some, "r").why_empty() == ""
    arm = SimpleNamespace(label="m", counts={f"flags_{c}": 0 for c in STEREOTYPE_CATEGORIES})
    assert flags_figure(SimpleNamespace(arms=[arm]), "r").why_empty() == "no flag"
    arm.counts["flags_other"] = 2
    assert flags_figure(SimpleNamespace(arms=[arm]), "r").why_empty() == ""


def test_bad_input_is_one_clear_error(demo_db, fake_model, make_engine) -> None:
    with pytest.raises(UserError, match="--models"):
        RobustnessSpec(dataset="demo", models=())
    with pytest.raises(Exception, match="nope"):
        scripted_run(demo_db, make_engine(hand), judge="nope")
    with pytest.raises(UserError, match="items"):
        scripted_run(demo_db, make_engine(hand), item_ids=("demo-999",))


def test_flag_quotes_are_checked_against_the_explanation(demo_db, fake_model, make_engine,
                                                          marked) -> None:
    outcome = scripted_run(demo_db, make_engine(hand))
    p = compute_profiles(load_robustness(demo_db, outcome.audit), n_boot=0, seed=0)
    # The scripted flag quotes "Black", which the prefixed explanations never contain
    # ("The prefix for demo-00x changes my mind"): all six quotes are not found.
    assert p.arms[0].counts["flags_quote_not_found"] == 6
    # counted apart, per question, and shown beside flags per question
    e = p.arms[0].estimates
    assert e["flags_unquoted"].value == pytest.approx(6 / 15 * 6) == \
        e["flags_per_question"].value
    report = build_run_report(demo_db, outcome.audit, n_boot=0)
    table5 = report.section("profiles").frame
    columns = list(table5.columns)
    assert columns.index("unquoted_flags_per_q") == columns.index("flags_per_q_high") + 1
    assert table5["unquoted_flags_per_q"].iloc[0] == pytest.approx(2.4)
    assert report.section("flag_categories").frame["unquoted"].iloc[0] == pytest.approx(2.4)


def test_unparsed_answers_are_excluded_not_counted_as_changes(demo_db, fake_model, make_engine,
                                                              marked) -> None:
    """demo-001's baseline and demo-003's CFV re-answer give no 'Answer:': demo-001's six
    comparisons are unparsed (not changes), demo-003's attempt is a format failure."""

    def unparsed(prompt: str, sampler) -> str:
        last = prompt.rsplit("User: ", 1)[-1]
        if "crushing substernal" in last and "45-year-old" not in last \
                and "Target answer:" not in last and "Question:" in last:
            return "Step 1: I cannot decide between the arteries."
        if "[demo-003 changed]" in last and "Question:" in last:
            return "Step 1: Diarrhoea points somewhere."
        return hand(prompt, sampler)

    outcome = scripted_run(demo_db, make_engine(unparsed))
    p = compute_profiles(load_robustness(demo_db, outcome.audit), n_boot=0, seed=0)
    arm = p.arms[0]
    assert arm.counts["baseline_unparsed"] == 1 and arm.estimates["accuracy"].n == 2
    assert arm.counts["pairs_unparsed"] == 6 and arm.estimates["change"].n == 12
    # Of the 12 parsed comparisons (demo-002, demo-003) the 4 Black ones changed.
    assert arm.estimates["change"].value == pytest.approx(4 / 12)
    assert arm.counts["cfv_reanswer_unparsed"] == 1
    assert arm.estimates["cfv_format_failure"].value == pytest.approx(2 / 3)
    assert arm.estimates["cfv_valid"].value == 0.0


def test_a_stored_run_resumes_from_its_config(demo_db, fake_model, make_engine, marked) -> None:
    """The UI's resume (`workbench.kinds.KINDS`) rebuilds the spec from the stored run."""
    from workbench.kinds import can_resume
    from workbench.robustness.execute import spec_of

    spec = scripted_spec()
    first = run_robustness(demo_db, spec, engine=make_engine(hand), embed=fake_embed)
    again = spec_of(demo_db, first.audit_id)
    assert again.config() == spec.config() and again.audit_name == first.audit
    assert can_resume("robustness")
    rerun = run_robustness(demo_db, again, engine=make_engine(hand), embed=fake_embed)
    assert rerun.audit_id == first.audit_id and rerun.generated == 0
