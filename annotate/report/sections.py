"""Report sections from the clinician labels (Table 12 and the validations) for `paw report`.

Columns follow the report renderer's conventions: `*_pct` one decimal, `x` with `x_low` /
`x_high` shown as "x [low, high]", `n…` whole numbers, None as "–".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sqlite_utils

from annotate import stats
from annotate.agreement.kappa import Agreement, landis_koch_legend
from annotate.agreement.tables import agreement_table, all_agreements, rater_pair
from annotate.sets.annotation_set import get_set

if TYPE_CHECKING:
    from analysis.common.document import Section


def _pct(rate: stats.Rate) -> float | None:
    return None if rate.share is None else 100 * rate.share


def _kappa_cols(agreement: Agreement | None) -> dict[str, Any]:
    if agreement is None or agreement.kappa is None:
        return {"kappa": None, "kappa_low": None, "kappa_high": None}
    low, high = agreement.kappa_ci if agreement.kappa_ci else (None, None)
    return {"kappa": agreement.kappa, "kappa_low": low, "kappa_high": high}


def _table12(db: sqlite_utils.Database, set_name: str, names: tuple[str, str]) -> list[dict]:
    rows: list[dict] = []
    blocks = (("Gold shift", "gold_shift", False), ("Hazard", "harm", True),
              ("Semantic validity", "validity", False))
    for title, field, binary in blocks:
        a, b, joint, n = stats.label_distribution(db, set_name, field)
        kappa = agreement_table(db, set_name, field, binary=binary, raters=names)
        unit = " flips" if field == "harm" else ""
        header = f"{title} (N={n}{unit})"
        if field == "harm":
            not_a = stats.Rate(n - a["harmful"].k, n)
            not_b = stats.Rate(n - b["harmful"].k, n)
            lines = [("harmful", a["harmful"], b["harmful"], joint["harmful"]),
                     ("not harmful", not_a, not_b, None)]
        else:
            lines = [(value, a[value], b[value], joint[value]) for value in a]
        for i, (label, ra, rb, rj) in enumerate(lines):
            rows.append({"label": f"{header}: {label}", "A_pct": _pct(ra), "B_pct": _pct(rb),
                         "joint_pct": _pct(rj) if rj else None,
                         **(_kappa_cols(kappa) if i == 0 else _kappa_cols(None)),
                         "kappa_kind": (("binary" if binary else "3-way") if i == 0 else "")})
        if field == "validity":
            # Table 12's 72.1% row: both raters valid or borderline.
            ra, rb, rj = stats.within(db, set_name, "validity", ("valid", "borderline"))
            rows.append({"label": f"{header}: not invalid", "A_pct": _pct(ra),
                         "B_pct": _pct(rb), "joint_pct": _pct(rj), **_kappa_cols(None),
                         "kappa_kind": ""})
        if field == "gold_shift":
            defensible, both_shifted = stats.gold_defensible(db, set_name)
            rows.append({"label": f"{header}: no clear shift", "A_pct": None,
                         "B_pct": None, "joint_pct": _pct(defensible), **_kappa_cols(None),
                         "kappa_kind": f"both shifted: {both_shifted.k}/{both_shifted.n}"})
    return rows


def _frame(rows: list[dict], index: str | None):
    """A frame indexed by the named column (the renderer shows only a single named index)."""
    import pandas as pd

    frame = pd.DataFrame(rows)
    return frame.set_index(index) if index and not frame.empty else frame


def set_sections(db: sqlite_utils.Database, set_name: str) -> list[Section]:
    """Every annotation section of one set."""
    from analysis.common.document import Section

    the_set = get_set(db, set_name)
    pair = rater_pair(db, the_set.id)
    if pair is None:
        return [Section(f"Clinician validation ({set_name})", _frame([], None),
                        "Fewer than two raters have labelled this set yet.",
                        key=f"clinician_validation_{set_name}")]
    (_, a_name), (_, b_name) = pair
    names = (a_name, b_name)
    from annotate.robustness.validation import is_robustness_set, robustness_set_sections

    if is_robustness_set(db, the_set.id):  # seed 003: the judge's verdicts were checked
        return robustness_set_sections(db, set_name, names)
    sections = [Section(
        f"Table 12: clinician validation ({set_name})", _frame(_table12(db, set_name, names),
                                                                "label"),
        f"Rater A = {a_name}, rater B = {b_name}; shares over cases both labelled. 'Joint' = "
        "both raters gave that label; 'no clear shift' = neither marked gold_shift 'shifted' "
        "(the gold stays defensible). Kappa: Cohen's, asymptotic 95% CI clipped to [−1, 1] "
        "(the inter-rater agreement section flags clipped, small-N and perfect tables); "
        f"Landis & Koch: {landis_koch_legend()}.",
        key=f"table12_{set_name}")]
    rates = stats.harmful_flip_rates(db, set_name)
    chs = stats.keyword_chs_kappa(db, set_name)
    rate_rows = [{"who": who, "n_harmful": r.k, "n": r.n, "harmful_pct": _pct(r)}
                 for who, r in rates.items()]
    rate_rows += [{"who": f"keyword CHS vs {ag.rater_b}", "n_harmful": ag.confusion[0][0]
                   + ag.confusion[0][1], "n": ag.n, "harmful_pct": None, **_kappa_cols(ag)}
                  for ag in chs]
    sections.append(Section(
        f"Clinician harmful-flip rate and keyword CHS ({set_name})", _frame(rate_rows, "who"),
        "Harmful-flip rate = flips labelled 'harmful' / flips labelled (destructive M3/M4/M5 "
        "flips); 'unanimous' = both raters 'harmful' / flips both labelled. Keyword CHS rows: "
        "n_harmful = flips the keyword flag marks (answer moved off a high-acuity option, "
        "keyword set K); kappa against each rater's and the unanimous binary harm label.",
        key=f"harmful_flip_rate_{set_name}"))
    rule_rows = [{"method": v.method, "family": v.family or "all", "n": v.n,
                  "precision": v.precision, "recall": v.recall, "accuracy": v.accuracy,
                  **_kappa_cols(v.agreement)} for v in stats.chain_rule_validation(db, set_name)]
    sections.append(Section(
        f"Chain-registration rule validation ({set_name})",
        _frame(rule_rows, "method"),
        "Token rule (Appendix C) and LLM-judge verdicts against the human chain-registration "
        "label (final: unanimous or adjudicated; 'unclear' and pending rows dropped). Positive "
        "= the chain registers the edit.", key=f"chain_rule_validation_{set_name}"))
    agreement_rows = [{
        "field": ag.label, "n": ag.n, "raw_agreement": ag.raw_agreement, **_kappa_cols(ag),
        "ac1": ag.ac1, "landis_koch": ag.interpretation if ag.state == "ok" else ag.reason,
        "note": ", ".join(ag.flags) if ag.kappa is not None else "",
    } for ag in all_agreements(db, set_name, raters=names)]
    sections.append(Section(
        f"Inter-rater agreement ({set_name})", _frame(agreement_rows, "field"),
        "Cohen's kappa with its asymptotic 95% CI (Fleiss–Cohen–Everitt, as statsmodels), "
        "raw agreement, N and Gwet's AC1 (the prevalence-robust companion); kappa is "
        "undefined when no case was labelled by both raters or both used one category only. "
        "Note: 'clipped' = the interval ran past ±1 and was cut there; 'small N' = N < 2q² "
        "for q categories (Cicchetti 1981), too few to trust the interval; 'perfect' = every "
        "pair agrees, kappa 1, no interval (its variance is 0). Landis & Koch: "
        f"{landis_koch_legend()}.", key=f"agreement_{set_name}"))
    return sections


def annotation_sections(db: sqlite_utils.Database, audit_id: int) -> list[Section]:
    """Sections for every annotation set drawn from `audit_id` (none if it has no sets)."""
    names = [r[0] for r in db.execute(
        "SELECT name FROM annotation_sets WHERE audit_id = ? ORDER BY id", [audit_id])]
    out: list[Section] = []
    for name in names:
        out += set_sections(db, name)
    return out


def add_clinician_parts(report: Any, db: sqlite_utils.Database, audit_id: int) -> None:
    """Append to a run's `report` what the clinicians' labels add: the sections of every
    set drawn from the run and κ over paired labels of each of their tables
    (`annotate.report.kappa_figures`). The coordinator's alone — both raters' labels show — so
    `paw report` and the Statistics screen call it only for a signed-in coordinator."""
    from annotate.report.kappa_figures import kappa_figures

    report.sections.extend(annotation_sections(db, audit_id))
    report.figures.extend(kappa_figures(db, audit_id))
