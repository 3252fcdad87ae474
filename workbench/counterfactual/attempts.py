"""One paraphrase task's attempts: the prompt, the sentences it may rewrite, each attempt's
request and verdict (seed 000 §3.2 and App. B; the loop around them is `paraphrase.py`).

Two span modes (the study config's `paraphrase_span`):

- 'sentence' (App. B, the matched baseline of the main design): each attempt rewrites ONE
  sentence — never the final question — whose length makes a rewrite most likely to change
  f*·N tokens;
- 'fit' (the dose-response design, §4.1's paraphrases "at five token change levels"): each
  attempt rewrites a run of consecutive sentences (never the final question) chosen so that
  ρ × (their tokens) ≈ f*·N, where ρ is the share of a rewritten sentence's tokens that a
  rewrite changes (0.3 at first, then the median observed); one request per sentence of the
  run (`SPAN_REQUEST`), each rewrite checked on its own, the ones that pass spliced into the
  prompt, and the whole prompt's fraction measured with the audited model's tokenizer.
"""

from __future__ import annotations

import random
import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from workbench.counterfactual.checks import check_rewrite, clean_output, words
from workbench.counterfactual.plan import Unit
from workbench.models import GenerationRequest, Sampler
from workbench.perturb.segments import split_sentences
from workbench.perturb.tokenize import Tokenizer, token_change_fraction

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

SPAN_REQUEST = "each"
"""How a 'fit' attempt asks for a run of sentences: 'each' (one request per sentence, each
rewrite checked on its own) or 'joint' (one request for the run, checked as a whole).
Measured on the demo triage items with SmolLM2-135M (docs/counterfactual.md,
"Dose-response"): 'each' passed the meaning checks more often."""

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
        span: 'sentence' (App. B) or 'fit' (as many sentences as the target needs).
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
    span: str = "sentence"


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



# ---------------------------------------------------------------- several sentences ('fit')


def windows(count: int) -> list[tuple[int, ...]]:
    """Every run of consecutive candidate sentences (indices into `Task.spans`)."""
    return [tuple(range(i, j)) for i in range(count) for j in range(i + 1, count + 1)]


def change_rate(task: Task) -> float:
    """ρ: the median share of rewritten tokens that the task's measured attempts changed
    (`INITIAL_CHANGE_RATE` before any)."""
    rates = [a["change_rate"] for a in task.attempts if a.get("change_rate")]
    return statistics.median(rates) if rates else INITIAL_CHANGE_RATE


def choose_window(task: Task) -> tuple[int, ...]:
    """The run of sentences whose tokens × ρ come closest to f*·N (ties, within a tenth of
    the wanted size: the run tried least often, then a seeded draw); counted as tried."""
    desired = task.target * task.tokens / change_rate(task)
    runs = windows(len(task.spans))
    jitter = {run: task.rng.random() for run in runs}

    def size(run: tuple[int, ...]) -> int:
        return sum(task.spans[i][2] for i in run)

    best = min(runs, key=lambda r: (round(abs(size(r) - desired) / max(1.0, desired), 1),
                                    task.tries[r], jitter[r]))
    task.tries[best] += 1
    return best


def _request(task: Task, attempt: int, sentence: str, size: int, hint: int) -> GenerationRequest:
    return GenerationRequest(
        task.unit.item, "judge", PROMPT_ID,
        Sampler(temperature=PARAPHRASE_TEMPERATURE, seed=attempt,
                max_tokens=min(512, 2 * size + 24)),
        messages=paraphrase_messages(sentence, hint), labels=("Yes", "No"))


def fit_requests(task: Task, attempt: int,
                 joint: bool | None = None) -> tuple[list[GenerationRequest], tuple[int, ...]]:
    """The requests of a 'fit' attempt and the run of sentences they rewrite: one per
    sentence (each asked to change its share of f*·N words), or one for the whole run."""
    run = choose_window(task)
    joint = SPAN_REQUEST == "joint" if joint is None else joint
    wanted = task.target * task.tokens
    words_per_token = len(words(task.text)) / max(1, task.tokens)
    total = sum(task.spans[i][2] for i in run)
    parts = [(task.spans[run[0]][0], task.spans[run[-1]][1], total)] if joint else [
        task.spans[i] for i in run]
    requests = []
    for start, end, size in parts:
        sentence = task.text[start:end]
        hint = max(1, min(len(words(sentence)), round(wanted * size / total * words_per_token)))
        requests.append(_request(task, attempt, sentence, size, hint))
    return requests, run


def measure_fit(task: Task, attempt: int, run: tuple[int, ...], keys: list[str],
                outputs: list[str | None], tokenizer: Tokenizer, tolerance: float) -> None:
    """Record a 'fit' attempt: each rewrite that passes the meaning checks replaces its
    sentence (or the run, for one joint request), the others stay as they were; the whole
    prompt's fraction decides acceptance."""
    record: dict[str, Any] = {"attempt": attempt, "seed": attempt, "sentences": list(run),
                              "keys": keys}
    joint = len(keys) == 1 and len(run) > 1
    parts = [(task.spans[run[0]][0], task.spans[run[-1]][1],
              sum(task.spans[i][2] for i in run))] if joint else [task.spans[i] for i in run]
    verdicts, edits, rewritten = [], [], 0
    for (start, end, size), output in zip(parts, outputs, strict=True):
        original = task.text[start:end]
        if output is None:
            verdicts.append("generation failed")
            continue
        rewrite = clean_output(output, original)
        problem = check_rewrite(original, rewrite, task.text)
        verdicts.append(problem or "passed")
        if problem is None:
            edits.append((start, end, rewrite))
            rewritten += size
    record["checks"] = verdicts
    if "generation failed" in verdicts:
        record["status"] = "generation failed"
    elif not edits:
        record["status"] = verdicts[0]
    if "status" in record:
        task.attempts.append(record)
        return
    candidate, last = [], 0
    for start, end, rewrite in edits:
        candidate += [task.text[last:start], rewrite]
        last = end
    text = "".join(candidate) + task.text[last:]
    fraction = token_change_fraction(task.text, text, tokenizer, task.denominator)
    longest = task.tokens if task.denominator == "original" else max(
        task.tokens, len(tokenizer.tokenize(text)))
    within = abs(fraction - task.target) <= tolerance
    record.update(fraction=round(fraction, 6), text=text,
                  change_rate=round(fraction * longest / max(1, rewritten), 6),
                  status="accepted" if within else "outside tolerance")
    task.attempts.append(record)
    if within:
        task.accepted = record
