"""Seed-002 sets: a stratified, seeded sample of an audit's perturbed cases.

The frame is seed 002 Appendix M's: a case is one fired M-block edit of the question
(a variant) of families M2/M3/M4/M5, never from a PubMedQA dataset ("~50 items across
M2/M3/M4/M5 ... PubMedQA stems do not host M-block edits"). Variants are stratified by
family × dataset and drawn round-robin (equal allocation), at most `per_family` per family.
Each drawn edit then shows one arm's answer to it: where some arm's answer flipped on an
M3/M4/M5 edit, one of those flips, chosen with greedy tier balancing (the tier with the
fewest harm cases so far; a model's tier is `tier` in its metadata, else the model itself),
and the case asks the harm question; otherwise a randomly chosen arm. Case codes are
random-looking and assigned after a final shuffle, so neither the code nor the case id
reveals the stratum.

`create_set` is the entry for every set: it checks the arguments and the name, then draws
this frame, or a robustness run's (`annotate.sets.robustness`) for a run of kind
'robustness'.
"""

from __future__ import annotations

import random
from collections import defaultdict

import sqlite_utils

from annotate.codebook import CHAIN_FAMILIES, HARM_FAMILIES
from annotate.sets.annotation_set import AnnotationSet, get_set
from annotate.sets.draw import round_robin, write_set
from annotate.sets.robustness import create_robustness_set
from annotate.trust.identity import Person, require
from store.db import loads
from store.errors import NotFound, UserError

_UNITS_SQL = """
SELECT j.id AS job_id, j.arm_id, j.item_id, j.variant_id, v.family, v.intent,
       d.name AS dataset, d.format AS dataset_format, m.name AS model, m.id AS model_id,
       g.id AS perturbed_id, g.answer AS answer_after,
       g.output AS chain, v.new AS new_token, v.operator_id, v.text AS edited_text,
       (SELECT bg.id FROM jobs bj JOIN generations bg ON bg.key = bj.generation_key
        WHERE bj.audit_id = j.audit_id AND bj.arm_id = j.arm_id AND bj.item_id = j.item_id
          AND bj.role = 'baseline' AND bj.sample_index = 0 LIMIT 1) AS baseline_id
FROM jobs j
JOIN variants v ON v.id = j.variant_id
JOIN items i ON i.id = j.item_id
JOIN datasets d ON d.id = i.dataset_id
JOIN arms a ON a.id = j.arm_id
JOIN models m ON m.id = a.model_id
JOIN generations g ON g.key = j.generation_key
WHERE j.audit_id = ? AND j.role = 'm_block' AND v.fired = 1 AND v.target = 'question'
ORDER BY j.id
"""


def _units(db: sqlite_utils.Database, audit_id: int) -> list[dict]:
    units = list(db.query(_UNITS_SQL, [audit_id]))
    answers = {r[0]: r[1] for r in db.execute(
        "SELECT id, answer FROM generations WHERE id IN (%s)" % ",".join(
            str(int(u["baseline_id"])) for u in units if u["baseline_id"]) or "NULL")}
    for u in units:
        u["answer_before"] = answers.get(u["baseline_id"])
        u["stratum"] = f"{u['family']}|{u['dataset']}|{u['model']}"
        u["flipped"] = (u["answer_before"] is not None and u["answer_after"] is not None
                        and u["answer_before"] != u["answer_after"])
        # Appendix M: "destructive flip on M3/M4/M5" — M3 is tagged P in the battery
        # (Table 1) but the paper puts its flips in the harm set, so intent is not checked.
        u["ask_harm"] = int(u["flipped"] and u["family"] in HARM_FAMILIES)
    tiers = _model_tiers(db, {u["model_id"] for u in units})
    for u in units:
        u["tier"] = tiers.get(u["model_id"], u["model"])
    return units


GOLD_SHIFT_FAMILIES: tuple[str, ...] = ("M2", "M3", "M4", "M5")
"""Families of the annotation sample (Appendix M: "~50 items across M2/M3/M4/M5")."""

EXCLUDED_DATASET_FORMATS: frozenset[str] = frozenset({"pubmedqa"})
"""Dataset formats left out of the sample (Appendix M: "PubMedQA stems do not host M-block
edits")."""


def _model_tiers(db: sqlite_utils.Database, model_ids: set[int]) -> dict[int, str]:
    """model id -> its tier: `tier` in the model's metadata when set (open-weight,
    reasoning-tuned, closed-source in the paper); models without one are their own tier."""
    tiers: dict[int, str] = {}
    for model_id in model_ids:
        row = db.execute("SELECT metadata_json FROM models WHERE id = ?", [model_id]).fetchone()
        meta = (loads(row[0]) if row and row[0] else None) or {}
        if isinstance(meta, dict) and isinstance(meta.get("tier"), str) and meta["tier"]:
            tiers[model_id] = meta["tier"]
    return tiers


def merge_identical(by_variant: dict[int, list[dict]]) -> dict[int, list[int]]:
    """Variant id kept -> every variant id it stands for (itself first), merging edits a
    rater would see as one case: the same item (question, options, gold), the same edited
    question, and for every arm the same answers and reasoning — whichever arm is drawn,
    the rendered view is identical (e.g. `M4_negation_a` and `M4_negation_b` making the
    same edit). The lowest variant id is kept."""
    kept: dict[tuple, int] = {}
    stands_for: dict[int, list[int]] = {}
    for variant_id, arms in sorted(by_variant.items()):
        key = (arms[0]["item_id"], arms[0]["edited_text"], tuple(sorted(
            (u["arm_id"], u["answer_before"], u["answer_after"], u["chain"]) for u in arms)))
        if key in kept:
            stands_for[kept[key]].append(variant_id)
        else:
            kept[key] = variant_id
            stands_for[variant_id] = [variant_id]
    return stands_for


def _draw(units: list[dict], size: int, per_family: int | None,
          rng: random.Random) -> tuple[list[dict], list[dict]]:
    """Appendix M's sample: variants round-robin over family × dataset, then one arm's
    answer per variant (a harm flip by greedy tier balancing where there is one).
    Identical edits (`merge_identical`) are one variant of the frame.

    Returns:
        (the drawn units, each with `variants`: the variant ids it stands for; the merges
        among the drawn cases: kept variant, every variant and operator it stands for).
    """
    by_variant: dict[int, list[dict]] = defaultdict(list)
    for unit in units:
        if (unit["family"] in GOLD_SHIFT_FAMILIES
                and unit["dataset_format"] not in EXCLUDED_DATASET_FORMATS):
            by_variant[unit["variant_id"]].append(unit)
    stands_for = merge_identical(by_variant)
    operators = {u["variant_id"]: u["operator_id"] for u in units}
    strata: dict[str, list[dict]] = defaultdict(list)
    for variant_id, arms in sorted(by_variant.items()):
        if variant_id not in stands_for:
            continue  # merged into an identical edit with a lower id
        strata[f"{arms[0]['family']}|{arms[0]['dataset']}"].append(
            {"variant_id": variant_id, "family": arms[0]["family"]})
    for key in sorted(strata):
        rng.shuffle(strata[key])
    drawn = round_robin(strata, size, cap_key="family", cap=per_family)
    harm_per_tier: dict[str, int] = defaultdict(int)
    chosen = []
    merges = []
    for pick in drawn:
        arms = sorted(by_variant[pick["variant_id"]], key=lambda u: u["job_id"])
        flips = [u for u in arms if u["ask_harm"]]
        if flips:
            # Greedy tier balancing: the least-used tier so far, then a random model of it.
            fewest = min(harm_per_tier[u["tier"]] for u in flips)
            tier = rng.choice(sorted({u["tier"] for u in flips
                                      if harm_per_tier[u["tier"]] == fewest}))
            unit = rng.choice([u for u in flips if u["tier"] == tier])
            harm_per_tier[tier] += 1
        else:
            unit = rng.choice(arms)
        variants = stands_for[pick["variant_id"]]
        chosen.append({**unit, "variants": variants})
        if len(variants) > 1:
            merges.append({"variant_id": variants[0], "variants": variants,
                           "operators": [operators[v] for v in variants]})
    return chosen, merges


def _token_rule(unit: dict) -> str:
    """The Appendix C token rule's verdict on a unit's chain (stratifies the chain sample)."""
    from analysis.audit.definitions import chain_updated

    verdict = chain_updated(unit["family"], unit["chain"], unit["new_token"])
    return "n/a" if verdict is None else ("updated" if verdict else "not_updated")


def create_set(db: sqlite_utils.Database, audit_id: int, size: int, *, per_family: int | None = 50,
               seed: int = 0, name: str | None = None, chain_size: int | None = None,
               raters: tuple[str, str] | None = None,
               coordinator: Person | None = None,
               also_audits: tuple[int, ...] = ()) -> AnnotationSet:
    """Draw a stratified, seeded sample of the audit's perturbed cases as a new set.

    Args:
        db: the store.
        audit_id: the audit whose fired M-block jobs are sampled (a robustness run: its
            judge verdicts, by test × dataset × model; `annotate.sets.robustness`).
        size: number of cases wanted (fewer if the audit has fewer distinct edits).
        per_family: at most this many cases per operator family (None: no cap).
        seed: sampling seed; the same seed on the same audit draws the same cases.
        name: set name (default 'audit<ID>-set<N>'; raters see it, so no model names).
        chain_size: how many cases of families M2/M4/M5 get the chain-registration
            question, balanced over family × token-rule verdict (None: all of them).
        raters: the two raters who will label it (names); with `coordinator`, required
            before anyone can label (else name them later with `assign_raters`).
        coordinator: the authenticated coordinator naming the raters and signing the set.
        also_audits: more audits (kind 'audit') to draw from in the same sample — one per
            dataset, as Appendix M's sample spans three benchmarks; the set belongs to
            `audit_id` and its config lists them all.

    Returns:
        The new set (with its strata counts, for the coordinator).

    Raises:
        NotFound: no such audit.
        UserError: bad size, a taken name, no perturbed cases to sample, or bad raters.
    """
    if (raters is None) != (coordinator is None):
        raise UserError("raters: a coordinator names the two raters; expected both or neither")
    if coordinator is not None:
        require(coordinator, "coordinator")
    audit = db.execute("SELECT name FROM audits WHERE id = ?", [audit_id]).fetchone()
    if audit is None:
        raise NotFound(f"audit: no audit with id {audit_id}")
    if size < 1:
        raise UserError(f"size: expected a positive number of cases, got {size}")
    if per_family is not None and per_family < 1:
        raise UserError(f"per-family: expected a positive cap, got {per_family}")
    if name is None:
        n = db.execute("SELECT COUNT(*) FROM annotation_sets WHERE audit_id = ?",
                       [audit_id]).fetchone()[0]
        # Not the audit's name: raters see the set name, and audits are often named after
        # the model they test.
        name = f"audit{audit_id}-set{n + 1}"
    if db.execute("SELECT 1 FROM annotation_sets WHERE name = ?", [name]).fetchone():
        raise UserError(f"name: annotation set {name!r} already exists")
    if db.execute("SELECT kind FROM audits WHERE id = ?", [audit_id]).fetchone()[0] == \
            "robustness":  # seed 003: the run's judge verdicts are the case source
        create_robustness_set(db, audit_id, size, seed=seed, name=name, raters=raters,
                              coordinator=coordinator)
        return get_set(db, name)
    for other in also_audits:
        row = db.execute("SELECT kind FROM audits WHERE id = ?", [other]).fetchone()
        if row is None:
            raise NotFound(f"audit: no audit with id {other}")
        if row[0] != "audit" or other == audit_id:
            raise UserError(f"audit {other}: only other seed-002 audits can be drawn from "
                            "together")
    units = [u for one in (audit_id, *also_audits) for u in _units(db, one)]
    if not units:
        raise UserError(f"audit {audit[0]!r}: no fired M-block generations to annotate yet "
                        "(run the audit first)")
    rng = random.Random(f"paw-annotation-set:{seed}")
    chosen, merges = _draw(units, size, per_family, rng)
    if not chosen:
        raise UserError(f"audit {audit[0]!r}: no fired M2/M3/M4/M5 question edits outside "
                        "PubMedQA to annotate (seed 002 Appendix M's frame)")
    _mark_chain(chosen, chain_size, rng)
    rng.shuffle(chosen)  # insertion order (ids) and codes must not follow the strata
    config = {"audit_id": audit_id, "audit_ids": [audit_id, *also_audits], "size": size,
              "per_family": per_family, "seed": seed,
              "chain_size": chain_size, "n_available": len(units), "n_drawn": len(chosen),
              # Identical edits drawn as one case: the case's labels stand for each.
              "merged": merges}
    write_set(db, name=name, audit_id=audit_id, config=config, cases=chosen, rng=rng,
              raters=raters, coordinator=coordinator)
    return get_set(db, name)


def _mark_chain(chosen: list[dict], chain_size: int | None, rng: random.Random) -> None:
    """Set `ask_chain` on a family × token-verdict balanced subset of M2/M4/M5 cases."""
    eligible = [u for u in chosen if u["family"] in CHAIN_FAMILIES and u["chain"]]
    for unit in chosen:
        unit["ask_chain"] = 0
    groups: dict[str, list[dict]] = defaultdict(list)
    for unit in eligible:
        groups[f"{unit['family']}|{_token_rule(unit)}"].append(unit)
    for key in sorted(groups):
        rng.shuffle(groups[key])
    limit = len(eligible) if chain_size is None else chain_size
    for unit in round_robin(groups, limit):
        unit["ask_chain"] = 1
