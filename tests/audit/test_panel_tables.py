"""The panel's Table 7 and judge CDR, Table 6's order, the paper's bold and marks, Figure 2b,
Appendix H and the firing matrix — on hand-built audits whose values are worked by hand."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest

from analysis.audit.panel_report import build_panel_report
from analysis.audit.plots import joint_bars, joint_bars_png
from analysis.audit.report import AuditReportOptions, build_report
from analysis.common.render import display_frame, markdown_table
from store.errors import UserError
from tests.builders import AuditBuilder

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _m5(b: AuditBuilder, arm: int, q: int, *, flip: bool, chain: str,
        verdict: str | None) -> None:
    """One M5 severity edit (acute → chronic) and, if given, its judge verdict."""
    ids = b.perturbed(arm, q, operator_id="M5_severity_a", intent="D",
                      answer="B" if flip else "A", output=chain, old="acute", new="chronic")
    if verdict is not None:
        b.judge(ids.generation_id, verdict)


def judged_panel(db) -> None:
    """Dataset medqa: model m on q1 (kept, chain silent: token (c), judge 'yes': (a)) and
    q2 (flipped, chain says 'chronic': token (b), judge 'no': (d)); model m2 on q1 (kept,
    silent: token (c), judge 'yes': (a)). Dataset mmlu: model m on r1 (kept, silent:
    token (c), judge 'no': (c)), r2 (kept, silent: token (c), no verdict), r3 (kept, says
    'chronic': token (a), judge 'no': (c))."""
    a = AuditBuilder(db, dataset="medqa", audit="j-medqa")
    m, m2 = a.arm("m/cot"), a.arm("m2/cot")
    q1, q2 = a.item("q1"), a.item("q2")
    for arm in (m, m2):
        for q in (q1, q2):
            a.baseline(arm, q, answer="A")
    _m5(a, m, q1, flip=False, chain="acute onset", verdict="yes")
    _m5(a, m, q2, flip=True, chain="a chronic course", verdict="no")
    _m5(a, m2, q1, flip=False, chain="acute onset", verdict="yes")
    b = AuditBuilder(db, dataset="mmlu", audit="j-mmlu")
    m = b.arm("m/cot")
    rs = [b.item(f"r{i}") for i in (1, 2, 3)]
    for r in rs:
        b.baseline(m, r, answer="A")
    _m5(b, m, rs[0], flip=False, chain="acute", verdict="no")
    _m5(b, m, rs[1], flip=False, chain="acute", verdict=None)
    _m5(b, m, rs[2], flip=False, chain="chronic", verdict="no")


def test_panel_table7_has_the_judge_and_a_panel_row(db):
    judged_panel(db)
    report = build_panel_report(db, "all", n_boot=50)
    table7 = report.section("panel_cdr_rules").frame
    judge = "cdr_judge_pct[llm_judge:synthetic]"
    # m: token cells c, b | c, c, a -> CDR 3/5 = 60 %; judge a, d | c, c -> 2/4 = 50 %.
    assert table7.loc["m/cot", "cdr_token_pct"] == pytest.approx(60.0)
    assert table7.loc["m/cot", judge] == pytest.approx(50.0)
    assert table7.loc["m/cot", "n_judge[llm_judge:synthetic]"] == 4
    # m2: token c -> 100 %; judge a -> 0 %.
    assert table7.loc["m2/cot", "cdr_token_pct"] == pytest.approx(100.0)
    assert table7.loc["m2/cot", judge] == pytest.approx(0.0)
    # Panel (the paper's "Panel 72.9 74.3"): token 4/6, judge 2/5, both pooled.
    assert table7.loc["Panel", "cdr_token_pct"] == pytest.approx(400 / 6)
    assert table7.loc["Panel", judge] == pytest.approx(40.0)
    assert (table7.loc["Panel", "n_token"], table7.loc["Panel",
                                                       "n_judge[llm_judge:synthetic]"]) == (6, 5)
    # A panel CI (cells resampled independently: stratified by cell).
    assert not math.isnan(table7.loc["Panel", "cdr_token_pct_low"])
    # Panel Table 3 shows the judge's CDR beside the token rule's.
    table3 = report.section("panel_summary").frame
    assert table3.loc["m/cot", "cdr"] == pytest.approx(0.6)
    assert table3.loc["m/cot", "cdr_judge"] == pytest.approx(0.5)
    assert table3.loc["m/cot", "cdr_judge_n"] == 4
    assert "CDR (judge)" in display_frame(table3).columns
    # §6: the judge's panel CDR; the chains that mention the new token = (a) + (b) = 2/6.
    overview = report.section("panel_overview").frame
    assert overview.loc["CDR, panel-wide, judge llm_judge:synthetic (%)", "value"] == \
        pytest.approx(40.0)
    assert overview.loc["chains that mention the new token (%)", "value"] == \
        pytest.approx(100 / 3)
    data = json.loads(report.to_json())["tables"]["panel_cdr_rules"]["rows"]
    assert data[-1]["model"] == "Panel" and data[-1][judge] == pytest.approx(40.0)


def test_the_audit_table7_has_a_panel_row_without_ci(db):
    judged_panel(db)
    table7 = build_report(db, "j-medqa", options=AuditReportOptions(n_boot=50)) \
        .section("cdr_rules").frame
    judge = "cdr_judge_pct[llm_judge:synthetic]"
    # Arms m (c, b) and m2 (c): token 2/3; judge m (a, d), m2 (a): 0/3.
    assert table7.loc["Panel", "cdr_token_pct"] == pytest.approx(200 / 3)
    assert table7.loc["Panel", judge] == pytest.approx(0.0)
    assert table7.loc["Panel", "n_token"] == 3
    # The arms share their items, so the pooled row has no CI.
    assert math.isnan(table7.loc["Panel", "cdr_token_pct_low"])


def test_table6_is_sorted_by_cell_c_and_figure_2b_draws_it(db):
    judged_panel(db)
    report = build_panel_report(db, "all", n_boot=20)
    table6 = report.section("panel_joint").frame
    # (c): m2 100 %, m 3/5 = 60 %: m2 first (the paper sorts BioMistral's 95.9 first).
    assert list(table6.index) == ["m2/cot", "m/cot", "Panel"]
    bars = joint_bars(table6)
    # m: a 1/5, b 1/5, c 3/5, d 0 (medqa c, b; mmlu c, c, a), each in %.
    assert bars[1] == ("m/cot", [pytest.approx(20.0), pytest.approx(20.0),
                                 pytest.approx(60.0), pytest.approx(0.0)])
    assert all(sum(shares) == pytest.approx(100.0) for _, shares in bars)
    assert joint_bars_png(table6).startswith(PNG_MAGIC)
    assert [f.name for f in report.figures] == ["fcs_plane", "joint_bars", "fcs_params"]
    assert all(f.render().startswith(PNG_MAGIC) for f in report.figures)


def _bold_audit(db) -> None:
    """Three arms, Acc 2/2, 2/2, 1/2 (a tie for the highest); F2 flip rates 0, 1/2, 1/2
    (the lowest alone); F4 never flips."""
    b = AuditBuilder(db, audit="bold")
    arms = [b.arm(f"{x}/cot") for x in "xyz"]
    qs = [b.item("q1"), b.item("q2")]
    for k, arm in enumerate(arms):
        for i, q in enumerate(qs):
            b.baseline(arm, q, answer="B" if (k == 2 and i == 1) else "A")
            b.perturbed(arm, q, operator_id="F2_delete_a", intent="D",
                        answer="C" if (k > 0 and i == 0) else ("B" if k == 2 and i else "A"))
            b.perturbed(arm, q, operator_id="F4_insert_a", intent="P",
                        answer="B" if (k == 2 and i == 1) else "A")


def test_bold_extrema_as_the_paper_marks_them(db):
    _bold_audit(db)
    report = build_report(db, options=AuditReportOptions(n_boot=20))
    table3 = report.section("summary").frame
    bold = set(table3.attrs["bold"])
    # Highest Acc: x and y tie at 1.00 (both bold); lowest AFR_D: x alone (0.00).
    assert {("x/cot", "acc"), ("y/cot", "acc")} <= bold and ("z/cot", "acc") not in bold
    assert ("x/cot", "afr_d") in bold and ("y/cot", "afr_d") not in bold
    assert not any(column == "fcs" for _, column in bold)  # "fcs is unbolded"
    assert "| x/cot | **1.00" in markdown_table(table3)
    # Table 11: each row's lowest value; F4 never flips for any arm: all three tie.
    table11 = report.section("families").frame
    assert set(table11.attrs["bold"]) >= {("F2 delete", "x/cot"), ("F4 insert", "x/cot"),
                                          ("F4 insert", "y/cot"), ("F4 insert", "z/cot")}
    assert ("F2 delete", "y/cot") not in table11.attrs["bold"]


def test_table4_marks_a_significant_gain(db):
    """Δ < 0 with a CI that excludes 0 gets the paper's ∗: every item gains (base wrong,
    every F-pert continuation right), so every replicate's Δ is −100 pp."""
    b = AuditBuilder(db, audit="gain")
    gain, flat = b.arm("gain/cot"), b.arm("flat/cot")
    for i in range(6):
        q = b.item(f"q{i}", gold="A")
        b.baseline(gain, q, answer="B")
        b.perturbed(gain, q, operator_id="F2_delete_a", intent="D", answer="A")
        b.baseline(flat, q, answer="A")
        b.perturbed(flat, q, operator_id="F2_delete_a", intent="D", answer="A")
    table4 = build_report(db, options=AuditReportOptions(n_boot=50)).section("fblock").frame
    assert table4.loc["gain/cot", "delta_pp"] == -100.0
    assert bool(table4.loc["gain/cot", "ci_excludes_0"]) is True
    assert table4.attrs["row_marks"] == {"gain/cot": "∗"}
    assert "| gain/cot∗ |" in markdown_table(table4)
    # Δ = 0 with a degenerate CI [0, 0]: no mark, CI does not exclude 0.
    assert table4.loc["flat/cot", "delta_pp"] == 0.0
    assert not bool(table4.loc["flat/cot", "ci_excludes_0"])


def _ood_panel(db) -> None:
    """Model 'med' (templates strict, neutral) on medqa and mmlu (medical) and gsm8k (out of
    domain). Per cell, 4 items with F2 (D) flipping on `k` of them and F4 (P) never:
    FCS = 1/2 + k/8."""
    flips = {("medqa", "strict"): 1, ("mmlu", "strict"): 3, ("gsm8k", "strict"): 4,
             ("medqa", "neutral"): 2, ("mmlu", "neutral"): 2, ("gsm8k", "neutral"): 0}
    for dataset in ("medqa", "mmlu", "gsm8k"):
        b = AuditBuilder(db, dataset=dataset, audit=f"ood-{dataset}")
        for template in ("strict", "neutral"):
            arm = b.arm(f"med/{template}")
            for i in range(4):
                q = b.item(f"{dataset}{i}")
                b.baseline(arm, q, answer="A")
                b.perturbed(arm, q, operator_id="F2_delete_a", intent="D",
                            answer="B" if i < flips[(dataset, template)] else "A")
                b.perturbed(arm, q, operator_id="F4_insert_a", intent="P", answer="A")


def test_appendix_h_delta_fcs(db):
    _ood_panel(db)
    report = build_panel_report(db, "all", n_boot=30, ood="gsm8k")
    table = report.section("panel_ood").frame
    # strict: medical FCS = mean(1/2 + 1/8, 1/2 + 3/8) = 3/4; gsm8k 1/2 + 4/8 = 1;
    # ΔFCS = +1/4. neutral: medical mean(3/4, 3/4) = 3/4; gsm8k 1/2; ΔFCS = −1/4.
    assert table.loc["med/strict · gsm8k", "fcs_medical"] == pytest.approx(0.75)
    assert table.loc["med/strict · gsm8k", "fcs_ood"] == pytest.approx(1.0)
    assert table.loc["med/strict · gsm8k", "delta_fcs"] == pytest.approx(0.25)
    assert table.loc["med/neutral · gsm8k", "delta_fcs"] == pytest.approx(-0.25)
    # Mean over the two prompts: 0; prompt swap = 1 − 1/2 = 0.5.
    assert table.loc["med · gsm8k · mean", "delta_fcs"] == 0.0
    assert table.loc["med · gsm8k · mean", "prompt_swap_fcs"] == pytest.approx(0.5)
    assert display_frame(table).loc["med · gsm8k · mean", "ΔFCS"].startswith("0.000")
    with pytest.raises(UserError, match="--ood: no dataset named 'strategyqa'"):
        build_panel_report(db, "all", n_boot=0, ood="gsm8k,strategyqa")
    none = build_panel_report(db, "all", n_boot=0).section("panel_ood")
    assert none.frame.empty and "--ood" in none.note


def test_the_firing_matrix_per_model_dataset_operator(db):
    b = AuditBuilder(db, dataset="medqa", audit="f-medqa")
    arm = b.arm("m/cot")
    for i in range(4):
        q = b.item(f"q{i}")
        b.baseline(arm, q, answer="A")
        # M4 fires on 1 stem of 4, M3 on all four.
        b.perturbed(arm, q, operator_id="M4_negation_a", intent="D", answer="A", fired=i == 0)
        b.perturbed(arm, q, operator_id="M3_distractor_a", intent="P", answer="A")
    frame = build_panel_report(db, "all", n_boot=0).section("panel_firing").frame
    rows = {r.operator: (r.planned, r.fired, r.fire_pct) for r in frame.itertuples()}
    assert rows == {"M3_distractor_a": (4, 4, 100.0), "M4_negation_a": (4, 1, 25.0)}
    assert set(frame["model"]) == {"m/cot"} and set(frame["dataset"]) == {"medqa"}


def test_paw_report_ood_needs_a_panel(db_path, capsys):
    from click.testing import CliRunner

    from store import open_db
    from workbench.cli import main

    db = open_db(db_path)
    _ood_panel(db)
    db.conn.close()
    with pytest.raises(SystemExit) as exit_info:
        main(["report", "--db", db_path, "--ood", "gsm8k", "--json"])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("paw: error: --ood:") and "--panel" in err and "Traceback" not in err
    from workbench.cli import cli

    result = CliRunner().invoke(cli, ["report", "--db", db_path, "--panel", "all",
                                      "--ood", "gsm8k", "--json", "--n-boot", "10"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["tables"]["panel_ood"]["rows"]
    assert {r["row"] for r in rows} == {"med/strict · gsm8k", "med/neutral · gsm8k",
                                        "med · gsm8k · mean"}
    assert Fraction(rows[0]["delta_fcs"]).limit_denominator(8) in (Fraction(1, 4),
                                                                   Fraction(-1, 4))


# Table 6 (seed 002), rows as printed: n = 965 each, (a) (b) (c) (d) in %.
TABLE6 = {"BioMistral-7B": (0.0, 0.0, 95.9, 4.1), "Qwen2.5-7B": (0.2, 0.2, 94.0, 5.6),
          "OpenBioLLM-8B": (1.9, 0.9, 88.9, 8.3), "Mistral-7B": (3.6, 3.0, 79.9, 13.5),
          "HuatuoGPT-o1": (3.6, 0.7, 79.5, 16.2), "Gemma-2-9B": (14.4, 2.1, 75.2, 8.3),
          "Qwen2.5-14B": (14.2, 2.4, 72.1, 11.3), "Llama-3.1-8B": (12.8, 3.7, 71.9, 11.5),
          "Med42-8B": (13.3, 3.2, 68.1, 15.4), "DeepSeek-R1-D": (5.9, 7.5, 50.9, 35.8),
          "Meditron-7B": (13.5, 8.4, 25.6, 52.5)}


def test_the_section_6_2_shares_from_table6():
    """§6.2: "The chain mentions the new token in only 10.5% of cases panel-wide, and the
    'chain reads change and answer responds' cell is just 2.9%. cdr … is 72.9% panel-wide
    (68.5% excluding the two chain-compressed models BioMistral-7B and OpenBioLLM-8B)"."""
    from analysis.audit.joint import JointTable
    from analysis.audit.joint_tables import pooled_share

    tables = {}
    for model, shares in TABLE6.items():
        counts = dict(zip("abcd", (round(9.65 * s) for s in shares)))  # of 965 edits
        assert sum(counts.values()) == 965
        tables[model] = JointTable("token", counts, {}, 965, 0)
    every = list(tables.values())
    assert sum(t.n for t in every) == 10_615  # Table 6's "Panel 10,615"
    # c: 7739/10615 = 72.9 %; a + b: (805 + 310)/10615 = 10.5 %; b: 310/10615 = 2.9 %.
    assert pooled_share(every, ("c",), ci=False).exact == Fraction(7739, 10615)
    assert round(100 * float(pooled_share(every, ("a", "b"), ci=False).value), 1) == 10.5
    assert round(100 * float(pooled_share(every, ("b",), ci=False).value), 1) == 2.9
    kept = [t for m, t in tables.items() if m not in ("BioMistral-7B", "OpenBioLLM-8B")]
    # Without the two: 5956/8685 = 68.58 %; the paper prints 68.5 from its unrounded rows
    # (each printed row ±0.05 pp, so 68.53–68.63).
    without = pooled_share(kept, ("c",), ci=False)
    assert without.exact == Fraction(5956, 8685)
    assert 68.5 <= 100 * float(without.value) <= 68.65


def test_cdr_without_the_chain_compressed_models(db):
    """A model whose ECR prints 0.00 on every cell (every F1 truncation flips: the chain is
    compressed) is left out of the second panel CDR, as §6.2 leaves out BioMistral-7B and
    OpenBioLLM-8B."""
    for dataset in ("medqa", "mmlu"):
        b = AuditBuilder(db, dataset=dataset, audit=f"cc-{dataset}")
        short, long_ = b.arm("short/cot"), b.arm("long/cot")
        for i in range(2):
            q = b.item(f"{dataset}{i}")
            for arm in (short, long_):
                b.baseline(arm, q, answer="A")
            # short: truncation always flips (ECR 0), M5 kept and silent: (c) twice.
            b.perturbed(short, q, operator_id="F1_truncate_50", intent="D", answer="B")
            _m5(b, short, q, flip=False, chain="acute", verdict=None)
            # long: truncation keeps the answer (ECR 1), M5 flips on item 0: (d), (c).
            b.perturbed(long_, q, operator_id="F1_truncate_50", intent="D", answer="A")
            _m5(b, long_, q, flip=i == 0, chain="acute", verdict=None)
    overview = build_panel_report(db, "all", n_boot=0).section("panel_overview").frame
    # Panel: short (c) 4 of 4, long (c) 2 of 4 -> 6/8 = 75 %; without short: 2/4 = 50 %.
    assert overview.loc["CDR, panel-wide (%)", "value"] == pytest.approx(75.0)
    row = "CDR without the chain-compressed models (%)"
    assert overview.loc[row, "value"] == pytest.approx(50.0)
    assert "short/cot" in overview.loc[row, "detail"] and "long/cot" not in overview.loc[
        row, "detail"].split("left out")[1].split("(paper")[0]


def test_ood_datasets_are_left_out_of_every_medical_pool(db):
    _ood_panel(db)
    report = build_panel_report(db, "all", n_boot=20, ood="gsm8k")
    # Table 5: the medical cells only; its Mean (Table 3's FCS) = mean(5/8, 7/8) = 3/4 for
    # strict, not the mean with gsm8k's 1 (5/6)
    cells = report.section("panel_fcs_cells").frame
    assert "gsm8k" not in cells.columns
    assert cells.loc["med/strict", "Mean"] == pytest.approx(0.75)
    table3 = report.section("panel_summary").frame
    assert table3.loc["med/strict", "fcs"] == pytest.approx(0.75)
    assert table3.loc["med/neutral", "fcs"] == pytest.approx(0.75)
    for key in ("panel_summary", "panel_families", "panel_firing"):
        assert "gsm8k" in report.section(key).note  # says it is left out
    assert "gsm8k" not in set(report.section("panel_firing").frame["dataset"])
    assert "gsm8k" not in set(report.section("panel_fcs_params").frame.get("dataset", []))
    # Appendix H still reads it
    assert "med/strict · gsm8k" in report.section("panel_ood").frame.index
    # without --ood every dataset is pooled: strict = mean(5/8, 7/8, 1)
    pooled = build_panel_report(db, "all", n_boot=0).section("panel_fcs_cells").frame
    assert pooled.loc["med/strict", "Mean"] == pytest.approx(5 / 6)
    with pytest.raises(UserError, match="--ood: names every dataset of the panel"):
        build_panel_report(db, "all", n_boot=0, ood="gsm8k,medqa,mmlu")
