"""`paw dbpa` end to end on the embedded SmolLM2 (tiny: the plumbing, not the statistics)."""

from __future__ import annotations

import json

import pytest

from store import open_db
from workbench.cli import main

pytestmark = pytest.mark.model

ARGS = ("dbpa", "--dataset", "demo", "--items", "demo-005", "--operators", "M5_severity_a",
        "--k", "4", "--max-tokens", "24", "--embedders", "tfidf,llama:default",
        "--distance", "jsd,energy", "--perms", "200", "--threads", "1")


def paw(capsys, *args: str) -> tuple[int, str, str]:
    """Run `paw ARGS` in-process; returns (exit code, stdout, stderr)."""
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_tiny_real_dbpa_stores_tests_and_resumes(capsys, db_path, tmp_path):
    assert paw(capsys, "demo", "--import-only", "--db", db_path)[0] == 0
    report = tmp_path / "dbpa.json"
    code, out, err = paw(capsys, *ARGS, "--db", db_path, "--out", str(report))
    assert code == 0, err
    # 4 samples of the baseline, the M5 edit and the identity control; 2 tests (M5,
    # identity) × 2 embedders × 2 distances.
    assert "12 new sample(s), 8 test result(s) computed" in out
    db = open_db(db_path)
    rows = db.execute("SELECT embedder, distance, n_baseline, n_perturbed, permutations, "
                      "p_value, status FROM dbpa_tests").fetchall()
    assert sorted((r[0], r[1]) for r in rows) == sorted(2 * [
        ("llama:default", "energy"), ("llama:default", "jsd"), ("tfidf", "energy"),
        ("tfidf", "jsd")])
    for _, _, n0, n1, b, p, status in rows:
        assert (n0, n1, b) == (4, 4, 200) and status in ("ok", "identical")
        # With k = 4 there are C(8, 4) = 70 splits; p = (1 + count)/201 is at least 1/201.
        assert 1 / 201 <= p <= 1.0
    # Seeds are stored per job and distinct within a condition.
    seeds = db.execute("SELECT role, COUNT(DISTINCT seed) FROM jobs GROUP BY role").fetchall()
    assert sorted(seeds) == [("baseline", 4), ("identity", 4), ("perturbed", 4)]
    # The llama vectors are cached by text: 12 distinct outputs at most.
    assert db.execute("SELECT COUNT(*) FROM text_embeddings").fetchone()[0] <= 12
    payload = json.loads(report.read_text())
    assert next(iter(payload["tables"])) == "sensitivity"
    assert {r["distance"] for r in payload["tables"]["tests"]["rows"]} == {"jsd", "energy"}

    code, out, _ = paw(capsys, *ARGS, "--db", db_path)
    assert code == 0 and "0 new sample(s), 0 test result(s) computed" in out
    # k = 3 cannot reject (C(6, 3) = 20 splits: p ≥ 0.05): refused in one line, nothing run.
    small = [a if a != "4" else "3" for a in ARGS]
    code, out, err = paw(capsys, *small, "--db", db_path)
    assert code != 0 and "use --k 4 or more" in err and len(err.strip().splitlines()) == 1
    assert db.execute("SELECT COUNT(*) FROM audits").fetchone()[0] == 1
    code, out, _ = paw(capsys, "report", "--dbpa", "1", "--format", "md",
                       "--out", str(tmp_path / "r.md"), "--db", db_path)
    assert code == 0
    text = (tmp_path / "r.md").read_text()
    assert text.index("## Sensitivity") < text.index("## Case study 1")
