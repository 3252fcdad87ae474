"""`paw audit` and `paw demo --import-only` through the real entry point (tiny real-model run)."""

from __future__ import annotations

from store import open_db
from workbench.cli import main


def paw(capsys, *args: str) -> tuple[int, str, str]:
    """Run `paw ARGS` in-process; returns (exit code, stdout, stderr)."""
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_demo_import_only_imports_without_an_audit(capsys, db_path) -> None:
    code, out, _ = paw(capsys, "demo", "--import-only", "--db", db_path)
    assert code == 0
    assert out.splitlines()[0].startswith("demo set: 78 new items")
    db = open_db(db_path)
    assert db.execute("SELECT COUNT(*) FROM items").fetchone()[0] == 78
    assert db.execute("SELECT COUNT(*) FROM audits").fetchone()[0] == 0


def test_bad_arguments_are_one_line_errors(capsys, db_path) -> None:
    paw(capsys, "demo", "--import-only", "--db", db_path)
    code, out, err = paw(capsys, "audit", "--dataset", "demo", "--operators", "F9",
                         "--db", db_path)
    assert code == 1 and out == ""
    assert err.startswith("paw: error: --operators: expected all, F, M, shuffle") and \
        err.count("\n") == 1 and "'F9'" in err
    code, _, err = paw(capsys, "audit", "--dataset", "nope", "--db", db_path)
    assert code == 1 and "no dataset named 'nope'" in err
    code, _, err = paw(capsys, "audit", "--dataset", "demo", "--models", "ghost",
                       "--db", db_path)
    assert code == 1 and "no model named 'ghost'" in err
    code, _, err = paw(capsys, "audit", "--dataset", "demo", "--templates", "direct",
                       "--db", db_path)
    assert code == 1 and "chain-of-thought template" in err


def test_audit_runs_then_resumes_with_nothing_to_do(capsys, db_path) -> None:
    paw(capsys, "demo", "--import-only", "--db", db_path)
    args = ("audit", "--dataset", "demo", "--limit", "1", "--operators",
            "F1_truncate_50,M4_negation_a", "--max-tokens", "16", "--no-direct",
            "--db", db_path)
    code, out, err = paw(capsys, *args)
    assert code == 0, err
    name = out.split()[1].rstrip(":")
    db = open_db(db_path)
    # Every generation made belongs to this audit: one per distinct key of its done jobs
    # (baseline, M4 on demo-001's 'presents with', F1 if the short chain had >= 2 steps)
    # plus one judge call for the M4 edit.
    keys = {r[0] for r in db.execute("SELECT generation_key FROM jobs WHERE status = 'done'")}
    judged = db.execute("SELECT COUNT(*) FROM generations WHERE mode = 'judge'").fetchone()[0]
    made = db.execute("SELECT COUNT(*) FROM generations").fetchone()[0]
    assert judged == 1 and made == len(keys) + 1 >= 3
    assert out.strip() == (f"audit {name}: {made} new generation(s); report with "
                           f"`paw report --audit {name}`")
    assert "stage 1 [default]: 2 to generate" in err
    assert "judge llm_judge:default: 1 chains judged" in err
    code, out, _ = paw(capsys, *args)
    assert code == 0
    assert out.startswith(f"audit {name}: 0 new generation(s)")
    code, out, _ = paw(capsys, "report", "--audit", name, "--json", "--n-boot", "10",
                       "--db", db_path)
    assert code == 0 and '"summary"' in out
