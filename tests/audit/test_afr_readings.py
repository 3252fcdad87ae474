"""Which operators AFR_D pools: the paper's Table 3 predicted from its Table 11 under each reading.

§4 defines "AFR_π = E[1(ŷ' ≠ ŷ)], with group means AFR_D, AFR_P" over the battery (F- and
M-block), and Appendix G's ablations ("per-model fcs computed using only F1–F7 vs. only
M1–M6"; M6's "contribution to any aggregate metric is bounded by that fire rate")
presuppose that pool. But Table 3's printed AFR_D is what chain edits alone give: from
Table 11's family flip rates, pooling the destructive chain families F1, F2, F3, F5 by their
variants predicts all nine models within 0.02; any pool with the M-block misses by 0.04–0.12
on average and cannot give BioMistral-7B's 0.01, because M1 (destructive, fires on ≥ 99 %,
flip rate 0.38 for BioMistral) enters it. PAW's default is the reading that reproduces the
table (`definitions.AFR_READING = 'f'`) and it reports the F+M one beside it.
"""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from analysis.audit import definitions as d
from analysis.audit.frames import load_audit
from analysis.audit.report import AuditReportOptions, build_report
from analysis.audit.tables import compute_audit
from analysis.common.render import display_frame
from tests.builders import AuditBuilder
from workbench.perturb.catalogue import F_BLOCK, M_BLOCK, OPERATORS

MODELS = ("Mistral-7B", "Qwen2.5-7B", "Llama-3.1-8B", "Gemma-2-9B", "Qwen2.5-14B",
          "BioMistral-7B", "Meditron-7B", "Med42-8B", "OpenBioLLM-8B")

# Table 3 (seed 002), column afrD: "Gemma-2-9B 0.67 0.75 0.06 0.52 …", "BioMistral-7B 0.38
# 0.96 0.01 0.50 0.00 0.06 0.22".
TABLE3_AFR_D = dict(zip(MODELS, map(F, ("0.22", "0.14", "0.17", "0.06", "0.06", "0.01",
                                         "0.44", "0.12", "0.23"))))

# Table 11 (seed 002), destructive families, "–" = did not fire (None).
_ = None
TABLE11 = {
    "F1": ("0.30", "0.20", "0.26", "0.11", "0.17", _, "0.53", "0.23", _),
    "F2": ("0.22", "0.15", "0.14", "0.06", "0.05", _, "0.43", "0.12", _),
    "F3": ("0.15", "0.11", "0.15", "0.03", "0.00", "0.01", "0.41", "0.05", "0.21"),
    "F5": ("0.17", "0.02", "0.11", "0.01", "0.01", _, "0.41", "0.05", _),
    "M1": ("0.48", "0.35", "0.41", "0.33", "0.34", "0.38", "0.72", "0.42", "0.49"),
    "M2": ("0.19", "0.05", "0.16", "0.08", "0.14", "0.03", "0.63", "0.20", "0.07"),
    "M4": ("0.19", "0.10", "0.24", "0.16", "0.17", "0.03", "0.58", "0.28", "0.12"),
    "M5": ("0.10", "0.04", "0.13", "0.11", "0.11", "0.06", "0.56", "0.12", "0.14"),
}

# Appendix G: "Most operators fire on ≥99% of samples (F4, M1, M3). Exceptions: M4 negation
# (10%), M5 severity (14%) … M2 demographic fires on 86–87% of MedQA … but only 3–30% on the
# others". M2 over the four datasets: (86.5 + 3 + 16.5 + 30) / 4 = 34 %. A chain family
# fires where Table 11 has a rate; its rate does not matter to the F-only pool when all
# fired chain families fire alike (it scales numerator and denominator together).
APPENDIX_G_FIRING = {"M1": F("0.99"), "M2": F("0.34"), "M4": F("0.10"), "M5": F("0.14")}


def _variants(family: str) -> int:
    """Variants per family in PAW's battery (Appendix F: F1 3, F2 3, F3 3, F5 2; M1 2,
    M2 3, M4 2, M5 2)."""
    return sum(1 for op in OPERATORS.values()
               if op.family == family and op.id in F_BLOCK + M_BLOCK)  # not the coherent ones


def predict(families: tuple[str, ...], firing: dict[str, F]) -> dict[str, F]:
    """Pooled AFR_D per model: Σ variants·fire·rate / Σ variants·fire over the families
    that fired for it."""
    out = {}
    for j, model in enumerate(MODELS):
        num = den = F(0)
        for family in families:
            rate = TABLE11[family][j]
            if rate is None:
                continue
            weight = _variants(family) * firing.get(family, F(1))
            num += weight * F(rate)
            den += weight
        out[model] = num / den
    return out


def errors(prediction: dict[str, F]) -> tuple[F, F]:
    """(mean, max) absolute error against Table 3's AFR_D."""
    gaps = [abs(prediction[m] - TABLE3_AFR_D[m]) for m in MODELS]
    return sum(gaps, F(0)) / len(gaps), max(gaps)


CHAIN = ("F1", "F2", "F3", "F5")
QUESTION = ("M1", "M2", "M4", "M5")


def test_the_battery_has_the_papers_variant_counts():
    assert [_variants(f) for f in CHAIN + QUESTION] == [3, 3, 3, 2, 2, 3, 2, 2]
    assert d.AFR_READINGS[d.AFR_READING][1] == d.F_FAMILIES  # the default is chain-only


def test_chain_only_pooling_reproduces_table3():
    p = predict(CHAIN, APPENDIX_G_FIRING)
    # BioMistral: only F3 fired (0.01) -> 0.01, the paper's value exactly.
    assert p["BioMistral-7B"] == F(1, 100)
    # Gemma: (3·0.11 + 3·0.06 + 3·0.03 + 2·0.01) / 11 = 0.62/11 = 31/550 = 0.0564 -> 0.06.
    assert p["Gemma-2-9B"] == F(31, 550)
    # Llama: (0.78 + 0.42 + 0.45 + 0.22) / 11 = 1.87/11 = 0.17 exactly.
    assert p["Llama-3.1-8B"] == F(17, 100)
    mean, worst = errors(p)
    # Mean error 0.0059 (the figure, from its own assumptions: 0.008), max 0.02
    # (OpenBioLLM: F3 only, 0.21 vs 0.23).
    # Σ errors = 0.0064 + 0.0109 + 0 + 0.0036 + 0.0018 + 0 + 0.0082 + 0.0018 + 0.02 = 29/550.
    assert mean == F(29, 4950) and round(float(mean), 4) == 0.0059
    assert worst == F(2, 100)
    # Rounded as the paper prints, 5 of the 9 models agree exactly.
    printed = {m: round(float(p[m]) + 1e-12, 2) for m in MODELS}
    assert sum(printed[m] == float(TABLE3_AFR_D[m]) for m in MODELS) == 5


def test_pools_with_the_m_block_do_not():
    p = predict(CHAIN + QUESTION, APPENDIX_G_FIRING)
    mean, worst = errors(p)
    # F+M under Appendix G's fire rates: mean error 0.047, max 0.119 — BioMistral:
    # (0.03 + 2·0.99·0.38 + 3·0.34·0.03 + 2·0.10·0.03 + 2·0.14·0.06) / (3 + 1.98 + 1.02 +
    # 0.2 + 0.28) = 0.8358 / 6.48 = 1393/10800 = 0.129, against Table 3's 0.01.
    assert round(float(mean), 3) == 0.047
    assert p["BioMistral-7B"] == F(1393, 10800) and worst == p["BioMistral-7B"] - F(1, 100)
    # Gemma: 7089/72400 = 0.098 against 0.06 (the issue: 0.106 under its assumptions).
    assert p["Gemma-2-9B"] == F(7089, 72400)
    # M-only: mean error 0.161 (the figure).
    m_mean, _ = errors(predict(QUESTION, APPENDIX_G_FIRING))
    assert round(float(m_mean), 3) == 0.161


@pytest.mark.parametrize("chain_fire", ["0.25", "0.5", "0.75", "1"])
@pytest.mark.parametrize("m2_fire", ["0.03", "0.30", "0.34", "0.87"])
@pytest.mark.parametrize("m1_fire", ["0.99", "1"])
def test_no_firing_assumption_rescues_the_m_block(chain_fire, m2_fire, m1_fire):
    """Over every chain fire rate from 25 % to 100 % and every M2 rate the paper quotes,
    BioMistral's F+M AFR_D stays in [0.109, 0.239] (the issue: 0.11–0.26), ≥ 10× Table 3's
    0.01, and the F+M mean error in [0.040, 0.119] (the issue's 0.060 lies in it), while
    the chain-only prediction does not move."""
    firing = {**APPENDIX_G_FIRING, "M1": F(m1_fire), "M2": F(m2_fire),
              **{f: F(chain_fire) for f in CHAIN}}
    both = predict(CHAIN + QUESTION, firing)
    assert F("0.109") <= both["BioMistral-7B"] <= F("0.239")
    mean, _ = errors(both)
    assert F("0.040") <= mean <= F("0.119")
    assert predict(CHAIN, firing) == predict(CHAIN, APPENDIX_G_FIRING)


def _biomistral_shaped(db) -> None:
    """100 items shaped like BioMistral-7B's Table 11 column: chain compressed (F1, F2, F5
    never fire), F3 substitute flips 1 of 100 per variant, M1 fires on 99 of 100 and flips
    38 per variant, M2 fires on 34 (1 flip per variant), M4 on 10 (1 flip of 20), M5 on 14
    (2 flips of 28); preserving: F4 1 flip of 200, M3 20 per variant."""
    b = AuditBuilder(db, audit="biomistral-shaped")
    arm = b.arm("bio/cot")
    qs = [b.item(f"q{i}") for i in range(100)]

    def edits(op: str, family: str, intent: str, fired: int, flips: int, start: int = 0,
              new: str | None = None) -> None:
        for k, q in enumerate(qs[:fired]):
            flip = start <= k < start + flips
            b.perturbed(arm, q, operator_id=op, family=family, intent=intent,
                        answer="B" if flip else "A", new=new, output="")

    for q in qs:
        b.baseline(arm, q, answer="A")
        b.perturbed(arm, q, operator_id="F1_truncate_50", intent="D", fired=False)
    for v, start in zip("abc", (0, 1, 2)):
        edits(f"F3_substitute_{v}", "F3", "D", 100, 1, start)
    edits("F4_insert_a", "F4", "P", 100, 1)
    edits("F4_insert_b", "F4", "P", 100, 0)
    for v in "ab":
        edits(f"M1_ablation_{v}", "M1", "D", 99, 38)
        edits(f"M3_distractor_{v}", "M3", "P", 100, 20)
    for op in ("M2_age_a", "M2_age_b", "M2_sex"):
        edits(op, "M2", "D", 34, 1, new="72")
    edits("M4_negation_a", "M4", "D", 10, 1)
    edits("M4_negation_b", "M4", "D", 10, 0)
    edits("M5_severity_a", "M5", "D", 14, 1, new="chronic")
    edits("M5_severity_b", "M5", "D", 14, 1, start=5, new="chronic")


def test_paw_reports_both_readings_named(db):
    _biomistral_shaped(db)
    s = compute_audit(load_audit(db), n_boot=20, seed=0).arms[0].stats
    # F: 3 flips / 300 F3 edits = 1/100, Table 3's BioMistral AFR_D.
    assert s["afr_d"].exact == F(1, 100) and s["afr_d"].n == 300
    # F+M: (3 + 76 + 3 + 1 + 2) / (300 + 198 + 102 + 20 + 28) = 85/648 = 0.131.
    assert s["afr_d_fm"].exact == F(85, 648) and s["afr_d_fm"].n == 648
    # AFR_P: F 1/200; F+M (1 + 40) / (200 + 200) = 41/400.
    assert s["afr_p"].exact == F(1, 200) and s["afr_p_fm"].exact == F(41, 400)
    # FCS: F 1/200 + (1 − 1/200)/2 = 0.5025 (Table 3: 0.50); F+M 85/1296 + 359/800 = 0.5143.
    assert s["fcs"].exact == F(1, 200) + (1 - F(1, 200)) / 2
    assert s["fcs_fm"].exact == F(85, 1296) + (1 - F(41, 400)) / 2
    report = build_report(db, options=AuditReportOptions(n_boot=20))
    summary = report.section("summary").frame
    shown = display_frame(summary)
    assert shown.loc["bio/cot", "AFR_D (F)"].startswith("0.01 [")
    assert shown.loc["bio/cot", "AFR_D (F+M)"].startswith("0.13 [")
    assert report.meta["afr_reading"] == "F"
    import json

    row = json.loads(report.to_json())["tables"]["summary"]["rows"][0]
    assert row["afr_d"] == pytest.approx(0.01) and row["afr_d_fm"] == pytest.approx(85 / 648)
    assert {"fcs_in_corridor", "fcs_in_corridor_fm", "mfc", "mfc_fm"} <= set(row)
