"""Seed-003 sets: a robustness run's automated decisions, drawn stratified and seeded.

A unit is one thing the pipeline decided: a CFV attempt with a changed case (test 'cfv':
the judge's plausible and limited, the circularity rule, and whether the re-answer reached
the target or stayed — five decisions, one clinician field each), a changed answer's
direction (test 'direction') or a prefixed explanation's stereotype flags (test 'flags').
Every unit belongs to one (model, item, prefix) or one CFV attempt; units whose judge
prompt was identical share one judge generation and are one decision, drawn at most once
(`one_per_decision`). Units are stratified by test × dataset × model (the stratum
'test|dataset|model', whose first part also picks the case's fields:
`codebook.ROBUSTNESS_TEST_FIELDS`), drawn round-robin with equal allocation, and within a
stratum balanced over the automated verdict classes (so both positives and negatives are
checked); every clinically dangerous flag comes first, up to `DANGEROUS_SHARE` of the set.
Unparsed direction and flags verdicts are not sampled: there is nothing to confirm. A CFV
attempt that reached its target while the judge's reply did not parse (routine with a
small judge) is drawn as its own verdict class, 'unjudged': the clinicians still answer its
five questions, and the judge's plausible / limited are None there (not compared). The
set's config counts both (`unparsed`, `n_unjudged_drawn`); `paw annotate create` prints
them.

What the rater sees is the ordinary blinded case view: for CFV, the original and the
changed case with the target marked as the gold of the changed case (never the model's
re-answer); for a direction, the two answers; for flags, the model's reasoning under the
prefix. Blinding is unchanged. The automated decisions are compared with the clinicians in
`annotate.robustness.validation`.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict

import sqlite_utils

from analysis.robustness.definitions import DIRECTIONS, UNPARSED, RobustnessRole
from annotate.codebook import FIELDS
from annotate.sets.draw import round_robin, write_set
from annotate.trust.identity import Person
from store.errors import UserError

TEST_OF_ROLE: dict[str, str] = {RobustnessRole.JUDGE_CFV: "cfv",
                                RobustnessRole.JUDGE_DIRECTION: "direction",
                                RobustnessRole.JUDGE_FLAGS: "flags"}

SEVERITY_ORDER: tuple[str, ...] = FIELDS["stereotype"].categories
"""none < clinically misleading < socially inappropriate < clinically dangerous (the
codebook's key order, the paper's listing order): a flagged explanation is compared by its
worst flag."""

DANGEROUS_SHARE = 0.5
"""Every explanation the judge flagged 'clinically dangerous' is drawn first, up to this
share of the set's size (rounded up): the paper routes "potentially serious stereotype
flags" to clinicians (§5.5, §7), and the cap keeps room for the balanced sample."""


def _yes_no(value: bool | None) -> str | None:
    return None if value is None else ("yes" if value else "no")


def cfv_automated(plausible: bool | None, limited: bool | None, circular: bool,
                  answer: str | None, target: str, gold: str) -> dict[str, str | None]:
    """The automated decisions on one CFV attempt, in the clinician fields' values.

    cfv_plausible / cfv_limited: the judge's two lines (None when its verdict did not
    parse); cfv_circular: the rule; cfv_target_correct: the model's re-answer is the
    target; cfv_same_direction: the re-answer is the original case's gold (None for both
    when the re-answer did not parse). The clinicians answer the same five questions.
    """
    reanswered = answer is not None
    return {"cfv_plausible": _yes_no(plausible), "cfv_limited": _yes_no(limited),
            "cfv_circular": _yes_no(circular),
            "cfv_target_correct": _yes_no(answer == target) if reanswered else None,
            "cfv_same_direction": _yes_no(answer == gold) if reanswered else None}


def worst_severity(evidence: dict) -> str:
    """'none', or the worst severity among a flags verdict's flags (`SEVERITY_ORDER`)."""
    severities = [f.get("severity") for f in evidence.get("flags") or []]
    ranked = [SEVERITY_ORDER.index(s) for s in severities if s in SEVERITY_ORDER]
    return SEVERITY_ORDER[max(ranked)] if ranked else "none"


def _cfv_units(data, labels: dict, dataset: str) -> list[dict]:
    """One unit per CFV attempt with a changed case and a stored re-answer (or none needed)."""
    from analysis.robustness.data import cfv_attempts

    attempts = {(r.arm_id, r.item_id): r for r in cfv_attempts(data).itertuples()}
    judged = {r.variant_id: r for r in data.verdicts.itertuples()
              if r.role == RobustnessRole.JUDGE_CFV}
    gold = dict(zip(data.items["item_id"], data.items["gold"], strict=True))
    units = []
    for r in data.cfv.itertuples():
        attempt = attempts.get((r.arm_id, r.item_id))
        if not r.fired or attempt is None or attempt.state == "incomplete":
            continue  # no changed case to show, or its re-answer is not stored yet
        verdict = judged.get(r.variant_id)
        evidence = verdict.evidence if verdict is not None else {}
        # A missing outcome is NaN in the frame (truthy, unorderable): an attempt that moved
        # to its target without a parsed judge verdict is 'unjudged', its own class.
        outcome = attempt.outcome if isinstance(attempt.outcome, str) else None
        answer = r.answer if isinstance(r.answer, str) else None
        automated = cfv_automated(
            None if verdict is None or verdict.verdict == UNPARSED else evidence.get("plausible"),
            None if verdict is None or verdict.verdict == UNPARSED else evidence.get("limited"),
            bool(r.circular), answer, str(r.target), str(gold[r.item_id]))
        units.append({
            "test": "cfv", "model": labels[r.arm_id], "arm_id": int(r.arm_id),
            "item_id": int(r.item_id), "stratum": f"cfv|{dataset}|{labels[r.arm_id]}",
            "verdict_class": outcome or str(attempt.state), "variant_id": int(r.variant_id),
            "baseline_id": None, "perturbed_id": int(r.proposal_id), "automated": automated,
            "outcome": outcome, "categories": [], "dangerous": False,
            # Identical edits of two models ask the judge once: one decision.
            "decision": (int(verdict.judge_generation_id) if verdict is not None
                         else -int(r.variant_id)),
        })
    return units


def verdict_units(db: sqlite_utils.Database, audit_id: int,
                  unparsed: dict[str, int] | None = None) -> list[dict]:
    """Every unit of a robustness run that a clinician can check.

    CFV: one per attempt with a parsed changed case (its five automated decisions,
    `cfv_automated`); direction: one per changed answer with a parsed direction; flags: one
    per prefixed explanation with a parsed flags verdict.

    Keys: test, model, arm_id, item_id, stratum, verdict_class (the sampling class: CFV
    outcome; direction label; flags 'none' / 'flagged' / 'dangerous'), variant_id,
    baseline_id, perturbed_id, automated (clinician field -> the automated value), outcome
    (CFV), categories (flags: the judge's categories), dangerous, decision (the judge
    generation: units sharing one are one decision).

    `unparsed`, when given, receives per test how many verdicts did not parse: 'cfv' the
    attempts that reached their target without a parsed judge verdict (units of class
    'unjudged', drawn like any class, their plausible / limited decisions None), 'direction'
    and 'flags' the verdicts left out (nothing to confirm).
    """
    from analysis.robustness.data import load_robustness

    data = load_robustness(db, audit_id)
    labels = dict(zip(data.arms["arm_id"], data.arms["label"], strict=True))
    dataset = data.audit["dataset"]
    base = {(r.arm_id, r.item_id): r.generation_id for r in data.answers.itertuples()
            if r.role == RobustnessRole.BASELINE and r.status == "done"}
    units = _cfv_units(data, labels, dataset)
    counts = {"cfv": sum(1 for u in units if u["verdict_class"] == "unjudged"),
              "direction": 0, "flags": 0}
    for r in data.verdicts.itertuples():
        test = TEST_OF_ROLE[r.role]
        if test == "cfv":
            continue
        if r.verdict == UNPARSED or (test == "direction" and r.verdict not in DIRECTIONS):
            counts[test] += 1
            continue
        if test == "direction":
            automated, cls, dangerous = {"direction": r.verdict}, r.verdict, False
        else:
            worst = worst_severity(r.evidence)
            dangerous = worst == "clinically_dangerous"
            automated = {"stereotype": worst}
            cls = "none" if worst == "none" else "dangerous" if dangerous else "flagged"
        units.append({
            "test": test, "model": labels[r.arm_id], "arm_id": int(r.arm_id),
            "item_id": int(r.item_id), "stratum": f"{test}|{dataset}|{labels[r.arm_id]}",
            "verdict_class": cls, "variant_id": int(r.variant_id),
            "baseline_id": base.get((r.arm_id, r.item_id)),
            "perturbed_id": int(r.subject_generation_id), "automated": automated,
            "outcome": None, "dangerous": dangerous,
            "categories": sorted({f.get("category") for f in r.evidence.get("flags") or []}),
            "decision": int(r.judge_generation_id),
        })
    if unparsed is not None:
        unparsed.update(counts)
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
        by_decision[unit["decision"]].append(unit)
    chosen = {id(rng.choice(group)) for _, group in sorted(by_decision.items())}
    return [unit for unit in units if id(unit) in chosen]


def create_robustness_set(db: sqlite_utils.Database, audit_id: int, size: int, *, seed: int,
                          name: str, raters: tuple[str, str] | None,
                          coordinator: Person | None) -> int:
    """Draw a stratified, seeded sample of a robustness run's judge verdicts as a new set.

    Called by `annotate.sets.audit.create_set` for runs of kind 'robustness' (it checks the
    arguments and the name). The same seed on the same run draws the same cases.

    Returns:
        The new set's id.

    Raises:
        UserError: the run has no parsed judge verdict yet.
    """
    unparsed: dict[str, int] = {}
    units = verdict_units(db, audit_id, unparsed)
    if not units:
        raise UserError("robustness run: nothing to annotate yet: no changed CFV case and no "
                        "parsed judge verdict (run `paw robustness` first)")
    rng = random.Random(f"paw-robustness-set:{seed}")
    candidates = one_per_decision(units, rng)
    # The judge's clinically dangerous flags first (all of them, up to the cap), seeded.
    dangerous = sorted((u for u in candidates if u["dangerous"]),
                       key=lambda u: (u["stratum"], u["perturbed_id"]))
    rng.shuffle(dangerous)
    cap = min(size, math.ceil(size * DANGEROUS_SHARE))
    chosen = dangerous[:cap]
    taken = {id(u) for u in chosen}
    strata: dict[str, list[dict]] = defaultdict(list)
    for unit in candidates:
        if id(unit) not in taken:
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
    chosen += round_robin(queues, size - len(chosen))
    rng.shuffle(chosen)  # codes and ids must not follow the strata
    config = {"audit_id": audit_id, "size": size, "seed": seed, "source": "robustness",
              "n_available": len(units), "n_decisions": len(candidates),
              "n_drawn": len(chosen), "n_dangerous_available": len(dangerous),
              "n_dangerous_drawn": sum(1 for u in chosen if u["dangerous"]),
              "dangerous_cap": cap,
              # Verdicts that did not parse: CFV drawn as class 'unjudged', others left out.
              "unparsed": unparsed,
              "n_unjudged_drawn": sum(1 for u in chosen if u["verdict_class"] == "unjudged")}
    set_id = write_set(db, name=name, audit_id=audit_id, config=config, cases=chosen, rng=rng,
                       raters=raters, coordinator=coordinator)
    return set_id
