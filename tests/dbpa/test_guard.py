"""The k guard: plans whose families cannot reject at α are refused before sampling, with the
smallest k (or B) named; `--allow-small-k` runs them. Old (version-1) analyses resume."""

from __future__ import annotations

import pytest

from store.errors import UserError
from workbench.dbpa import DbpaSpec, run_dbpa
from workbench.dbpa.guard import Family, check_resolution, plan_families


def _spec(**kw) -> DbpaSpec:
    base = {"dataset": "demo", "models": ("fake",),
            "operators": ("M3_distractor_a", "M5_severity_a"), "k": 6,
            "item_ids": ("demo-005",), "permutations": 199, "distances": ("jsd", "energy")}
    base.update(kw)
    return DbpaSpec(**base)


def _nothing_stored(db) -> bool:
    return (db.execute("SELECT COUNT(*) FROM audits").fetchone()[0] == 0
            and db.execute("SELECT COUNT(*) FROM generations").fetchone()[0] == 0)


@pytest.mark.parametrize("k", [2, 3])
def test_too_small_k_is_refused_before_sampling_naming_the_minimum(demo_db, fake_model,
                                                                   engine, k):
    # Family of 2 (two edits on one item), Holm, B = 199, jsd: k = 3 reaches at best
    # 2 × (1 + 199/20)/200 = 0.1095; k = 4: 2 × (1 + 199/70)/200 = 0.0384 ≤ 0.05.
    with pytest.raises(UserError, match=r"--k \d: .*use --k 4 or more") as raised:
        run_dbpa(demo_db, _spec(k=k), engine=engine)
    assert "perturbation (unpaired, 2 test(s), jsd)" in str(raised.value)
    assert "\n" not in str(raised.value)
    assert _nothing_stored(demo_db)


def test_too_few_permutations_name_the_b_needed(demo_db, fake_model, engine):
    # B = 20: 2/(1 + 20) = 0.095 > 0.05 whatever k; B = 2·2/0.05 − 1 = 79 leaves half of α
    # to k: 2 × (1 + 79/N)/80 ≤ 0.05 ⇔ N ≥ 79 ⇔ k ≥ 5 (C(10, 5) = 252; C(8, 4) = 70).
    with pytest.raises(UserError, match="use --perms 79 or more and --k 5 or more"):
        run_dbpa(demo_db, _spec(k=3, permutations=20), engine=engine)
    # With k = 6 already enough, only B is named.
    with pytest.raises(UserError, match=r"use --perms 79 or more \(or --allow"):
        run_dbpa(demo_db, _spec(k=6, permutations=20), engine=engine)


def test_allow_small_k_runs_and_stores_the_tests(demo_db, fake_model, engine):
    outcome = run_dbpa(demo_db, _spec(k=3, allow_small_k=True), engine=engine)
    assert outcome.generated == 12 and outcome.tests_computed == 6
    assert demo_db.execute("SELECT json_extract(config_json, '$.allow_small_k') FROM audits"
                           ).fetchone()[0] == 1


def test_the_guard_by_family_and_correction():
    config = {"k": 4, "permutations": 1000, "alpha": 0.05, "correction": "holm",
              "distances": ["jsd", "energy_emb"], "seeds": "shared",
              "model_swap": False, "identity_control": True}
    families = plan_families(config, fired=3, items=3)
    assert families == [Family("perturbation", 3, "paired"), Family("identity", 3, "unpaired")]
    # Paired k = 4: N = 16, floor (1 + 1000/16)/1001 = 0.0634 > 0.05 even for one test.
    with pytest.raises(UserError, match="perturbation \\(paired") as raised:
        check_resolution(config, families)
    # a paired plan's message says what identical pairs cost; an unpaired one's does not
    assert "identical adds no re-split (m identical pairs of k leave 2^(k − m))" in \
        str(raised.value)
    unpaired = {**config, "seeds": "independent", "k": 3}
    with pytest.raises(UserError) as raised:
        check_resolution(unpaired, plan_families(unpaired, fired=3, items=3))
    assert "identical" not in str(raised.value)
    # Unpaired k = 4 with correction none: jsd 0.0153 and energy_emb (t = 2) 0.0295 pass.
    fine = {**config, "seeds": "independent", "correction": "none"}
    assert check_resolution(fine, plan_families(fine, fired=3, items=3)) == []
    # Holm over 3: energy_emb 3 × 0.0295 = 0.088 > 0.05 (jsd 0.046 passes); allowed, the
    # problem lines come back for the report.
    allowed = {**fine, "correction": "holm", "allow_small_k": True}
    problems = check_resolution(allowed, plan_families(allowed, fired=3, items=3))
    assert len(problems) == 2 and all("energy_emb" in p for p in problems)


def test_a_version_1_analysis_resumes_as_stored(demo_db, fake_model, engine):
    # An analysis planned before the identity control and the guard (config version 1,
    # k = 3): resuming it must neither refuse it nor add jobs.
    from workbench.kinds import resume_run

    old = _spec(k=3, version=1)
    assert "identity_control" not in old.config() and old.config()["version"] == 1
    first = run_dbpa(demo_db, old, engine=engine)
    assert first.generated == 9  # no identity control
    again = resume_run(demo_db, first.audit_id, "dbpa", engine=engine)
    assert again.audit_id == first.audit_id and again.generated == 0
    assert again.tests_computed == 0


def test_rows_of_an_older_test_version_are_recomputed(demo_db, fake_model, engine):
    first = run_dbpa(demo_db, _spec(), engine=engine)
    demo_db.execute("UPDATE dbpa_tests SET test_version = NULL, design = NULL, "
                    "null_mean = NULL WHERE perturbation = 'M5_severity_a'")
    again = run_dbpa(demo_db, _spec(), engine=engine)
    assert again.audit_id == first.audit_id and again.generated == 0
    assert again.tests_computed == 2  # M5 under jsd and energy
    assert demo_db.execute("SELECT COUNT(*) FROM dbpa_tests WHERE null_mean IS NULL"
                           ).fetchone()[0] == 0


def test_the_cli_refuses_in_one_line_before_loading_a_model(capsys, db_path):
    from store import open_db
    from workbench.cli import main

    def paw(*args):
        try:
            main(list(args))
            return 0
        except SystemExit as exc:
            return int(exc.code or 0)

    assert paw("demo", "--import-only", "--db", db_path) == 0
    capsys.readouterr()
    code = paw("dbpa", "--dataset", "demo", "--limit", "2", "--k", "3", "--db", db_path)
    err = capsys.readouterr().err
    assert code != 0 and len(err.strip().splitlines()) == 1
    assert err.startswith("paw: error: --k 3:") and "use --k 5 or more" in err
    assert "Traceback" not in err
    db = open_db(db_path)
    assert db.execute("SELECT COUNT(*) FROM audits WHERE kind = 'dbpa'").fetchone()[0] == 0
    assert paw("dbpa", "--help") == 0
    shown = capsys.readouterr().out
    assert "--allow-small-k" in shown and "--no-identity-control" in shown
