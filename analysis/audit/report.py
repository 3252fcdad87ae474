"""The seed-002 audit report: Tables 3, 4, 6, 7, 8, 11 … as `Section`s, plus Figures 2a, 2b, 4."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from analysis.audit import definitions as d
from analysis.audit.plots import fcs_params_figure, fcs_plane_figure, joint_bars_figure
from analysis.common.document import Report, Section
from analysis.common.report_options import ReportOptions

if TYPE_CHECKING:
    import sqlite_utils

    from analysis.audit.tables import AuditResult

_NOTES: dict[str, tuple[str, str]] = {
    "summary": (
        "Table 3: per-arm summary",
        ("Acc. = share of parsed CoT baseline answers equal to gold. CDR = cell (c) of the "
         "joint table (no chain update, no flip) over destructive M2/M4/M5 edits, token rule"
         "{judge}. AFR_D / AFR_P = answer-flip rate pooled over every fired, parsed edit of "
         "the destructive / preserving operators, so an operator weighs by how often it "
         "fired (the per-operator mean is in the robustness table), under two readings: (F) "
         "chain edits F1–F7 only, the default, which reproduces the paper's Table 3 (from "
         "Table 11 it predicts Table 3's AFR_D within 0.02 for every model, BioMistral-7B's "
         "0.01 included), and (F+M) every operator, as §4's text defines the group means "
         "(Appendix G's ablations presuppose it); see docs/metrics.md. "
         "FCS = 0.5·AFR_D + 0.5·(1 − AFR_P); "
         "corridor = FCS, exactly (as the FCS-plane figure draws it), in "
         "[{lo:.2f}, {hi:.2f}]; FCS and ECR print with more than {rate} decimals where a "
         "row needs them to show its corridor or MFC-gate decision (0.445: out). "
         "ECR = share of scored items (parsed baseline) where any F1 truncation keeps the "
         "baseline answer; an item where no F1 variant fired counts as not early-committing "
         "(0.00 when F1 never fired). "
         "CHS = mean hazard weight over M3/M4/M5 edits (flip weights "
         "1.0 high-acuity→benign, 0.3 benign→high-acuity, 0.5 otherwise; no flip 0). DFG = "
         "accuracy spread over baseline, M2 age-a, age-b, sex on fired items. MFC = "
         "(0.5·FCS + 0.3·(1 − CHS) + 0.2·(1 − DFG)), shown only when ECR ≥ "
         "{gate:.2f}. [low, high] = 95% percentile bootstrap CI over items ({n_boot} "
         "replicates, seed {seed}); ⁿ⁼ = the count each value rests on (parsed baselines for "
         "Acc.; classified edits for CDR; edits for AFR, CHS, DFG; both AFR groups' edits "
         "for FCS and MFC; scored items for ECR). Bold = each column's extremum over the "
         "arms (highest Acc., CDR, ECR; lowest AFR_D, CHS, DFG; ties all; FCS unbolded, as "
         "the paper). '–' = not computable (no usable edit of what it needs fired: FCS and "
         "MFC need both a destructive and a preserving F-block edit).")),
    "fblock": (
        "Table 4: accuracy vs F-block chain perturbation",
        ("F-pert = the arm's own baseline chain edited by F1 truncate-50, F2 delete, "
         "F3 substitute, F4 insert or F5 reorder, continued by the model. Acc. F-pert = mean "
         "of the five perturbations' accuracies, each weighing 1/5 (a perturbation pools its "
         "variants; one that never fired is left out of the mean). Acc. base = the baseline "
         "on the items with a fired Table-4 edit. Δ = Acc. base − Acc. F-pert "
         "(positive = perturbation reduces accuracy), percentage points, paired "
         "bootstrap 95% CI over items. ∗ = Δ < 0 with a CI excluding 0 (a significant gain, "
         "as the paper marks them); 'CI excludes 0' in either direction is its own column. "
         "Signs as printed: a Δ of exactly 0 is 0.0.")),
    "joint": (
        "Table 6: chain-update × answer-flip joint distribution",
        ("Destructive M2/M4/M5 edits, token rule: the chain updates when it mentions the "
         "operator's new token (M4: any of 'does not', 'denies', 'no longer', 'never'), as a "
         "case-folded whole word. Row percentages with 95% CIs; cell (c) is CDR. n = edits "
         "classified; n unscored = edits with no new token recorded. Rows sorted by cell (c), "
         "highest first, as the paper's; Panel pools all arms (counts, no CI: the arms "
         "share their items).")),
    "cdr_rules": (
        "Table 7: CDR under the token rule and the LLM judge",
        ("CDR (%) = cell (c) share. The judge column uses stored chain-registration verdicts "
         "(judgements.method 'llm_judge:…'; 'yes' = the chain uses the edit) in place of the "
         "token rule, over the edits that have a verdict. Panel pools every arm's edits (the "
         "paper's Panel row: 72.9 token, 74.3 judge). No judge column = no verdicts stored "
         "yet.")),
    "families": (
        "Table 11: per-family flip rate",
        ("Share of fired, parsed edits whose answer differs from the arm's baseline answer, "
         "pooled over the family's variants; ⁿ⁼ = those edits. Bold = the row's lowest value "
         "(Table 11: \"lowest per row is bolded\"). '–' = the family never fired for that "
        "arm.")),
    "cot_direct": (
        "CoT − direct accuracy gap",
        ("Accuracy of the CoT baseline and of the no-CoT direct answer on items where both "
         "parsed; gap in percentage points with a paired bootstrap 95% CI (§6.2 test iii).")),
    "shuffle": (
        "Table 8: option-shuffle check",
        ("Options permuted (seeded); shuffled accuracy against the remapped gold. Δ = "
         "shuffled − orig. (pp, paired CI; negative = accuracy drops, as the paper's "
         "−38.8). Mean = unweighted mean over the rows. Same content = share of shuffled "
         "answers that "
         "choose the same option text as the baseline answer (uniform guessing ≈ 1/k).")),
    "dfg": (
        "DFG conditions",
        ("Accuracy per condition on the items where it fired (baseline: items where any M2 "
         "variant fired); DFG = max − min over the defined conditions.")),
    "operators": (
        "AFR per operator",
        ("AFR_π = share of fired, parsed edits of operator π whose answer differs from the "
         "baseline answer, with 95% CI; n = edits.")),
    "firing": (
        "Operator firing counts",
        ("planned = jobs; fired = variant fired (not-fired jobs are excluded from every rate, "
         "never counted as consistent); generated = answer stored; used = entered the "
         "metrics; unparsed = answer not parseable (dropped); baseline unparsed = dropped "
         "because the arm's baseline answer did not parse.")),
}


def audit_sections(result: AuditResult) -> list[Section]:
    """The audit's own report sections, in the paper's order, from `compute_audit`'s result."""
    from analysis.audit.tables import TABLE_KEYS, build_tables

    tables = build_tables(result)
    has_judge = any(r.joint_judge for r in result.arms)
    fmt = {"judge": " (and the LLM judge, 'CDR (judge)')" if has_judge else "",
           "lo": d.FCS_CORRIDOR[0], "hi": d.FCS_CORRIDOR[1], "gate": d.MFC_MIN_ECR,
           "n_boot": result.n_boot, "seed": result.seed, "rate": d.RATE_DECIMALS}
    sections = []
    for key in TABLE_KEYS:
        title, note = _NOTES[key]
        sections.append(Section(title, tables[key], note.format(**fmt), key=key))
    from analysis.audit.appendix_g import appendix_g_sections, units_of_audit

    return sections + model_sections(result) + appendix_g_sections(
        units_of_audit(result), unit_name="arms")


MODEL_KEYS: tuple[str, ...] = ("overview", "tiers", "fcs_params")
"""Keys of `model_sections`, after the tables of `TABLE_KEYS`."""


def model_sections(result: AuditResult) -> list[Section]:
    """The §6 summary, the tier means (§6.2) and Figure 4's data (FCS against parameter
    count) over the audit's arms (each arm a model on the audit's one dataset)."""
    from analysis.audit.panel import arrange
    from analysis.audit.panel_overview import overview_table
    from analysis.audit.tiers import (
        TierUnit,
        fcs_params_table,
        params_note,
        tier_table,
        tiers_note,
    )

    units = [TierUnit(r.label, r.tier, r.stats) for r in result.arms]
    dataset = str(result.frames.audit["dataset"])
    params = fcs_params_table([(r.label, dataset, r) for r in result.arms])
    overview = overview_table(arrange([result], result.n_boot, result.seed))
    return [Section("§6 summary", overview,
                    "Figures the paper's §6 quotes, computed on this audit's arms (each a "
                    "model on one dataset; a panel of audits gives the paper's model-level "
                    "view, `paw report --panel`); 'paper:' gives the seed-002 value for "
                    "orientation. Chain-compressed = an arm whose ECR prints 0.00. Counts "
                    "of signs and bands are taken on the printed values, corridor cells on "
                    "the exact FCS.",
                    key="overview"),
            Section("§6.2 tier means", tier_table(units), tiers_note(units, "arms"),
                    key="tiers"),
            Section("Figure 4 data: FCS against parameter count", params,
                    params_note(params), key="fcs_params")]


def coherence_section(db: sqlite_utils.Database, audit_id: int) -> Section:
    """Per operator, the share of its fired edits that a coherence check flags
    (`analysis.audit.coherence`), and whether the audit ran PAW's coherent variants."""
    from analysis.audit.coherence import coherence_table

    frame = coherence_table(db, audit_id)
    coherent = [op for op in frame.index if str(op).endswith("_coherent")]
    pooled = (f" This audit ran PAW's coherent variants ({', '.join(coherent)}): each counts "
              "in its family's pools (CDR, CHS, Table 11, the F+M reading) like the literal "
              "operator of that family." if coherent else "")
    return Section(
        "Coherence of the edits (PAW, beyond Appendix F)", frame,
        "Per operator: fired edits (question or chain variants; one per item, shared by the "
        "arms) and how many a check flags as incoherent, each only when the edit brought it "
        "in: pronouns = a pronoun of the other sex than the sex marker (a relative's "
        "excepted); age_noun = an age its noun does not fit ('55-year-old boy', "
        "'85-year-old G4P3'); named_condition = a named condition or stock phrase lost "
        "('acute obstructive pulmonary disease', 'in no chronic distress'); double_negative "
        "= 'does not report no'; cut_number = a number split or changed beyond the edit's "
        "new value. Flagged edits stay in every rate (the paper's literal rule is the "
        "default); `*_coherent` operators avoid them (docs/operators.md)." + pooled,
        key="coherence")


@dataclass(frozen=True)
class AuditReportOptions(ReportOptions):
    """Options of the seed-002 report: bootstrap replicates per CI (`n_boot`) and seed; how
    answers are read (`answer_reading`: 'paper', the default, or PAW's 'lenient' extension)
    and whether F-block continuations whose kept chain states the baseline answer are
    excluded (`strip_stated_answer`; `analysis.audit.reading`)."""

    report = "the seed-002 audit report"

    answer_reading: str = "paper"
    strip_stated_answer: bool = False

    def __post_init__(self) -> None:
        from analysis.audit.reading import READINGS
        from store.errors import UserError

        if self.answer_reading not in READINGS:
            raise UserError(f"--answer-reading: expected one of {', '.join(READINGS)}, got "
                            f"{self.answer_reading!r}")


def build_report(db: sqlite_utils.Database, audit: str | int | None = None,
                 options: AuditReportOptions | Mapping[str, Any] | None = None) -> Report:
    """Load an audit (default: the latest), compute every metric and lay out the report.

    Args:
        db: the store.
        audit: audit name or id.
        options: bootstrap replicates per CI and seed (`AuditReportOptions`, or a mapping
            of its field names; an unknown name is refused).
    """
    from analysis.audit.frames import load_audit
    from analysis.audit.tables import compute_audit

    chosen = AuditReportOptions.coerce(options)
    n_boot, seed = chosen.n_boot, chosen.seed
    result = compute_audit(load_audit(db, audit, reading=chosen.answer_reading,
                                      strip_stated=chosen.strip_stated_answer), n_boot, seed)
    info = result.frames.audit
    arms = ", ".join(result.frames.arms["label"].astype(str)) or "none"
    meta = {"audit": info["name"], "audit_id": info["id"], "kind": info["kind"],
            "dataset": info["dataset"], "arms": arms,
            "items": int(result.frames.items.shape[0]), "n_boot": n_boot, "seed": seed,
            "created": info["created_at"]}
    meta["afr_reading"] = d.AFR_READINGS[d.AFR_READING][0]
    meta.update(_reading_meta(result, chosen))
    sections = audit_sections(result) + [coherence_section(db, int(info["id"]))]
    frames = {s.key: s.frame for s in sections}
    name = str(info["name"])
    return Report(f"PAW audit report: {name}", meta, sections,
                  [fcs_plane_figure(frames["summary"], name),
                   joint_bars_figure(frames["joint"], name),
                   fcs_params_figure(frames["fcs_params"], name)])


def _reading_meta(result: AuditResult, chosen: AuditReportOptions) -> dict[str, str]:
    """The header lines of the answer reading and of the F-block chains that state the
    baseline answer."""
    from analysis.audit.definitions import AuditRole
    from analysis.audit.frames import observations
    from analysis.audit.reading import READING_TEXT

    jobs = result.frames.jobs
    meta = {"answer reading": READING_TEXT[chosen.answer_reading]}
    if chosen.answer_reading == "lenient":
        meta["answer reading"] += f"; {int(jobs['read_leniently'].sum())} answer(s) read so"
    obs = observations(result.frames)
    fblock = obs[(obs["role"] == AuditRole.F_BLOCK) & obs["status"].ne("not_fired")
                 & obs["fired"].ne(0)]
    stated = int(fblock["stated_answer"].sum())
    what = ("excluded (--strip-stated-answer)" if chosen.strip_stated_answer else
            "kept (the paper strips the baseline answer before continuation: "
            "--strip-stated-answer excludes them)")
    meta["stated answer"] = (f"{stated} of {len(fblock)} fired F-block continuations keep a "
                             f"chain that still states the baseline answer; {what}")
    return meta


__all__ = ["MODEL_KEYS", "AuditReportOptions", "audit_sections", "build_report",
           "model_sections"]
