"""Unparsed share and AFR_D (F) of an audit under each answer reading, with and without the
F-block continuations whose kept chain still states the baseline answer.

    python bench/answer_reading.py [--db FILE] [--audit NAME]

Without --db, runs `paw demo` (the embedded SmolLM2 on the demo set) into a new database in
a temporary folder first. Prints, per arm: the unparsed share of its answers (every role but
the judge's) and of its baselines under the paper's reading and the lenient one, the fired
F-block continuations whose kept chain states the baseline answer, and AFR_D (F) under
each reading with the stated-answer continuations kept and excluded.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from analysis.audit.frames import baselines, load_audit
from analysis.audit.report import build_report
from store import open_db


def _shares(db, audit: str, reading: str) -> dict[str, tuple[int, int, int, int]]:
    frames = load_audit(db, audit, reading=reading)
    jobs = frames.jobs
    answered = jobs[jobs["generation_id"].notna() & jobs["parse_status"].ne("error")
                    & jobs["role"].ne("judge")]
    base = baselines(frames)
    out = {}
    for arm_id, label in zip(frames.arms["arm_id"], frames.arms["label"], strict=True):
        mine, bases = answered[answered["arm_id"] == arm_id], base[base["arm_id"] == arm_id]
        bases = bases[bases["generated"]]
        out[str(label)] = (int((mine["parse_status"] != "ok").sum()), len(mine),
                           int((~bases["parsed"]).sum()), len(bases))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db")
    parser.add_argument("--audit")
    args = parser.parse_args()
    path = args.db
    if path is None:
        folder = Path(tempfile.mkdtemp(prefix="paw-reading-"))
        path = str(folder / "demo.db")
        subprocess.run([sys.executable, "-m", "workbench", "demo", "--db", path, "--out",
                        str(folder / "demo-report.md")], check=True)
    db = open_db(path, create=False)
    audit = args.audit or str(db.execute(
        "SELECT name FROM audits ORDER BY (kind = 'audit') DESC, id DESC LIMIT 1").fetchone()[0])
    print(f"audit {audit} in {path}")
    shares = {reading: _shares(db, audit, reading) for reading in ("paper", "lenient")}
    afr = {}
    stated = ""
    for reading in ("paper", "lenient"):
        for strip in (False, True):
            report = build_report(db, audit, {"n_boot": 0, "answer_reading": reading,
                                              "strip_stated_answer": strip})
            summary = report.section("summary").frame
            afr[(reading, strip)] = {str(arm): (row["afr_d"], int(row["afr_d_n"] or 0))
                                     for arm, row in summary.iterrows()}
            stated = report.meta["stated answer"].split(";")[0]
    print(f"F-block: {stated}")
    for arm in shares["paper"]:
        print(f"arm {arm}")
        for reading in ("paper", "lenient"):
            bad, n, base_bad, base_n = shares[reading][arm]
            kept, dropped = afr[(reading, False)][arm], afr[(reading, True)][arm]
            print(f"  {reading:<8} unparsed {bad}/{n} = {100 * bad / max(n, 1):.1f} %  "
                  f"baselines {base_bad}/{base_n} = {100 * base_bad / max(base_n, 1):.1f} %  "
                  f"AFR_D (F) {kept[0]:.2f} (n={kept[1]}); stated-answer excluded "
                  f"{dropped[0]:.2f} (n={dropped[1]})")


if __name__ == "__main__":
    main()
