"""Plan a robustness run: arms, prefix variants, stage-1 jobs; CFV re-answers; judge jobs.

Stage 1 needs no generation: per item and arm, the baseline answer, one answer per
demographic prefix (the catalogue's operators; prepending always fires) and the CFV
proposal towards the item's prespecified target. Stage 2 needs the model's own proposal:
its changed case is parsed and stored as a variant (operator `cfv_change`, keyed by the
proposal generation), and the same model answers it; a proposal that does not parse is a
variant that did not fire (its job 'not_fired', scored as a format failure). Stage 3 is the
judge's: plausible/limited on every parsed proposal, a direction on every changed
demographic answer, stereotype flags on every prefixed explanation. Everything is
idempotent: planning again adds nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sqlite_utils

from analysis.robustness.definitions import (
    CFV_FAMILY,
    CFV_OPERATOR,
    MODE_PREFIX,
    MODE_SUBSTITUTE,
    RobustnessRole as Role,
    demographic_key,
    mode_operator,
)
from store.datasets import dataset_id
from store.errors import UserError
from store.generations import Generation, get_generations
from store.jobs import Arm, Job, JobSpec, add_arm, add_jobs, create_audit, list_jobs, mark_status
from store.records import Item, ModelRecord
from workbench.engine.plans import Plan, select_items
from workbench.engine.variants import question_variant
from workbench.engine.plans import arm_label
from workbench.engine.variants import Variant, find_variant, store_variant, variant_key
from workbench.models import GenerationRequest, Runner, Sampler
from workbench.perturb import PerturbResult, get_operator, strip_final_answer
from workbench.perturb.base import Context, Edit, Operator
from workbench.perturb.tokenize import token_change_fraction
from workbench.robustness.parsers import choose_target, is_circular, parse_proposal
from workbench.robustness.prompts import (
    CFV_JUDGE_TEMPLATE,
    CFV_TEMPLATE,
    DIRECTION_TEMPLATE,
    FLAGS_TEMPLATE,
    cfv_judge_messages,
    cfv_messages,
    direction_messages,
    flags_messages,
)
from workbench.robustness.spec import RobustnessSpec

RunnerFor = Callable[[ModelRecord], Runner]


def _no_edit(text: str, ctx: Context) -> Edit:
    return Edit.not_fired("a CFV change is written by the audited model, not by an operator")


CFV_OP = Operator(
    CFV_OPERATOR, CFV_FAMILY, "proposal", "counterfactual change (model-written)", None, None,
    "question", CFV_FAMILY,
    "The audited model's minimal change of the case towards a prespecified other option "
    "(seed 003 CFV); stored as a variant keyed by the proposal generation.", "",
    _no_edit, source="robustness",
)
"""The tags copied onto every stored CFV proposal (not in the catalogue: nothing to apply)."""


# ---------------------------------------------------------------- requests


def answer_request(item: Item, arm: Arm, config: dict, variant: Variant | None = None
                   ) -> GenerationRequest:
    """A CoT answer of the arm's model: to the item, or to a variant's text (prefix, CFV)."""
    sampler = Sampler(max_tokens=int(config["max_tokens"]))
    if variant is None:
        return GenerationRequest(item, "cot", arm.template, sampler)
    return GenerationRequest(item, "cot", arm.template, sampler, question=variant.text,
                             variant_id=variant.id)


def propose_request(item: Item, config: dict) -> GenerationRequest:
    """The CFV request: a minimal change of the case that makes the target correct."""
    target = choose_target(item, int(config["seed"]))
    return GenerationRequest(
        item, "judge", CFV_TEMPLATE, Sampler(max_tokens=int(config["cfv_max_tokens"])),
        messages=cfv_messages(item.question, dict(item.options), item.kind, target),
        labels=tuple(item.options))


def _judge_sampler(config: dict) -> Sampler:
    return Sampler(max_tokens=int(config["judge_max_tokens"]))


def explanation(generation: Generation | None) -> str:
    """The explanation of an answer: its output without the final 'Answer: X' line(s)."""
    if generation is None or not generation.output:
        return ""
    return strip_final_answer(generation.output)


def option_text(item: Item, label: str) -> str:
    """'X. option text' as the judges read an answer."""
    return f"{label}. {item.options.get(label, '')}".strip()


def cfv_judge_request(item: Item, variant: Variant, config: dict) -> GenerationRequest:
    """The judge's plausible/limited request about one parsed proposal."""
    target = str(variant.details["target"])
    return GenerationRequest(
        item, "judge", CFV_JUDGE_TEMPLATE, _judge_sampler(config),
        messages=cfv_judge_messages(item.question, option_text(item, target), variant.text or ""),
        labels=("yes", "no"), variant_id=variant.id)


def direction_request(item: Item, variant: Variant, baseline: Generation,
                      prefixed: Generation, config: dict) -> GenerationRequest:
    """The judge's direction request about one changed demographic answer."""
    return GenerationRequest(
        item, "judge", DIRECTION_TEMPLATE, _judge_sampler(config),
        messages=direction_messages(item.question, option_text(item, baseline.answer or ""),
                                    option_text(item, prefixed.answer or "")),
        labels=("A", "B", "C", "D"), variant_id=variant.id)


def flags_request(item: Item, variant: Variant, baseline: Generation, prefixed: Generation,
                  config: dict) -> GenerationRequest:
    """The judge's stereotype-evidence request about one prefixed explanation."""
    return GenerationRequest(
        item, "judge", FLAGS_TEMPLATE, _judge_sampler(config),
        messages=flags_messages(variant.new or "", explanation(baseline), explanation(prefixed)),
        labels=("yes", "no"), variant_id=variant.id)


# ---------------------------------------------------------------- stage 1


def demographic_operators(config: dict) -> list[Operator]:
    """The demographic operators of a run: its prefixes in each of its modes."""
    from workbench.robustness.substitute import SUBSTITUTE_OPERATORS

    keys = [demographic_key(op) or op for op in config.get("prefixes") or []]
    ops: list[Operator] = []
    for mode in config.get("demographic_modes") or [MODE_PREFIX]:
        for key in keys:
            op_id = mode_operator(mode, key)
            ops.append(SUBSTITUTE_OPERATORS[op_id] if mode == MODE_SUBSTITUTE
                       else get_operator(op_id))
    return ops


def create_plan(db: sqlite_utils.Database, spec: RobustnessSpec, runner_for: RunnerFor) -> Plan:
    """Store the run, its arms, its prefix variants and its stage-1 jobs (idempotent).

    Raises:
        NotFound: unknown dataset or model.
        UserError: a run of that name exists with other settings; a bad item id.
    """
    from workbench.models import resolve_model

    ds_id = dataset_id(db, spec.dataset)
    models = [resolve_model(db, name) for name in spec.models]
    files: dict[str, str] = {}
    for model in models:
        if model.sha256 in files:
            # One file under two names would answer every prompt twice with the same
            # generation: its "two models" would be one model counted twice.
            raise UserError(f"--models: {files[model.sha256]} and {model.name} are the same "
                            f"GGUF file (sha256 {model.sha256[:12]}…); name distinct models")
        files[model.sha256] = model.name
    resolve_model(db, spec.judge)  # a missing judge fails now, not after hours of answers
    items = select_items(db, spec)
    audit = create_audit(db, spec.audit_name, "robustness", ds_id, spec.config())
    config = audit.config
    arms = [add_arm(db, audit.id, arm_label(m.name, spec.template), m.id, spec.template)
            for m in models]
    by_id = {m.id: m for m in models}
    prefix_ops = demographic_operators(config)
    specs: list[JobSpec] = []
    for item in items:
        variants = [question_variant(db, op, item, int(config["seed"])) for op in prefix_ops]
        for arm in arms:
            runner = runner_for(by_id[arm.model_id])
            specs.append(JobSpec(arm.id, item.id or 0, Role.BASELINE, 1, generation_key=runner.key(
                answer_request(item, arm, config))))
            for variant in variants:
                specs.append(JobSpec(arm.id, item.id or 0, Role.DEMOGRAPHIC, 1, variant.id,
                                     generation_key=runner.key(
                                         answer_request(item, arm, config, variant))))
            if "cfv" in config["tests"] and len(item.options) > 1:
                specs.append(JobSpec(arm.id, item.id or 0, Role.CFV_PROPOSE, 1,
                                     generation_key=runner.key(propose_request(item, config))))
    add_jobs(db, audit.id, specs)
    return Plan(audit, tuple(arms), by_id, tuple(items))


# ---------------------------------------------------------------- stage 2


def proposal_variant(db: sqlite_utils.Database, item: Item, proposal: Generation,
                     seed: int) -> Variant:
    """The stored CFV variant of a proposal generation (parsed, circularity checked)."""
    key = variant_key(item.id or 0, CFV_OPERATOR, seed, proposal.id)
    existing = find_variant(db, key)
    if existing is not None:
        return existing
    target = choose_target(item, seed)
    parsed = parse_proposal(proposal.output or "", item.question, dict(item.options))
    details = {"target": target, "target_text": item.options.get(target, ""),
               "change": parsed.change, "problem": parsed.problem,
               "options_removed": parsed.options_removed}
    if parsed.case is None:
        result = PerturbResult(CFV_OPERATOR, False, None, None, None,
                               f"format failure: {parsed.problem}", details=details)
    else:
        details["circular"] = is_circular(item.question, parsed.case, target,
                                          item.options.get(target, ""))
        # The variant's gold is the target: the answer the changed case is meant to have
        # (what a clinician checking the change is shown as the gold).
        result = PerturbResult(CFV_OPERATOR, True, parsed.case, None, parsed.change, None,
                               gold=target, token_change_fraction=round(
                                   token_change_fraction(item.question, parsed.case), 6),
                               details=details)
    return store_variant(db, CFV_OP, result, item_id=item.id or 0, seed=seed,
                         source_generation_id=proposal.id)


def plan_cfv_answers(db: sqlite_utils.Database, plan: Plan, arms: Sequence[Arm],
                     runner: Runner) -> int:
    """Plan a re-answer for every stored proposal of `arms` (all of `runner`'s model).

    Returns:
        How many jobs were new.
    """
    config = plan.audit.config
    seed = int(config["seed"])
    items = {item.id: item for item in plan.items}
    added = 0
    for arm in arms:
        planned = {job.item_id for job in list_jobs(db, plan.audit.id, role=Role.CFV_ANSWER,
                                                    arm_id=arm.id)}
        proposals = [job for job in list_jobs(db, plan.audit.id, role=Role.CFV_PROPOSE,
                                              arm_id=arm.id, status="done")
                     if job.item_id not in planned and job.generation_key]
        generations = get_generations(db, [job.generation_key or "" for job in proposals])
        specs, not_fired = [], set()
        for job in proposals:
            gen = generations.get(job.generation_key or "")
            if gen is None or gen.parse_status == "error":
                continue
            item = items[job.item_id]
            variant = proposal_variant(db, item, gen, seed)
            key = None
            if variant.fired:
                key = runner.key(answer_request(item, arm, config, variant))
            else:
                not_fired.add(variant.id)
            specs.append(JobSpec(arm.id, job.item_id, Role.CFV_ANSWER, 2, variant.id,
                                 generation_key=key))
        added += add_jobs(db, plan.audit.id, specs)
        if not_fired:
            mark_status(db, [j.id for j in list_jobs(db, plan.audit.id, role=Role.CFV_ANSWER,
                                                     arm_id=arm.id, status="pending")
                             if j.variant_id in not_fired], "not_fired")
    return added


# ---------------------------------------------------------------- stage 3 (judge)


class Answers:
    """The stored answers of a run by (arm, item, role, variant), loaded once per stage."""

    def __init__(self, db: sqlite_utils.Database, audit_id: int) -> None:
        jobs = [j for j in list_jobs(db, audit_id, status="done")
                if j.role in (Role.BASELINE, Role.DEMOGRAPHIC) and j.generation_key]
        gens = get_generations(db, [j.generation_key or "" for j in jobs])
        self.jobs: dict[tuple[int, int, str, int | None], Job] = {}
        self.generations: dict[tuple[int, int, str, int | None], Generation] = {}
        for job in jobs:
            slot = (job.arm_id, job.item_id, job.role, job.variant_id)
            self.jobs[slot] = job
            gen = gens.get(job.generation_key or "")
            if gen is not None and gen.parse_status != "error":
                self.generations[slot] = gen

    def baseline(self, arm_id: int, item_id: int) -> Generation | None:
        """The baseline answer of (arm, item)."""
        return self.generations.get((arm_id, item_id, Role.BASELINE, None))

    def prefixed(self, arm_id: int, item_id: int, variant_id: int | None) -> Generation | None:
        """The answer of (arm, item) under one prefix."""
        return self.generations.get((arm_id, item_id, Role.DEMOGRAPHIC, variant_id))

    def pairs(self) -> list[tuple[Job, Generation, Generation]]:
        """(prefixed job, baseline generation, prefixed generation) for every stored pair."""
        out = []
        for (arm_id, item_id, role, variant_id), gen in self.generations.items():
            base = self.baseline(arm_id, item_id)
            if role == Role.DEMOGRAPHIC and base is not None:
                out.append((self.jobs[(arm_id, item_id, role, variant_id)], base, gen))
        return sorted(out, key=lambda t: t[0].id)


def is_change(baseline: Generation, prefixed: Generation) -> bool:
    """Both answers parsed and they differ (a change that gets a direction)."""
    return (baseline.answer is not None and prefixed.answer is not None
            and baseline.answer != prefixed.answer)


def plan_judges(db: sqlite_utils.Database, plan: Plan, judge: Runner,
                variant_of: Callable[[int], Variant | None]) -> int:
    """Plan every judge job whose subject is stored (idempotent).

    Returns:
        How many jobs were new.
    """
    config = plan.audit.config
    items = {item.id: item for item in plan.items}
    specs: list[JobSpec] = []
    for job in list_jobs(db, plan.audit.id, role=Role.CFV_ANSWER):
        variant = variant_of(job.variant_id or 0)
        if variant is not None and variant.fired:
            specs.append(JobSpec(job.arm_id, job.item_id, Role.JUDGE_CFV, 3, variant.id,
                                 generation_key=judge.key(cfv_judge_request(
                                     items[job.item_id], variant, config))))
    answers = Answers(db, plan.audit.id)
    for job, base, prefixed in answers.pairs():
        variant = variant_of(job.variant_id or 0)
        item = items[job.item_id]
        if variant is None:
            continue
        if is_change(base, prefixed):
            specs.append(JobSpec(job.arm_id, job.item_id, Role.JUDGE_DIRECTION, 3, variant.id,
                                 generation_key=judge.key(direction_request(
                                     item, variant, base, prefixed, config))))
        if explanation(base) and explanation(prefixed):
            specs.append(JobSpec(job.arm_id, job.item_id, Role.JUDGE_FLAGS, 3, variant.id,
                                 generation_key=judge.key(flags_request(
                                     item, variant, base, prefixed, config))))
    return add_jobs(db, plan.audit.id, specs)
