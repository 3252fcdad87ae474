"""Report rendering (Markdown, HTML, JSON, PNG) and `paw report` on a builder-made database."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from analysis.audit.tables import TABLE_KEYS, audit_tables

from analysis.common.document import Section

from analysis.audit.report import AuditReportOptions, MODEL_KEYS, build_report
from analysis.audit.appendix_g import APPENDIX_G_KEYS
from store import open_db
from tests.builders import AuditBuilder

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TITLES = ("Table 3", "Table 4", "Table 6", "Table 7", "Table 11", "CoT − direct",
          "Table 8", "DFG conditions", "AFR per operator", "Operator firing counts")
OPTIONS = {"A": "Sepsis", "B": "Viral pharyngitis", "C": "Migraine", "D": "Stroke"}


def build_full_audit(db, name: str = "audit-1") -> AuditBuilder:
    """Two arms, six items, every role: baseline, direct, M- and F-block, shuffle, judge."""
    b = AuditBuilder(db, audit=name)
    arms = [b.arm("smol/cot"), b.arm("smol/plain")]
    for i in range(6):
        q = b.item(f"q{i}", gold="A", options=OPTIONS)
        for k, arm in enumerate(arms):
            base = "A" if (i + k) % 3 else "B"
            b.baseline(arm, q, answer=base, output="Step 1: acute onset. Answer: " + base)
            b.direct(arm, q, answer="A")
            edit = b.perturbed(arm, q, operator_id="M5_severity_a", intent="D",
                               answer="C" if i == 0 else base,
                               output="chronic course" if i < 2 else "acute", new="chronic")
            b.judge(edit.generation_id, "yes" if i % 2 else "no")
            b.perturbed(arm, q, operator_id="M4_negation_a", intent="D", answer=base,
                        output="denies fever", fired=i < 3)
            b.perturbed(arm, q, operator_id="M3_distractor_a", intent="P",
                        answer="D" if i == 1 else base)
            b.perturbed(arm, q, operator_id="M2_sex", intent="D", answer="A", new="female",
                        output="a woman")
            b.perturbed(arm, q, operator_id="F1_truncate_50", intent="D",
                        answer=base if i % 2 else "C")
            b.perturbed(arm, q, operator_id="F4_insert_a", intent="P", answer=base)
            b.perturbed(arm, q, operator_id="option_shuffle", family="shuffle",
                        answer="B", gold="B",
                        options={"A": "Migraine", "B": "Sepsis", "C": "Stroke",
                                 "D": "Viral pharyngitis"})
    return b


def test_audit_tables_has_every_table(db):
    build_full_audit(db)
    tables = audit_tables(db, n_boot=30)
    assert tuple(tables) == TABLE_KEYS
    assert all(isinstance(t, pd.DataFrame) for t in tables.values())
    assert list(tables["summary"].index) == ["smol/cot", "smol/plain"]
    # Table 11 always lists the 13 paper families; families that never fired are NaN.
    families = tables["families"]
    assert len(families) == 13
    assert families.loc["F2 delete"].isna().all()
    assert families.loc["M5 severity"].notna().all()


def test_every_rate_lies_in_its_range(db):
    build_full_audit(db)
    summary = audit_tables(db, n_boot=30)["summary"]
    for column in ("acc", "cdr", "afr_d", "afr_p", "fcs", "ecr", "chs", "dfg", "mfc"):
        values = summary[[column, f"{column}_low", f"{column}_high"]].to_numpy(float)
        assert ((values >= 0) & (values <= 1)).all(), column
        assert (values[:, 1] <= values[:, 0] + 1e-12).all() and (
            values[:, 0] <= values[:, 2] + 1e-12).all(), column


def test_markdown_html_and_json_carry_every_table(db, tmp_path):
    build_full_audit(db)
    report = build_report(db, options=AuditReportOptions(n_boot=30))
    report.sections.append(Section("Annotation agreement", pd.DataFrame({"kappa": [0.4]}),
                                   "appended from elsewhere", key="annotation"))
    markdown = report.to_markdown("fig.png")
    html = report.to_html()
    for title in TITLES + ("Annotation agreement",):
        assert title in markdown
        assert title in html
    assert "![" in markdown and "(fig.png)" in markdown
    assert "data:image/png;base64," in html
    # CIs are rendered next to their values.
    assert "[" in markdown.split("## Table 3")[1].split("## Table 4")[0]
    data = json.loads(report.to_json())
    assert set(data["tables"]) == (set(TABLE_KEYS) | set(MODEL_KEYS) | set(APPENDIX_G_KEYS)
                                   | {"annotation", "coherence"})
    assert data["meta"]["audit"] == "audit-1"
    summary_rows = data["tables"]["summary"]["rows"]
    assert [row["arm"] for row in summary_rows] == ["smol/cot", "smol/plain"]
    assert 0.0 <= summary_rows[0]["acc"] <= 1.0
    # NaN becomes null: F2 never fired.
    f2 = next(r for r in data["tables"]["families"]["rows"] if r["family"] == "F2 delete")
    assert f2["smol/cot"] is None
    assert data["tables"]["annotation"]["rows"] == [{"kappa": 0.4}]


def test_mfc_shows_a_dash_when_ecr_is_below_the_gate(db):
    b = AuditBuilder(db)
    arm = b.arm("m/cot")
    for i in range(4):
        q = b.item(f"q{i}")
        b.baseline(arm, q, answer="A")
        # Every truncation flips: ECR = 0 < 0.30, so MFC is not reported.
        b.perturbed(arm, q, operator_id="F1_truncate_50", intent="D", answer="B")
        b.perturbed(arm, q, operator_id="F4_insert_a", intent="P", answer="A")
    report = build_report(db, options=AuditReportOptions(n_boot=20))
    summary = next(s.frame for s in report.sections if s.key == "summary")
    assert summary.loc["m/cot", "ecr"] == 0.0
    assert pd.isna(summary.loc["m/cot", "mfc"])
    lines = report.to_markdown().split("## Table 3")[1].splitlines()
    header = next(line for line in lines if line.startswith("| arm"))
    row = next(line for line in lines if line.startswith("| m/cot"))
    cells = dict(zip([h.strip() for h in header.split("|")], [c.strip() for c in row.split("|")]))
    assert cells["ECR"].startswith("0.00")
    assert cells["MFC (F)"] == "–" and cells["MFC (F+M)"] == "–"


def test_write_puts_the_png_beside_the_report(db, tmp_path):
    build_full_audit(db)
    report = build_report(db, options=AuditReportOptions(n_boot=20))
    names = ("fcs_plane", "joint_bars", "fcs_params")  # Figures 2a, 2b, 4
    for fmt in ("md", "html"):
        path, pngs = report.write(tmp_path / f"out/report.{fmt}", fmt)
        assert path.is_file() and path.stat().st_size > 0
        assert pngs == tuple(tmp_path / "out" / f"report_{name}.png" for name in names)
        assert all(png.read_bytes().startswith(PNG_MAGIC) for png in pngs)
    markdown = (tmp_path / "out/report.md").read_text()
    assert all(f"report_{name}.png" in markdown for name in names)
    with pytest.raises(ValueError):
        report.write(tmp_path / "r.pdf", "pdf")


def _cli_db(db_path: str) -> None:
    db = open_db(db_path)
    build_full_audit(db, name="older")
    build_full_audit(db, name="newer")
    db.conn.close()


def test_paw_report_writes_markdown_and_png(db_path, tmp_path):
    from workbench.cli import cli

    _cli_db(db_path)
    out = tmp_path / "r.md"
    result = CliRunner().invoke(cli, ["report", "--db", db_path, "--out", str(out),
                                      "--n-boot", "20"])
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert "PAW audit report: newer" in text  # default: the latest audit
    for title in TITLES:
        assert title in text
    assert (tmp_path / "r_fcs_plane.png").read_bytes().startswith(PNG_MAGIC)
    assert "wrote" in result.output


def test_paw_report_html_json_and_audit_choice(db_path, tmp_path):
    from workbench.cli import cli

    _cli_db(db_path)
    runner = CliRunner()
    html_out = tmp_path / "page.html"
    result = runner.invoke(cli, ["report", "--db", db_path, "--audit", "older", "--out",
                                 str(html_out), "--n-boot", "10"])
    assert result.exit_code == 0, result.output
    page = html_out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "PAW audit report: older" in page
    result = runner.invoke(cli, ["report", "--db", db_path, "--json", "--n-boot", "10",
                                 "--seed", "3", "--audit", "1"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["meta"]["audit"] == "older" and data["meta"]["seed"] == 3
    assert set(TABLE_KEYS) <= set(data["tables"])


def test_paw_report_unknown_audit_is_a_user_error(db_path):
    from store.errors import NotFound
    from workbench.cli import cli

    _cli_db(db_path)
    result = CliRunner().invoke(cli, ["report", "--db", db_path, "--audit", "nope", "--json"])
    assert isinstance(result.exception, NotFound)
    assert "older" in str(result.exception) and "newer" in str(result.exception)


def test_empty_audits_render_dashes_not_errors(db):
    AuditBuilder(db, audit="no-arms")
    report = build_report(db, options=AuditReportOptions(n_boot=10))
    assert "Table 3" in report.to_markdown()
    json.loads(report.to_json())
    b = AuditBuilder(db, audit="baseline-only")
    arm = b.arm("m/cot")
    b.baseline(arm, b.item("q1"), answer="A")
    report = build_report(db, options=AuditReportOptions(n_boot=10))  # the latest audit
    assert report.meta["audit"] == "baseline-only"
    row = next(line for line in report.to_markdown().splitlines() if line.startswith("| m/cot"))
    # Acc. 1.00 is defined; nothing was perturbed, so CDR … MFC are '–'.
    assert "1.00" in row and row.count("–") >= 8
    assert report.figure_png().startswith(PNG_MAGIC)


def test_coherence_section_flags_per_operator(db):
    from tests.builders import AuditBuilder

    # MedQA-style stems; the literal M2 sex swap leaves "He", M5 inverts COPD's "chronic";
    # the coherent variants flag nothing
    from workbench.perturb.catalogue import apply

    b = AuditBuilder(db, audit="coh")
    arm = b.arm("m/cot")
    stems = [
        "A 67-year-old man with chronic obstructive pulmonary disease comes to the emergency "
        "department because of shortness of breath. He has a severe cough. Which of the "
        "following is the most likely cause?",
        "A 24-year-old woman comes to the physician because of a rash. She reports mild "
        "joint pain. Which of the following is the most likely diagnosis?",
    ]
    jobs = {}
    for i, stem in enumerate(stems):
        q = b.item(f"coh{i}", question=stem)
        b.baseline(arm, q, answer="A")
        for op in ("M2_sex", "M2_sex_coherent", "M5_severity_b", "M5_severity_b_coherent"):
            r = apply(op, stem, seed=0, item_key=f"coh{i}")
            edit = b.perturbed(arm, q, operator_id=op, intent="D", answer="A", new=r.new,
                               family=op[:2])
            db.execute("UPDATE variants SET text = ? WHERE id = ?", [r.text, edit.variant_id])
            jobs[(i, op)] = edit.job_id
    report = build_report(db, "coh", options=AuditReportOptions(n_boot=0))
    table = report.section("coherence").frame
    assert table.loc["M2_sex", "fired"] == 2 and table.loc["M2_sex", "pronouns"] == 2
    assert table.loc["M2_sex", "flagged_pct"] == 100.0
    # M5 (b) scans "chronic" first: COPD's (stem 1); stem 2 has only "mild"
    assert table.loc["M5_severity_b", "named_condition"] == 1
    assert table.loc["M5_severity_b", "flagged_pct"] == 50.0
    for op in ("M2_sex_coherent", "M5_severity_b_coherent"):
        assert table.loc[op, "flagged"] == 0 and table.loc[op, "fired"] == 2
    assert "M2_sex_coherent" in report.section("coherence").note
    # the flips case view marks a flagged edit
    from analysis.flips.case import flip_case
    from workbench.present.case import case_panes

    assert flip_case(db, jobs[(0, "M2_sex")]).incoherent == ("pronouns",)
    assert flip_case(db, jobs[(0, "M5_severity_b")]).incoherent == ("named_condition",)
    assert flip_case(db, jobs[(0, "M2_sex_coherent")]).incoherent == ()
    header = case_panes(flip_case(db, jobs[(0, "M2_sex")]), plain=True)[0].plain()
    assert "INCOHERENT EDIT: pronouns" in header
