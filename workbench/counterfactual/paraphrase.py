"""The token-adjusted paraphrase (seed 000 §3.2): an LLM paraphrases, PAW measures and retries.

§3.2: "(1) calculate the fraction of tokens changed by the target perturbation, and (2)
instruct an LLM to paraphrase the original prompt with meaning-preserving changes, but
changing only a similar fraction of tokens"; App. B: "we paraphrase a randomly selected
sentence in each query … matching the token change percentage".

For each (model, item, targeted edit):

1. the target fraction f* is the targeted edit's token-change fraction measured with the
   **audited model's own tokenizer** (edit distance / longer length, as everywhere in PAW);
2. attempt a (seed a, a = 0 … max_attempts − 1): one sentence of the original prompt is
   chosen — never its final question — whose length makes a rewrite most likely to change
   f*·N tokens (a rewrite changes a share ρ of a sentence's tokens: 0.3 at first, then the
   median observed), and the paraphraser model is asked to rewrite it changing about as
   many words; the output is cleaned, checked (numbers, negations, gendered terms, names
   and length kept) and the whole prompt's fraction is measured with the same tokenizer;
3. the first attempt within ± tolerance of f* is the paraphrase; if none is, the
   deterministic table paraphraser is the fallback (recorded as such, `source`
   'fallback'); if it keeps no rewording either, the closest valid LLM attempt is kept
   ('llm_closest', outside tolerance); with nothing valid the baseline is not fired.

Every attempt is an ordinary generation (mode 'judge', free chat messages), content-
addressed like any other: the attempts of a round run as one batch on the runner, a re-run
finds them stored and reaches the same decisions without generating, and once the variant
is stored it is not looked at again. The variant keeps target and achieved fractions,
every attempt (key, sentence, fraction, verdict) and the fallback's outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from analysis.counterfactual.definitions import StudyRole
from store.jobs import Arm, JobSpec, add_jobs, list_jobs, mark_status
from store.records import ModelRecord
from workbench.engine import StudyContext
from workbench.engine.events import BlockProgress, RunnerProgress, StageStarted
from workbench.engine.variants import Variant, find_variant, store_variant, variant_key
from workbench.counterfactual.attempts import (
    PROMPT_ID,
    SPAN_REQUEST,
    Task,
    fit_requests,
    measure,
    measure_fit,
    next_request,
    paraphrase_messages,
    sentence_spans,
    split_question,
)
from workbench.counterfactual.checks import check_rewrite, clean_output
from workbench.counterfactual.plan import Unit, fired_units, unit_jobs
from workbench.counterfactual.spec import PARAPHRASE_OPERATOR
from workbench.models import GenerationRequest, Runner
from workbench.perturb import PerturbResult, seeded_rng
from workbench.perturb.tokenize import CallableTokenizer, Tokenizer, token_change_fraction


# ---------------------------------------------------------------- planning stage 2


RunBatch = Callable[[list[GenerationRequest]], list[tuple[str, str | None]]]
"""Runs requests on the paraphraser; returns (key, output) per request in order (output
None when the generation failed)."""


def paraphrase_key_extra(unit: Unit, model: ModelRecord, paraphraser: str,
                         config: dict) -> list[Any]:
    """What a paraphrase variant depends on besides (item, operator, seed); the defaults
    (token-fraction denominator 'longer', one-sentence span) add nothing, so paraphrases
    stored before those settings existed are found."""
    extra = ["paraphrase", unit.target.key, model.sha256, paraphraser,
             float(config["tolerance"]), int(config["max_attempts"]), PROMPT_ID]
    denominator = config.get("token_denominator", "longer")
    if denominator != "longer":
        extra.append(f"denominator:{denominator}")
    span = config.get("paraphrase_span", "sentence")
    if span != "sentence":
        extra.append(f"span:{span}:{SPAN_REQUEST}")
    return extra


def run_tasks(tasks: Sequence[Task], run_batch: RunBatch | None, tokenizer: Tokenizer,
              tolerance: float, max_attempts: int,
              should_stop: Callable[[], bool] | None = None) -> bool:
    """Measure-and-retry rounds: attempt a of every open task runs as one batch.

    Returns:
        False when stopped before the rounds finished.
    """
    if run_batch is None:
        return True
    for attempt in range(max_attempts):
        open_tasks = [t for t in tasks if t.accepted is None]
        if not open_tasks:
            break
        if should_stop is not None and should_stop():
            return False
        # (task, its requests, the sentences they rewrite: one index, or a fit's run of them)
        planned: list[tuple[Task, list[GenerationRequest], int | tuple[int, ...]]] = []
        for task in open_tasks:
            if task.span == "fit":
                planned.append((task, *fit_requests(task, attempt)))
            else:
                request, index = next_request(task, attempt)
                planned.append((task, [request], index))
        outputs = iter(run_batch([r for _, requests, _ in planned for r in requests]))
        for task, requests, where in planned:
            answers = [next(outputs) for _ in requests]
            if isinstance(where, tuple):  # a 'fit' attempt
                measure_fit(task, attempt, where, [k for k, _ in answers],
                            [o for _, o in answers], tokenizer, tolerance)
            else:
                measure(task, attempt, where, *answers[0], tokenizer, tolerance)
    return True


def finish(task: Task, tokenizer: Tokenizer, tolerance: float,
           paraphraser: str) -> PerturbResult:
    """The paraphrase of a task after its attempts: accepted LLM, fallback, or closest."""
    from workbench.perturb.paraphrase import TableParaphraser
    from workbench.perturb.paraphrase_rules import EXTENDED_TABLE

    details: dict[str, Any] = {
        "reference_variant_id": task.unit.target.id,
        "target_operator": task.unit.target.operator_id, "paraphraser": paraphraser,
        "target_fraction": round(task.target, 6), "tolerance": tolerance,
        "token_denominator": task.denominator,
        **({} if task.span == "sentence" else {"span": task.span}),
        "attempts": [{k: v for k, v in a.items() if k != "text"} for a in task.attempts],
    }
    chosen: dict[str, Any] | None = task.accepted
    source = "llm"
    if chosen is None:
        # The table rewords the body only: the final question is what the model is asked.
        body, question = split_question(task.text)
        scale = task.tokens / max(1, len(tokenizer.tokenize(body)))
        fit = task.span == "fit"  # several sentences: the extended table, the closest wins
        table = (TableParaphraser(EXTENDED_TABLE) if fit else TableParaphraser()).paraphrase(
            body, target_fraction=min(1.0, task.target * scale), tolerance=tolerance * scale,
            tokenizer=tokenizer, rng=task.rng)
        valid = [a for a in task.attempts if "fraction" in a]
        fallback: dict[str, Any] = {"edits": table.edits, "reason": table.reason}
        if table.text is not None:
            text = table.text + question
            fraction = token_change_fraction(task.text, text, tokenizer, task.denominator)
            fallback.update(fraction=round(fraction, 6),
                            within_tolerance=abs(fraction - task.target) <= tolerance)
            chosen, source = {"text": text, "fraction": fraction}, "fallback"
            details["edits"] = table.edits
            closest = min(valid, key=lambda a: abs(a["fraction"] - task.target), default=None)
            if fit and closest is not None and not fallback["within_tolerance"] and abs(
                    closest["fraction"] - task.target) < abs(fraction - task.target):
                chosen, source = closest, "llm_closest"  # the table fell further short
                del details["edits"]
        elif valid:
            chosen = min(valid, key=lambda a: abs(a["fraction"] - task.target))
            source = "llm_closest"
        details["fallback"] = fallback
    if chosen is None:
        details.update(source="none", within_tolerance=False)
        why = details["fallback"]["reason"]
        attempts = "no LLM attempt" if not task.attempts else "every LLM attempt was rejected"
        return PerturbResult(PARAPHRASE_OPERATOR, False, None, None, None,
                             f"no valid paraphrase: {attempts} and the table paraphraser "
                             f"failed ({why})", details=details)
    fraction = float(chosen["fraction"])
    details.update(source=source, achieved_fraction=round(fraction, 6),
                   within_tolerance=abs(fraction - task.target) <= tolerance)
    if "attempt" in chosen:
        details["accepted_attempt"] = chosen["attempt"]
    unit = task.unit
    return PerturbResult(PARAPHRASE_OPERATOR, True, chosen["text"], None, None, None,
                         options=None if unit.options is None else dict(unit.options),
                         gold=unit.gold, token_change_fraction=round(fraction, 6),
                         details=details)


def runner_batch(runner: Runner, emit: Callable[[Any], None],
                 should_stop: Callable[[], bool] | None,
                 tally: dict[str, Any] | None = None) -> RunBatch:
    """A `RunBatch` on `runner`: runs the requests (stored ones are skipped) and reads back
    their outputs; runner events go to `emit` as the 'paraphrasing' stage, and the number
    of generations made is added to `tally["paraphrase_generated"]`."""
    from store.generations import get_generations

    def run(requests: list[GenerationRequest]) -> list[tuple[str, str | None]]:
        keys = [runner.key(request) for request in requests]
        summary = runner.run(requests, on_event=lambda e: emit(
            RunnerProgress("paraphrasing", runner.model.name, e)), should_stop=should_stop)
        if tally is not None:
            tally["paraphrase_generated"] = tally.get("paraphrase_generated", 0) \
                + summary.generated
        stored = get_generations(runner.db, keys)
        return [(key, stored[key].output if key in stored
                 and stored[key].parse_status != "error" else None) for key in keys]

    return run


def plan_paraphrases(ctx: StudyContext, arms: Sequence[Arm], runner: Runner) -> int:
    """Stage 2's planner: paraphrase each fired unit for each arm's model, then add its jobs.

    Args:
        ctx: the study.
        arms: the arms of one model (`runner`'s).
        runner: that model's runner (its tokenizer sizes every paraphrase).

    Returns:
        How many paraphrase jobs were new.
    """
    config = ctx.config
    if "paraphrase_adjusted" not in config["baselines"]:
        return 0
    from workbench.models import resolve_model
    from workbench.perturb import get_operator

    op = get_operator(PARAPHRASE_OPERATOR)
    seed, tolerance = int(config["seed"]), float(config["tolerance"])
    model = runner.model
    tokenizer = CallableTokenizer(lambda text: runner.backend.tokenize(text, special=False),
                                  name=model.name)
    name = str(config["paraphraser"])
    llm = None if name == "table" else resolve_model(ctx.db, name)
    paraphraser = "table" if llm is None else f"llm:{llm.name}"
    identity = "table" if llm is None else llm.sha256
    added = 0
    for arm, units in fired_units(ctx, arms).items():
        variants: dict[int, Variant] = {}
        tasks: list[Task] = []
        for unit in units:
            extra = paraphrase_key_extra(unit, model, identity, config)
            key = variant_key(unit.item.id or 0, op.id, seed, None, extra)
            stored = find_variant(ctx.db, key)
            if stored is not None:
                variants[unit.target.id] = stored
                continue
            rng = seeded_rng(seed, unit.item.source_id, f"{op.id}:{unit.target.operator_id}")
            denominator = str(config.get("token_denominator", "longer"))
            level = unit.target.details.get("dose_level")  # dose-response: the level itself
            target = float(level) if level is not None else token_change_fraction(
                unit.reference, unit.target.text or "", tokenizer, denominator)
            tasks.append(Task(unit, key, unit.reference, len(tokenizer.tokenize(unit.reference)),
                              target, sentence_spans(unit.reference, tokenizer), rng,
                              denominator, span=str(config.get("paraphrase_span", "sentence"))))
        if tasks:
            ctx.emit(StageStarted("paraphrasing", model.name if llm is None else llm.name,
                                  len(tasks) * (0 if llm is None else 1)))
            run_batch = None if llm is None else runner_batch(
                ctx.engine.runner(llm), ctx.emit, ctx.should_stop, ctx.cache)
            if not run_tasks(tasks, run_batch, tokenizer, tolerance,
                             int(config["max_attempts"]), ctx.should_stop):
                return added
            for done, task in enumerate(tasks, start=1):
                if any(a["status"] == "generation failed" for a in task.attempts):
                    continue  # a backend error is retried next run, not settled by a fallback
                result = finish(task, tokenizer, tolerance, paraphraser)
                extra = paraphrase_key_extra(task.unit, model, identity, config)
                variants[task.unit.target.id] = store_variant(
                    ctx.db, op, result, item_id=task.unit.item.id or 0, seed=seed,
                    extra_details={"tokenizer": model.name}, key_extra=extra)
                ctx.emit(BlockProgress("paraphrasing", done, len(tasks)))
        specs: list[JobSpec] = []
        for unit in units:
            variant = variants.get(unit.target.id)
            if variant is None:
                continue
            if variant.fired:
                specs += unit_jobs(ctx.arm(arm), unit, StudyRole.PARAPHRASE, variant, runner,
                                   config)
            else:  # recorded, so the report can count the unit out of this baseline
                specs.append(JobSpec(arm, unit.item.id or 0, StudyRole.PARAPHRASE, 2, variant.id,
                                     0, int(config["seeds"][0]), None))
        added += add_jobs(ctx.db, ctx.audit.id, specs)
        missing = {v.id for v in variants.values() if not v.fired}
        stale = [job.id for job in list_jobs(ctx.db, ctx.audit.id, status="pending",
                                             role=StudyRole.PARAPHRASE, arm_id=arm)
                 if job.variant_id in missing]
        if stale:
            mark_status(ctx.db, stale, "not_fired")
    return added


__all__ = ["PROMPT_ID", "Task", "check_rewrite", "clean_output", "finish", "measure",
           "paraphrase_messages", "plan_paraphrases", "run_tasks", "sentence_spans"]
