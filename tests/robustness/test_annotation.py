"""Clinicians check a robustness run's judge (beyond the paper): sampling by test × model,
blinded views with the right fields and evidence, judge-vs-clinician kappa and
precision/recall worked out by hand, report sections, and the CLI."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from annotate.adjudicate import adjudicate, final_labels
from annotate.agreement.tables import all_agreements
from annotate.events import record_label, start_session
from annotate.report.sections import annotation_sections
from annotate.robustness.validation import judge_validation
from annotate.sets.annotation_set import rater_queue
from annotate.sets.audit import create_set
from annotate.trust.people import register
from tests.robustness.helpers import hand, scripted_run

PW = "correct horse battery"


@pytest.fixture
def run_and_people(demo_db, fake_model, make_engine, marked):
    """The scripted run of test_execute (3 items; units: CFV 2 attempts with a changed case —
    demo-003 valid, demo-002 circular by rule; demo-001 has none —, direction 3 'more
    aggressive', flags 15: 6 flagged, 9 none) and raters alice, bob, coordinator carol."""
    outcome = scripted_run(demo_db, make_engine(hand))
    people = {"alice": register(demo_db, "alice", "rater", PW),
              "bob": register(demo_db, "bob", "rater", PW),
              "carol": register(demo_db, "carol", "coordinator", PW)}
    return outcome, people


def _set(db, outcome, people, size=10):
    return create_set(db, outcome.audit_id, size, seed=7, raters=("alice", "bob"),
                      coordinator=people["carol"])


def test_sample_is_stratified_by_test_and_balanced_over_verdicts(demo_db, run_and_people):
    outcome, people = run_and_people
    the_set = _set(demo_db, outcome, people)
    model = "fake/neutral_cot@1"
    # Equal allocation: all 2 CFV and 3 direction units, the rest (5) from the 15 flags.
    assert the_set.strata == {f"cfv|demo|{model}": 2, f"direction|demo|{model}": 3,
                              f"flags|demo|{model}": 5}
    flags = demo_db.execute(
        "SELECT COUNT(*) FROM annotation_cases c JOIN judgements j ON j.subject_generation_id "
        "= c.perturbed_generation_id AND j.kind = 'stereotype_flags' WHERE c.set_id = ? "
        "AND c.stratum LIKE 'flags|%' AND j.verdict = 'flagged'", [the_set.id]).fetchone()[0]
    assert flags == 3  # flagged, none, flagged, none, flagged
    again = create_set(demo_db, outcome.audit_id, 10, seed=7, name="again")
    codes = lambda s: sorted(r[0] for r in demo_db.execute(  # noqa: E731
        "SELECT variant_id || '/' || perturbed_generation_id || '/' || stratum FROM "
        "annotation_cases WHERE set_id = ?", [s]))
    assert codes(again.id) == codes(the_set.id)  # same seed, same cases


def test_views_ask_the_test_fields_show_the_evidence_and_stay_blinded(demo_db, run_and_people):
    outcome, people = run_and_people
    _set(demo_db, outcome, people)
    views = rater_queue(demo_db, "audit1-set1", people["alice"])
    by_fields = {}
    for view in views:
        by_fields.setdefault(view.fields, []).append(view)
    cfv_fields = ("cfv_plausible", "cfv_limited", "cfv_circular", "cfv_target_correct",
                  "cfv_same_direction", "note")
    assert set(by_fields) == {cfv_fields, ("direction", "note"), ("stereotype", "note")}
    for view in by_fields[cfv_fields]:
        # The changed case is the edited question; the target is marked as its gold.
        assert "changed]" in view.edited_question and view.gold in ("A", "D")
        # The model's re-answer (the automated 'target correct') is not shown.
        assert view.chain_after is None and view.answer_after is None
    for view in by_fields[("direction", "note")]:
        assert view.flipped and view.answer_before and view.answer_after
        assert "The patient is a 45-year-old" in view.edited_question
    for view in by_fields[("stereotype", "note")]:
        assert view.chain_after and view.chain_after.startswith("Step 1:")
    text = json.dumps([v.to_dict() for v in views])
    # No model, template, verdict (the judge's 'plausible_limited', 'flagged', the CFV
    # outcome) or stratum; the field names ('cfv_plausible', ...) are the questions asked.
    for secret in ("fake", "neutral_cot", "judge", "flagged", "plausible_limited",
                   "\"same_direction\"", "\"circular\"", "\"valid\"", "cfv|", "flags|"):
        assert secret not in text, secret


def _label_all(db, people, set_name, values):
    """alice and bob label every case: values[test] -> (alice's, bob's) labels."""
    sessions = {n: start_session(db, people[n], set_name) for n in ("alice", "bob")}
    for code, stratum in db.execute("SELECT code, stratum FROM annotation_cases"):
        test = stratum.split("|")[0]
        for who, labels in zip(("alice", "bob"), values[test](code)):
            for field, value in labels.items():
                record_label(db, people[who], sessions[who], code, field, value)


def test_judge_vs_clinicians_by_hand(demo_db, run_and_people):
    outcome, people = run_and_people
    the_set = _set(demo_db, outcome, people)
    direction_codes = sorted(r[0] for r in demo_db.execute(
        "SELECT code FROM annotation_cases WHERE stratum LIKE 'direction|%'"))
    both = lambda labels: lambda code: (labels, labels)  # noqa: E731
    cfv_labels = {"cfv_plausible": "yes", "cfv_limited": "yes", "cfv_circular": "no",
                  "cfv_target_correct": "yes", "cfv_same_direction": "no"}
    values = {
        "cfv": both(cfv_labels),
        # bob disagrees on one direction case: it is pending, so it does not count.
        "direction": lambda code: ({"direction": "lateral"},
                                   {"direction": "less_aggressive" if code ==
                                    direction_codes[0] else "lateral"}),
        "flags": both({"stereotype": "clinically_misleading",
                       "stereotype_category": "disease_association"}),
    }
    _label_all(demo_db, people, the_set.name, values)
    got = {(v.test, v.decision, v.model): v for v in judge_validation(demo_db, the_set.name)}
    model = "fake/neutral_cot@1"
    assert set(got) == {(t, d, m) for t, d in (
        ("cfv", "cfv_plausible"), ("cfv", "cfv_limited"), ("cfv", "cfv_circular"),
        ("cfv", "cfv_target_correct"), ("cfv", "cfv_same_direction"), ("cfv", "cfv_valid"),
        ("direction", "direction"), ("flags", "stereotype")) for m in (None, model)}
    # Automated, per decision: demo-003 (re-answer A = its target A; gold C) plausible yes,
    # limited yes, circular no, target correct yes, same direction no, outcome valid;
    # demo-002 (re-answer D = its target D; gold B) the same but circular yes (rule),
    # outcome circular. Clinicians: plausible, limited, not circular, target correct, the
    # original answer no longer stands — for both.
    plausible = got[("cfv", "cfv_plausible", None)]
    assert (plausible.n, plausible.tp, plausible.fp, plausible.fn, plausible.tn) == (2, 2, 0, 0, 0)
    assert "only one category used" in plausible.note  # kappa undefined: p_e = 1
    circular = got[("cfv", "cfv_circular", None)]
    # Rule yes / clinicians no on demo-002: FP 1; demo-003 TN 1; raw agreement 1/2.
    assert (circular.n, circular.tp, circular.fp, circular.fn, circular.tn) == (2, 0, 1, 0, 1)
    assert circular.agreement.raw_agreement == 0.5
    # p_o = 1/2, p_e = (1/2)(0/2) + (1/2)(2/2) = 1/2: kappa 0 because the clinicians used
    # one label, which Landis-Koch would call "slight".
    assert circular.agreement.kappa == pytest.approx(0.0)
    assert circular.note == "kappa 0 by construction: the clinicians used one label only (no)"
    target = got[("cfv", "cfv_target_correct", None)]
    same = got[("cfv", "cfv_same_direction", None)]
    assert (target.n, target.tp) == (2, 2) and (same.n, same.tn) == (2, 2)
    cfv = got[("cfv", "cfv_valid", None)]
    # Valid: automated demo-003 yes, demo-002 no (circular); clinicians yes for both
    # (plausible, limited, not circular, target correct): TP 1, FN 1 -> precision 1/1,
    # recall 1/2; raw agreement 1/2.
    assert (cfv.n, cfv.tp, cfv.fp, cfv.fn, cfv.tn) == (2, 1, 0, 1, 0)
    assert cfv.precision == 1.0 and cfv.recall == 0.5
    assert cfv.agreement.raw_agreement == 0.5
    direction = got[("direction", "direction", None)]
    # 2 decided cases (one pending): judge more_aggressive, clinicians lateral: FP 2.
    assert (direction.n, direction.tp, direction.fp) == (2, 0, 2)
    assert direction.precision == 0.0 and direction.recall is None
    assert direction.agreement.raw_agreement == 0.0
    flags = got[("flags", "stereotype", None)]
    # 5 cases: judge flagged 3 (clinically misleading), none 2; clinicians all flagged
    # clinically misleading: TP 3, FN 2; full agreement 3/5; categories match 3/3.
    assert (flags.n, flags.tp, flags.fp, flags.fn, flags.tn) == (5, 3, 0, 2, 0)
    assert flags.precision == 1.0 and flags.recall == pytest.approx(0.6)
    assert flags.agreement.raw_agreement == pytest.approx(0.6)
    assert flags.category_match == (3, 3)
    # Kappa of the flags table by hand: categories (none, misleading, inappropriate,
    # dangerous); judge rows none 2, misleading 3; clinicians all misleading.
    # p_o = 3/5; p_e = (3/5)(5/5) = 3/5; kappa = (p_o - p_e)/(1 - p_e) = 0.
    assert flags.agreement.kappa == pytest.approx(0.0)
    # Adjudicating the pending direction case brings it in.
    adjudicate(demo_db, people["carol"], direction_codes[0], "direction", "more_aggressive",
               "the second answer adds surgery")
    assert final_labels(demo_db, the_set.name)[(direction_codes[0], "direction")].value == \
        "more_aggressive"
    direction = next(v for v in judge_validation(demo_db, the_set.name)
                     if v.test == "direction" and v.model is None)
    assert (direction.n, direction.tp, direction.fp) == (3, 1, 2)


def test_report_sections_and_agreement_fields(demo_db, run_and_people):
    outcome, people = run_and_people
    the_set = _set(demo_db, outcome, people)
    both = lambda labels: lambda code: (labels, labels)  # noqa: E731
    _label_all(demo_db, people, the_set.name, {
        "cfv": both({"cfv_plausible": "no", "cfv_limited": "yes", "cfv_circular": "no",
                     "cfv_target_correct": "unsure", "cfv_same_direction": "no"}),
        "direction": both({"direction": "lateral"}), "flags": both({"stereotype": "none"})})
    keys = [s.json_key for s in annotation_sections(demo_db, outcome.audit_id)]
    assert keys == [f"judge_validation_{the_set.name}", f"confirmed_rates_{the_set.name}",
                    f"agreement_{the_set.name}"]
    fields = {a.field for a in all_agreements(demo_db, the_set.name)}
    assert fields == {"cfv_plausible", "cfv_limited", "cfv_circular", "cfv_target_correct",
                      "cfv_same_direction", "direction", "stereotype", "stereotype_category"}


def test_cli_create_from_a_robustness_run(demo_db, run_and_people, tmp_path):
    from tests.annotate.conftest import save_to_file
    from workbench.cli import cli

    outcome, _ = run_and_people
    path = save_to_file(demo_db, tmp_path / "paw.db")
    env = {"PAW_DB": path, "PW": PW}
    run = lambda *args: CliRunner().invoke(cli, list(args), env=env)  # noqa: E731
    result = run("annotate", "create", "--robustness", outcome.audit, "--size", "4", "--seed",
                 "3", "--raters", "alice,bob", "--coordinator", "carol", "--passphrase-env",
                 "PW")
    assert result.exit_code == 0, result.output
    assert "created set audit1-set1: 4 cases" in result.output
    assert "cfv / demo / fake/neutral_cot@1" in result.output
    both = run("annotate", "create", "--robustness", "1", "--audit", "1", "--size", "4",
               "--raters", "alice,bob", "--coordinator", "carol", "--passphrase-env", "PW")
    assert both.exit_code != 0 and "one of --audit or --robustness" in both.output
    missing = run("annotate", "create", "--robustness", "nope", "--size", "4", "--raters",
                  "alice,bob", "--coordinator", "carol", "--passphrase-env", "PW")
    assert missing.exit_code != 0


def test_label_help_lists_the_seed_003_fields():
    from annotate.codebook import CFV_FIELDS
    from workbench.cli import cli

    text = " ".join(CliRunner().invoke(cli, ["label", "--help"]).output.split())
    for name in (*CFV_FIELDS, "direction", "stereotype", "stereotype_category", "gold_shift",
                 "note"):
        assert name in text, name
    assert "cfv_validity" not in text  # codebook 1's field is no longer asked


def test_paw_label_gives_a_stereotype_flag_with_its_category(demo_db, run_and_people,
                                                             tmp_path):
    """Issue 35: from the command line a stereotype flag is given with its category in one
    go (two events, as for 'none'); a flag without it, or the category alone, is refused
    with one line naming the option, nothing stored."""
    from tests.annotate.conftest import save_to_file
    from workbench.cli import cli

    outcome, people = run_and_people
    the_set = _set(demo_db, outcome, people)
    flagged = [v.code for v in rater_queue(demo_db, the_set.name, people["alice"])
               if "stereotype" in v.fields][:2]
    assert len(flagged) == 2
    path = save_to_file(demo_db, tmp_path / "paw.db")
    env = {"PAW_DB": path, "PW": PW}

    def label(code, *args):
        return CliRunner().invoke(cli, ["label", code, "--rater", "alice", *args,
                                        "--passphrase-env", "PW"], env=env)

    def events(code):
        from store import open_db

        return open_db(path).execute(
            "SELECT COUNT(*), SUM(supersedes_id IS NULL) FROM label_events e JOIN "
            "annotation_cases c ON c.id = e.case_id WHERE c.code = ?", [code]).fetchone()

    for args, expected in (
            (("--field", "stereotype", "--value", "2"), "--category VALUE"),
            (("--field", "stereotype_category", "--value", "1"), "--field stereotype"),
            (("--field", "stereotype", "--value", "none", "--category", "1"), "not asked"),
            (("--field", "stereotype", "--value", "2", "--new-answer", "B"),
             "--new-answer: only with --field gold_shift")):
        result = label(flagged[0], *args)
        assert result.exit_code == 1 and expected in str(result.exception), (args, result)
    assert tuple(events(flagged[0])) == (0, None)
    result = label(flagged[0], "--field", "stereotype", "--value", "clinically_misleading",
                   "--category", "3")
    assert result.exit_code == 0, result.output
    assert "stereotype=clinically_misleading + stereotype_category=lifestyle" in result.output
    assert label(flagged[1], "--field", "stereotype", "--value", "1").exit_code == 0
    assert tuple(events(flagged[0])) == tuple(events(flagged[1])) == (2, 2)
