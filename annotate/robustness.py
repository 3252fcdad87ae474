"""Seed-003 annotation: clinicians check the robustness run's automated judgements.

The paper's authors name the absence of clinician validation as their main limitation
(§6); here a coordinator draws a set from a robustness run and two raters confirm or reject
the judge. A unit is one parsed judge verdict: a CFV proposal's plausible/limited verdict
(test 'cfv'), a changed answer's direction (test 'direction') or a prefixed explanation's
stereotype flags (test 'flags'). Units are stratified by test × dataset × model (the
stratum 'test|dataset|model', whose first part also picks the case's fields:
`codebook.ROBUSTNESS_TEST_FIELDS`), drawn round-robin with equal allocation, and within a
stratum balanced over the judge's verdicts (so both positives and negatives are checked).
Unparsed verdicts are not sampled: there is nothing to confirm.

What the rater sees is the ordinary blinded case view: for CFV, the original and the
changed case with the target marked as the gold of the changed case; for a direction, the
two answers; for flags, the model's reasoning under the prefix. Blinding is unchanged.

`judge_validation` then compares the judge with the clinicians' final labels (unanimous
or adjudicated): Cohen's kappa (statsmodels, via `annotate.kappa`), precision and recall of
the judge's positive class, per test overall and per model.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass

import sqlite_utils

from analysis.fragility_definitions import (
    CFV_JUDGE_OK,
    DIRECTIONS,
    ROLE_BASELINE,
    ROLE_JUDGE_CFV,
    ROLE_JUDGE_DIRECTION,
    ROLE_JUDGE_FLAGS,
    UNPARSED,
)
from annotate.codebook import CODEBOOK_VERSION, FIELDS, robustness_test
from annotate.identity import Person
from annotate.kappa import Agreement, from_pairs
from store.db import dumps, transaction, utcnow
from store.errors import UserError

TEST_OF_ROLE: dict[str, str] = {ROLE_JUDGE_CFV: "cfv", ROLE_JUDGE_DIRECTION: "direction",
                                ROLE_JUDGE_FLAGS: "flags"}

CLINICIAN_FIELD: dict[str, str] = {"cfv": "cfv_validity", "direction": "direction",
                                   "flags": "stereotype"}
"""The clinician field that checks each test's judge verdict."""

POSITIVE: dict[str, str] = {"cfv": "valid_change", "direction": "more_aggressive",
                            "flags": "flagged"}
"""The positive class of each test's precision/recall: a valid change; a more aggressive
change (the paper's headline direction); a flagged explanation (any severity)."""

SEVERITY_ORDER: tuple[str, ...] = FIELDS["stereotype"].categories
"""none < clinically misleading < socially inappropriate < clinically dangerous (the
codebook's key order, the paper's listing order): a flagged explanation is compared by its
worst flag."""


def automated_value(test: str, verdict: str, evidence: dict, circular: bool = False) -> str:
    """The judge's verdict in the clinician field's values.

    CFV: 'circular' when the rule found the change circular, else the judge's
    plausible/limited verdict as 'valid_change' or 'too_dramatic'. Direction: the label.
    Flags: 'none', or the worst severity among the flags.
    """
    if test == "cfv":
        if circular:
            return "circular"
        return "valid_change" if verdict == CFV_JUDGE_OK else "too_dramatic"
    if test == "direction":
        return verdict
    severities = [f.get("severity") for f in evidence.get("flags") or []]
    ranked = [SEVERITY_ORDER.index(s) for s in severities if s in SEVERITY_ORDER]
    return SEVERITY_ORDER[max(ranked)] if ranked else "none"


def verdict_units(db: sqlite_utils.Database, audit_id: int) -> list[dict]:
    """Every parsed judge verdict of a robustness run as a unit to sample.

    Keys: test, stratum, verdict_class, variant_id, baseline_id, perturbed_id, automated,
    categories (flags: the judge's categories), model.
    """
    from analysis.fragility import load_robustness

    data = load_robustness(db, audit_id)
    labels = dict(zip(data.arms["arm_id"], data.arms["label"]))
    base = {(r.arm_id, r.item_id): r.generation_id for r in data.answers.itertuples()
            if r.role == ROLE_BASELINE and r.status == "done"}
    circular = {r.variant_id: bool(r.circular) for r in data.cfv.itertuples()
                if r.variant_id is not None and r.fired}
    units = []
    for r in data.verdicts.itertuples():
        test = TEST_OF_ROLE[r.role]
        if r.verdict == UNPARSED or (test == "direction" and r.verdict not in DIRECTIONS):
            continue
        automated = automated_value(test, r.verdict, r.evidence, circular.get(r.variant_id,
                                                                                False))
        units.append({
            "test": test, "model": labels[r.arm_id],
            "stratum": f"{test}|{data.audit['dataset']}|{labels[r.arm_id]}",
            "verdict_class": automated if test != "flags" else
            ("none" if automated == "none" else "flagged"),
            "variant_id": int(r.variant_id),
            "baseline_id": None if test == "cfv" else base.get((r.arm_id, r.item_id)),
            "perturbed_id": int(r.subject_generation_id), "automated": automated,
            "categories": sorted({f.get("category") for f in r.evidence.get("flags") or []}),
        })
    return units


def create_robustness_set(db: sqlite_utils.Database, audit_id: int, size: int, *, seed: int,
                          name: str, raters: tuple[str, str] | None,
                          coordinator: Person | None) -> int:
    """Draw a stratified, seeded sample of a robustness run's judge verdicts as a new set.

    Called by `annotate.sets.create_set` for runs of kind 'robustness' (it checks the
    arguments and the name). The same seed on the same run draws the same cases.

    Returns:
        The new set's id.

    Raises:
        UserError: the run has no parsed judge verdict yet.
    """
    from annotate.sets import _code, _name_raters, _round_robin

    units = verdict_units(db, audit_id)
    if not units:
        raise UserError("robustness run: no parsed judge verdicts to annotate yet (run "
                        "`paw robustness` first)")
    rng = random.Random(f"paw-robustness-set:{seed}")
    strata: dict[str, list[dict]] = defaultdict(list)
    for unit in units:
        strata[unit["stratum"]].append(unit)
    # Equal allocation over strata; within a stratum, the judge's verdict classes in turn.
    queues: dict[str, list[dict]] = {}
    for key in sorted(strata):
        by_class: dict[str, list[dict]] = defaultdict(list)
        for unit in strata[key]:
            by_class[unit["verdict_class"]].append(unit)
        for cls in sorted(by_class):
            rng.shuffle(by_class[cls])
        queues[key] = _round_robin(by_class, len(strata[key]))
    chosen = _round_robin(queues, size)
    rng.shuffle(chosen)  # codes and ids must not follow the strata
    used = {r[0] for r in db.execute("SELECT code FROM annotation_cases")}
    config = {"audit_id": audit_id, "size": size, "seed": seed, "source": "robustness",
              "n_available": len(units), "n_drawn": len(chosen)}
    with transaction(db) as conn:
        set_id = int(conn.execute(
            "INSERT INTO annotation_sets (name, audit_id, config_json, codebook_version, "
            "created_at) VALUES (?, ?, ?, ?, ?)",
            [name, audit_id, dumps(config), CODEBOOK_VERSION, utcnow()]).lastrowid)
        for unit in chosen:
            code = _code(rng)
            while code in used:
                code = _code(rng)
            used.add(code)
            conn.execute(
                "INSERT INTO annotation_cases (set_id, code, variant_id, baseline_generation_id, "
                "perturbed_generation_id, stratum, ask_harm, ask_chain_registration) "
                "VALUES (?, ?, ?, ?, ?, ?, 0, 0)",
                [set_id, code, unit["variant_id"], unit["baseline_id"], unit["perturbed_id"],
                 unit["stratum"]])
        if raters is not None and coordinator is not None:
            _name_raters(conn, set_id, name, raters, coordinator)
    return set_id


# ---------------------------------------------------------------- judge vs clinicians


@dataclass(frozen=True)
class JudgeValidation:
    """The judge against the clinicians' final labels on one test (one model or all)."""

    test: str
    model: str | None
    positive: str
    n: int
    tp: int
    fp: int
    fn: int
    tn: int
    agreement: Agreement
    category_match: tuple[int, int] | None = None

    @property
    def precision(self) -> float | None:
        """Of the judge's positives, the share the clinicians confirm (None: no positive)."""
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        """Of the clinicians' positives, the share the judge found (None: no positive)."""
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


def _is_positive(test: str, value: str) -> bool:
    return value != "none" if test == "flags" else value == POSITIVE[test]


def judge_validation(db: sqlite_utils.Database, set_name: str) -> list[JudgeValidation]:
    """The judge's verdicts against the final clinician labels of a robustness set.

    A case counts when its field has a final label (both raters agree, or a coordinator
    adjudicated). Kappa is over the field's full categories (judge = rater A, clinicians =
    rater B); precision and recall over `POSITIVE`. For flags, `category_match` is (cases
    where the clinicians' category is one of the judge's, cases both flagged with a
    clinician category).

    Returns:
        For each test with a decided case: all models, then each model.
    """
    from annotate.adjudicate import final_labels
    from annotate.sets import get_set

    the_set = get_set(db, set_name)
    finals = final_labels(db, set_name)
    units = {(u["test"], u["perturbed_id"]): u for u in verdict_units(db, int(the_set.audit_id))}
    rows: dict[str, list[tuple[str, dict, str, str | None]]] = defaultdict(list)
    for code, stratum, perturbed in db.execute(
            "SELECT code, stratum, perturbed_generation_id FROM annotation_cases "
            "WHERE set_id = ? ORDER BY id", [the_set.id]):
        test = robustness_test({"stratum": stratum})
        final = finals.get((code, CLINICIAN_FIELD.get(test or "", "")))
        unit = units.get((test, perturbed))
        if test is None or final is None or final.value is None or unit is None:
            continue
        category = finals.get((code, "stereotype_category"))
        rows[test].append((unit["model"], unit, final.value,
                           None if category is None else category.value))
    out = []
    for test in ("cfv", "direction", "flags"):
        models = sorted({m for m, *_ in rows[test]})
        for model in [None, *models]:
            chosen = [r for r in rows[test] if model is None or r[0] == model]
            if chosen:
                out.append(_validate(test, model, chosen))
    return out


def _validate(test: str, model: str | None,
              rows: list[tuple[str, dict, str, str | None]]) -> JudgeValidation:
    field = CLINICIAN_FIELD[test]
    pairs = [(unit["automated"], human) for _, unit, human, _ in rows]
    agreement = from_pairs(pairs, FIELDS[field].categories, field=field, stratum=model,
                           rater_a="judge", rater_b="clinicians")
    judged = [(_is_positive(test, a), _is_positive(test, h)) for a, h in pairs]
    tp = sum(a and h for a, h in judged)
    fp = sum(a and not h for a, h in judged)
    fn = sum(h and not a for a, h in judged)
    tn = sum(not a and not h for a, h in judged)
    match = None
    if test == "flags":
        both = [(unit["categories"], cat) for _, unit, human, cat in rows
                if unit["automated"] != "none" and human != "none" and cat is not None]
        match = (sum(cat in cats for cats, cat in both), len(both))
    return JudgeValidation(test, model, POSITIVE[test], len(pairs), tp, fp, fn, tn, agreement,
                           match)


def is_robustness_set(db: sqlite_utils.Database, set_id: int) -> bool:
    """Whether a set was drawn from a robustness run."""
    row = db.execute("SELECT a.kind FROM annotation_sets s JOIN audits a ON a.id = s.audit_id "
                     "WHERE s.id = ?", [set_id]).fetchone()
    return row is not None and row[0] == "robustness"


def _cell(value: float | None) -> float | None:
    return None if value is None else float(value)


def robustness_set_sections(db: sqlite_utils.Database, set_name: str,
                            raters: tuple[str, str]) -> list:
    """Report sections of a robustness set: judge vs clinicians, and inter-rater agreement."""
    import pandas as pd

    from analysis.document import Section
    from annotate.agreement import all_agreements

    rows = []
    for v in judge_validation(db, set_name):
        ag = v.agreement
        low, high = ag.kappa_ci if ag.kappa_ci else (None, None)
        rows.append({
            "comparison": f"{v.test} / {v.model or 'all models'}", "positive": v.positive,
            "n": v.n, "raw_agreement": ag.raw_agreement, "kappa": _cell(ag.kappa),
            "kappa_low": _cell(low), "kappa_high": _cell(high),
            "precision": v.precision, "recall": v.recall,
            "category_match": (f"{v.category_match[0]}/{v.category_match[1]}"
                               if v.category_match else ""),
            "note": ag.interpretation if ag.state == "ok" else ag.reason})
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame = frame.set_index("comparison")
    agreement_rows = [{
        "field": ag.label, "n": ag.n, "raw_agreement": ag.raw_agreement,
        "kappa": _cell(ag.kappa), "kappa_low": _cell(ag.kappa_ci[0] if ag.kappa_ci else None),
        "kappa_high": _cell(ag.kappa_ci[1] if ag.kappa_ci else None), "ac1": ag.ac1,
        "landis_koch": ag.interpretation if ag.state == "ok" else ag.reason,
    } for ag in all_agreements(db, set_name, raters=raters)]
    agreement = pd.DataFrame(agreement_rows)
    if not agreement.empty:
        agreement = agreement.set_index("field")
    return [
        Section(f"Judge vs clinicians ({set_name})", frame,
                f"Raters {raters[0]} and {raters[1]}; clinician label = final (both agree, or "
                "adjudicated). Kappa: Cohen's over the field's categories (judge vs "
                "clinicians), 95% CI (statsmodels). Positive class: cfv valid_change (judge "
                "plausible and limited, not circular), direction more_aggressive, flags any "
                "flag (the judge's worst severity vs the clinicians'). Category match = cases "
                "both flagged whose clinician category is one of the judge's. Cases were "
                "balanced over the judge's verdicts within each test × model, so these are "
                "not prevalence-weighted.", key=f"judge_validation_{set_name}"),
        Section(f"Inter-rater agreement ({set_name})", agreement,
                "Cohen's kappa with 95% CI (statsmodels), raw agreement, N and Gwet's AC1 on "
                "the seed-003 fields; undefined when no case was labelled by both raters or "
                "both used one category only.", key=f"agreement_{set_name}"),
    ]
