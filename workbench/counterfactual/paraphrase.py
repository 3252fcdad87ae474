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
   'fallback'); if it finds no rewording either, the closest valid LLM attempt is kept
   ('llm_closest', outside tolerance); with nothing valid the baseline is not fired.

Every attempt is an ordinary generation (mode 'judge', free chat messages), content-
addressed like any other: the attempts of a round run as one batch on the runner, a re-run
finds them stored and reaches the same decisions without generating, and once the variant
is stored it is not looked at again. The variant keeps target and achieved fractions,
every attempt (key, sentence, fraction, verdict) and the fallback's outcome.
"""

from __future__ import annotations

import random
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from store.jobs import Arm, JobSpec, add_jobs, list_jobs, mark_status
from store.records import ModelRecord
from workbench.audit.engine import StudyContext
from workbench.audit.events import BlockProgress, RunnerProgress, StageStarted
from workbench.audit.variants import Variant, find_variant, store_variant, variant_key
from workbench.counterfactual.checks import check_rewrite, clean_output, words
from workbench.counterfactual.plan import Unit, fired_units, unit_jobs
from workbench.counterfactual.spec import PARAPHRASE_OPERATOR
from workbench.models import GenerationRequest, Runner, Sampler
from workbench.perturb import PerturbResult, seeded_rng
from workbench.perturb.segments import split_sentences
from workbench.perturb.tokenize import CallableTokenizer, Tokenizer, token_change_fraction

PROMPT_ID = "paw_paraphrase@1"
"""Name and version of the paraphrase prompt (part of every attempt's generation key)."""

SYSTEM = (
    "You paraphrase sentences from clinical cases. Use different words with the same "
    "meaning. Keep all numbers, and keep he/she as they are. Reply with the new sentence only."
)
USER = "Paraphrase, changing about {words} word{s}: {sentence}"
SHOTS: tuple[tuple[str, str], ...] = (
    ("He has a history of asthma.", "He has previously been diagnosed with asthma."),
    ("She takes 20 mg of omeprazole every day.", "She uses 20 mg of omeprazole daily."),
    ("His mother reports that he has been coughing for 2 weeks.",
     "His mother says that he has had a cough for 2 weeks."),
)
"""Worked examples shown before the sentence (few-shot). On SmolLM2-135M, 24 rewrites of six
demo sentences passed the meaning checks 9–10 times with examples and 2 times without."""

PARAPHRASE_TEMPERATURE = 0.7
"""Sampling temperature of the attempts; attempt a uses seed a, so retries differ."""

INITIAL_CHANGE_RATE = 0.3
"""Prior share of a sentence's tokens that one rewrite changes (updated from attempts)."""

MIN_SENTENCE_TOKENS = 4
"""Shorter sentences are not chosen (too little to reword)."""

def paraphrase_messages(sentence: str, words: int) -> tuple[dict[str, str], ...]:
    """The chat messages of one attempt: rewrite `sentence` changing about `words` words."""
    messages = [{"role": "system", "content": SYSTEM}]
    for before, after in SHOTS:
        messages += [{"role": "user", "content": USER.format(words=3, s="s", sentence=before)},
                     {"role": "assistant", "content": after}]
    messages.append({"role": "user", "content": USER.format(
        words=words, s="" if words == 1 else "s", sentence=sentence.strip())})
    return tuple(messages)


# ---------------------------------------------------------------- one paraphrase task


@dataclass
class Task:
    """The measure-and-retry state of one (model, item, targeted edit).

    Attributes:
        unit: the comparison unit.
        key: the paraphrase variant's key.
        text: the original prompt's question text.
        tokens: its length in the audited model's tokens (N).
        target: the target fraction f*.
        spans: candidate sentences as (start, end, tokens).
        denominator: the token-change fraction's denominator ('longer' or 'original').
        attempts: what each attempt did (stored in the variant's details).
    """

    unit: Unit
    key: str
    text: str
    tokens: int
    target: float
    spans: list[tuple[int, int, int]]
    rng: random.Random
    denominator: str = "longer"
    attempts: list[dict[str, Any]] = field(default_factory=list)
    accepted: dict[str, Any] | None = None
    tries: Counter = field(default_factory=Counter)


def split_question(text: str) -> tuple[str, str]:
    """(body, final question with its leading space) when the text ends with a question
    sentence after at least one other sentence; else (text, '')."""
    sentences, seps = split_sentences(text)
    if len(sentences) > 1 and sentences[-1].rstrip().endswith("?"):
        cut = len(text) - len(sentences[-1]) - len(seps[-1])
        return text[:cut], text[cut:]
    return text, ""


def sentence_spans(text: str, tokenizer: Tokenizer) -> list[tuple[int, int, int]]:
    """Sentences a paraphrase may rewrite, as (start, end, token count): not the final
    question, none shorter than `MIN_SENTENCE_TOKENS`; the whole text if none qualifies."""
    sentences, seps = split_sentences(text)
    spans, offset = [], 0
    for index, sentence in enumerate(sentences):
        start = offset + (len(sentence) - len(sentence.lstrip()))
        end = offset + len(sentence.rstrip())
        offset += len(sentence) + (len(seps[index]) if index < len(seps) else 0)
        body = text[start:end]
        final_question = index == len(sentences) - 1 and body.endswith("?") and len(sentences) > 1
        size = len(tokenizer.tokenize(body))
        if body and not final_question and size >= MIN_SENTENCE_TOKENS:
            spans.append((start, end, size))
    if not spans:
        stripped = text.strip()
        start = text.find(stripped)
        spans = [(start, start + len(stripped), len(tokenizer.tokenize(stripped)))]
    return spans


def next_request(task: Task, attempt: int) -> tuple[GenerationRequest, int]:
    """The request of `attempt` and the index of the sentence it rewrites."""
    rates = [a["change_rate"] for a in task.attempts if a.get("change_rate")]
    rate = statistics.median(rates) if rates else INITIAL_CHANGE_RATE
    wanted = task.target * task.tokens
    desired = wanted / rate
    jitter = {i: task.rng.random() for i in range(len(task.spans))}
    index = min(range(len(task.spans)),
                key=lambda i: (task.tries[i], abs(task.spans[i][2] - desired), jitter[i]))
    task.tries[index] += 1
    start, end, size = task.spans[index]
    sentence = task.text[start:end]
    words_per_token = len(words(task.text)) / max(1, task.tokens)
    hint = max(1, min(len(words(sentence)), round(wanted * words_per_token)))
    budget = min(256, 2 * size + 24)
    request = GenerationRequest(
        task.unit.item, "judge", PROMPT_ID,
        Sampler(temperature=PARAPHRASE_TEMPERATURE, seed=attempt, max_tokens=budget),
        messages=paraphrase_messages(sentence, hint), labels=("Yes", "No"))
    return request, index


def measure(task: Task, attempt: int, index: int, key: str, output: str | None,
            tokenizer: Tokenizer, tolerance: float) -> None:
    """Record one attempt's verdict on `task` (and accept it when within tolerance)."""
    start, end, size = task.spans[index]
    sentence = task.text[start:end]
    record: dict[str, Any] = {"attempt": attempt, "seed": attempt, "sentence": index,
                              "key": key}
    if output is None:
        record["status"] = "generation failed"
        task.attempts.append(record)
        return
    rewrite = clean_output(output, sentence)
    problem = check_rewrite(sentence, rewrite, task.text)
    if problem is not None:
        record["status"] = problem
        task.attempts.append(record)
        return
    candidate = task.text[:start] + rewrite + task.text[end:]
    fraction = token_change_fraction(task.text, candidate, tokenizer, task.denominator)
    longest = task.tokens if task.denominator == "original" else max(
        task.tokens, len(tokenizer.tokenize(candidate)))
    record.update(fraction=round(fraction, 6), text=candidate,
                  change_rate=round(fraction * longest / max(1, size), 6))
    within = abs(fraction - task.target) <= tolerance
    record["status"] = "accepted" if within else "outside tolerance"
    task.attempts.append(record)
    if within:
        task.accepted = record


# ---------------------------------------------------------------- planning stage 2


RunBatch = Callable[[list[GenerationRequest]], list[tuple[str, str | None]]]
"""Runs requests on the paraphraser; returns (key, output) per request in order (output
None when the generation failed)."""


def paraphrase_key_extra(unit: Unit, model: ModelRecord, paraphraser: str,
                         config: dict) -> list[Any]:
    """What a paraphrase variant depends on besides (item, operator, seed); the default
    token-fraction denominator adds nothing, so paraphrases stored before it are found."""
    extra = ["paraphrase", unit.target.key, model.sha256, paraphraser,
             float(config["tolerance"]), int(config["max_attempts"]), PROMPT_ID]
    denominator = config.get("token_denominator", "longer")
    return extra if denominator == "longer" else extra + [f"denominator:{denominator}"]


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
        planned = [(t, *next_request(t, attempt)) for t in open_tasks]
        outputs = run_batch([request for _, request, _ in planned])
        for (task, _, index), (key, output) in zip(planned, outputs):
            measure(task, attempt, index, key, output, tokenizer, tolerance)
    return True


def finish(task: Task, tokenizer: Tokenizer, tolerance: float,
           paraphraser: str) -> PerturbResult:
    """The paraphrase of a task after its attempts: accepted LLM, fallback, or closest."""
    from workbench.perturb.paraphrase import TableParaphraser

    details: dict[str, Any] = {
        "reference_variant_id": task.unit.target.id,
        "target_operator": task.unit.target.operator_id, "paraphraser": paraphraser,
        "target_fraction": round(task.target, 6), "tolerance": tolerance,
        "token_denominator": task.denominator,
        "attempts": [{k: v for k, v in a.items() if k != "text"} for a in task.attempts],
    }
    chosen: dict[str, Any] | None = task.accepted
    source = "llm"
    if chosen is None:
        # The table rewords the body only: the final question is what the model is asked.
        body, question = split_question(task.text)
        scale = task.tokens / max(1, len(tokenizer.tokenize(body)))
        table = TableParaphraser().paraphrase(body, target_fraction=min(1.0, task.target * scale),
                                              tolerance=tolerance * scale, tokenizer=tokenizer,
                                              rng=task.rng)
        valid = [a for a in task.attempts if "fraction" in a]
        fallback: dict[str, Any] = {"edits": table.edits, "reason": table.reason}
        if table.text is not None:
            text = table.text + question
            fraction = token_change_fraction(task.text, text, tokenizer, task.denominator)
            fallback.update(fraction=round(fraction, 6),
                            within_tolerance=abs(fraction - task.target) <= tolerance)
            chosen, source = {"text": text, "fraction": fraction}, "fallback"
            details["edits"] = table.edits
        elif valid:
            chosen = min(valid, key=lambda a: abs(a["fraction"] - task.target))
            source = "llm_closest"
        details["fallback"] = fallback
    if chosen is None:
        details.update(source="none", within_tolerance=False)
        return PerturbResult(PARAPHRASE_OPERATOR, False, None, None, None,
                             "no valid paraphrase: every LLM attempt was rejected and no "
                             "table rewording applies", details=details)
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
                              denominator))
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
                specs += unit_jobs(ctx.arm(arm), unit, "paraphrase", variant, runner, config)
            else:  # recorded, so the report can count the unit out of this baseline
                specs.append(JobSpec(arm, unit.item.id or 0, "paraphrase", 2, variant.id, 0,
                                     int(config["seeds"][0]), None))
        added += add_jobs(ctx.db, ctx.audit.id, specs)
        missing = {v.id for v in variants.values() if not v.fired}
        stale = [job.id for job in list_jobs(ctx.db, ctx.audit.id, status="pending",
                                             role="paraphrase", arm_id=arm)
                 if job.variant_id in missing]
        if stale:
            mark_status(ctx.db, stale, "not_fired")
    return added


__all__ = ["PROMPT_ID", "Task", "check_rewrite", "clean_output", "finish", "measure",
           "paraphrase_messages", "plan_paraphrases", "run_tasks", "sentence_spans"]
