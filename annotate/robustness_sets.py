"""Seed-003 sets: a robustness run's parsed judge verdicts, drawn stratified and seeded.

A unit is one parsed judge verdict: a CFV proposal's plausible/limited verdict
(test 'cfv'), a changed answer's direction (test 'direction') or a prefixed explanation's
stereotype flags (test 'flags'). Units are stratified by test × dataset × model (the
stratum 'test|dataset|model', whose first part also picks the case's fields:
`codebook.ROBUSTNESS_TEST_FIELDS`), drawn round-robin with equal allocation, and within a
stratum balanced over the judge's verdicts (so both positives and negatives are checked).
Unparsed verdicts are not sampled: there is nothing to confirm.

What the rater sees is the ordinary blinded case view: for CFV, the original and the
changed case with the target marked as the gold of the changed case; for a direction, the
two answers; for flags, the model's reasoning under the prefix. Blinding is unchanged.
The judge is then compared with the clinicians in `annotate.robustness`.
"""

from __future__ import annotations

import random
from collections import defaultdict

import sqlite_utils

from analysis.robustness.definitions import (
    CFV_JUDGE_OK,
    DIRECTIONS,
    ROLE_BASELINE,
    ROLE_JUDGE_CFV,
    ROLE_JUDGE_DIRECTION,
    ROLE_JUDGE_FLAGS,
    UNPARSED,
)
from annotate.codebook import CODEBOOK_VERSION, FIELDS
from annotate.identity import Person
from annotate.raters import name_raters
from annotate.sampling import case_code, round_robin
from store.db import dumps, transaction, utcnow
from store.errors import UserError

TEST_OF_ROLE: dict[str, str] = {ROLE_JUDGE_CFV: "cfv", ROLE_JUDGE_DIRECTION: "direction",
                                ROLE_JUDGE_FLAGS: "flags"}

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
    from analysis.robustness.data import load_robustness

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
            "judge_generation_id": int(r.judge_generation_id),
        })
    return units


def one_per_decision(units: list[dict], rng: random.Random) -> list[dict]:
    """One unit per judge generation (drawn with `rng`), in the order of `units`.

    A judge generation serves several units when their judge prompts are identical (two
    prefixes moving an item the same way; two models giving the same answers): one
    decision of the judge. Drawing it once keeps a clinician from labelling the same
    decision twice and judge-vs-clinician agreement from counting it twice.
    """
    by_decision: dict[int, list[dict]] = defaultdict(list)
    for unit in units:
        by_decision[unit["judge_generation_id"]].append(unit)
    chosen = {id(rng.choice(group)) for _, group in sorted(by_decision.items())}
    return [unit for unit in units if id(unit) in chosen]


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
    units = verdict_units(db, audit_id)
    if not units:
        raise UserError("robustness run: no parsed judge verdicts to annotate yet (run "
                        "`paw robustness` first)")
    rng = random.Random(f"paw-robustness-set:{seed}")
    strata: dict[str, list[dict]] = defaultdict(list)
    for unit in one_per_decision(units, rng):
        strata[unit["stratum"]].append(unit)
    # Equal allocation over strata; within a stratum, the judge's verdict classes in turn.
    queues: dict[str, list[dict]] = {}
    for key in sorted(strata):
        by_class: dict[str, list[dict]] = defaultdict(list)
        for unit in strata[key]:
            by_class[unit["verdict_class"]].append(unit)
        for cls in sorted(by_class):
            rng.shuffle(by_class[cls])
        queues[key] = round_robin(by_class, len(strata[key]))
    chosen = round_robin(queues, size)
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
            code = case_code(rng)
            while code in used:
                code = case_code(rng)
            used.add(code)
            conn.execute(
                "INSERT INTO annotation_cases (set_id, code, variant_id, baseline_generation_id, "
                "perturbed_generation_id, stratum, ask_harm, ask_chain_registration) "
                "VALUES (?, ?, ?, ?, ?, ?, 0, 0)",
                [set_id, code, unit["variant_id"], unit["baseline_id"], unit["perturbed_id"],
                 unit["stratum"]])
        if raters is not None and coordinator is not None:
            name_raters(conn, set_id, name, raters, coordinator)
    return set_id
