"""Seed-003 sets on runs whose judge replies did not parse (issue 35, criterion 5).

A CFV attempt that reached its target while the judge's reply did not parse made
`create_set` crash with a TypeError (its missing outcome is NaN in the frame, truthy and
unorderable against the other classes). Each kind of unparsed verdict — the CFV judge, the
direction judge, the flags judge, all three, and an unparsed CFV re-answer — now makes a
set, counted in its config, and `paw annotate create` says how many lack a verdict and how
they are drawn.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from annotate.robustness.validation import judge_validation
from annotate.sets.audit import create_set
from annotate.trust.people import register
from tests.robustness.helpers import hand, scripted_run
from workbench.robustness.prompts import CFV_JUDGE_RUBRIC, DIRECTION_RUBRIC, FLAGS_RUBRIC

PW = "correct horse battery"
GARBAGE = "I would rather not say."

RUBRICS = {"cfv": CFV_JUDGE_RUBRIC, "direction": DIRECTION_RUBRIC, "flags": FLAGS_RUBRIC}


def _responder(broken: tuple[str, ...], reanswer: bool = False):
    def respond(prompt: str, sampler) -> str:
        if any(RUBRICS[test][:60] in prompt for test in broken):
            return GARBAGE
        if reanswer and "[demo-003 changed]" in prompt.rsplit("User: ", 1)[-1]:
            return GARBAGE  # the re-answer to the changed case names no option
        return hand(prompt, sampler)
    return respond


def _config(db, set_id: int) -> dict:
    return json.loads(db.execute("SELECT config_json FROM annotation_sets WHERE id = ?",
                                 [set_id]).fetchone()[0])


# (judges whose replies fail, re-answer fails) -> unparsed counts expected
# hand(): direction leaves female_black unparsed, flags leave female_hispanic malformed, so
# direction and flags count those even when their judge is not broken.
@pytest.mark.parametrize("broken,reanswer", [
    (("cfv",), False), (("direction",), False), (("flags",), False),
    (("cfv", "direction", "flags"), False), ((), True)],
    ids=["cfv-judge", "direction-judge", "flags-judge", "every-judge", "cfv-reanswer"])
def test_every_kind_of_unparsed_verdict_makes_a_set(demo_db, fake_model, make_engine, marked,
                                                    broken, reanswer):
    outcome = scripted_run(demo_db, make_engine(_responder(broken, reanswer)))
    the_set = create_set(demo_db, outcome.audit_id, 40, seed=7)
    config = _config(demo_db, the_set.id)
    unparsed = config["unparsed"]
    classes = [r[0] for r in demo_db.execute(
        "SELECT stratum FROM annotation_cases WHERE set_id = ?", [the_set.id])]
    tests = {c.split("|")[0] for c in classes}
    # demo-003 is the only attempt that reaches its target: unjudged when its judge fails.
    assert unparsed["cfv"] == (1 if "cfv" in broken else 0)
    assert config["n_unjudged_drawn"] == unparsed["cfv"]
    assert dict(the_set.unparsed) == unparsed
    if "direction" in broken:
        assert unparsed["direction"] >= 3 and "direction" not in tests
    else:
        assert unparsed["direction"] >= 1 and "direction" in tests
    if "flags" in broken:
        assert unparsed["flags"] == 18 and "flags" not in tests
    else:
        assert unparsed["flags"] >= 1 and "flags" in tests
    assert "cfv" in tests  # the CFV attempts with a changed case are always drawn
    # The judge-vs-clinician comparison reads the set without tripping on a None verdict.
    assert judge_validation(demo_db, the_set.name) == []


def test_paw_annotate_create_says_how_many_lack_a_verdict(demo_db, fake_model, make_engine,
                                                          marked, tmp_path):
    from tests.annotate.conftest import save_to_file
    from workbench.cli import cli

    outcome = scripted_run(demo_db, make_engine(_responder(("cfv",))))
    for name, role in (("alice", "rater"), ("bob", "rater"), ("carol", "coordinator")):
        register(demo_db, name, role, PW)
    path = save_to_file(demo_db, tmp_path / "paw.db")
    result = CliRunner().invoke(cli, [
        "annotate", "create", "--robustness", outcome.audit, "--size", "40", "--seed", "3",
        "--raters", "alice,bob", "--coordinator", "carol", "--passphrase-env", "PW"],
        env={"PAW_DB": path, "PW": PW})
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert ("judge verdicts that did not parse: CFV 1 (drawn as class 'unjudged': 1 in this "
            "set") in result.output
    assert "left out: nothing to confirm" in result.output
