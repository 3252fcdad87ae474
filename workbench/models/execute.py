"""Running one prepared request on a backend: decode, parse, and read the option distribution.

The answer position (where the option distribution is read):

- direct mode: the end of the prompt, which already ends with the cue `Answer:`;
- otherwise, when the parsed label starts on a token boundary of the output: the
  position that produced that token (the model's own answer, logits kept from decoding);
- otherwise (no parsable label, or it starts mid-token): after the output, with the cue
  appended (`\\nAnswer:`, no newline if the text already ends in whitespace), evaluated
  as extra tokens on top of the cached context.
"""

from __future__ import annotations

import math
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from store.errors import UserError
from store.generations import NewGeneration
from workbench.models.answers import option_distribution, parse_answer
from workbench.models.backend import Backend, Tokenizing
from workbench.models.decoded import Decoded, Watched
from workbench.models.prompts import RenderedPrompt
from workbench.models.request import GenerationRequest


@dataclass(frozen=True)
class Prepared:
    """A request with its exact prompt and its content key (no model needed)."""

    request: GenerationRequest
    rendered: RenderedPrompt
    key: str


@dataclass(frozen=True)
class Tokenized:
    """A prepared request turned into token ids for one backend."""

    prepared: Prepared
    prompt_ids: tuple[int, ...]
    prefix_ids: tuple[int, ...]
    candidates: dict[str, tuple[int, ...]]

    @property
    def context_ids(self) -> tuple[int, ...]:
        """What the model is fed before generating: the chat prompt, then any continued chain."""
        return self.prompt_ids + self.prefix_ids


def cue_room(backend: Tokenizing, cue: str) -> int:
    """Tokens to keep free after the output: the appended cue plus one position to read."""
    return len(backend.tokenize("\n" + cue, special=False)) + 1


def check_fits(tok: Tokenized, backend: Tokenizing) -> None:
    """Raise if the prompt leaves no room to generate a single token and read the answer.

    Raises:
        UserError: names the item and the token counts.
    """
    needed = len(tok.context_ids) + 1 + cue_room(backend, tok.prepared.rendered.cue)
    if needed > backend.n_ctx:
        item = tok.prepared.request.item
        raise UserError(
            f"item {item.source_id!r}: prompt is {len(tok.context_ids)} tokens, longer than "
            f"the context of {backend.n_ctx} tokens allows; use --ctx to raise it"
        )


def label_token_index(pieces: list[bytes], output: str, start: int | None) -> int | None:
    """Index of the output token that begins the parsed label (" B" or "B"), if any."""
    if start is None:
        return None
    raw = b"".join(pieces)
    try:
        if raw.decode("utf-8") != output:
            return None
    except UnicodeDecodeError:
        return None  # byte offsets and character offsets disagree; use the appended cue
    target = len(output[:start].encode("utf-8"))
    offset = 0
    for index, piece in enumerate(pieces):
        if offset == target:
            return index
        if offset == target - 1 and raw[offset:target] == b" " and len(piece) > 1:
            return index  # " B": one token holding the space and the label's start
        offset += len(piece)
        if offset > target:
            return None
    return None


def _distribution(tok: Tokenized, watched: Watched, watch_ids: list[int],
                  pieces_of: dict[int, str], position: str) -> tuple[dict | None, dict]:
    by_id = dict(zip(watch_ids, watched.logits, strict=True))  # one logit per watched id
    probs: dict[str, float] | None
    probs, combined = option_distribution(tok.candidates, by_id)
    if all(v == -math.inf for v in combined.values()):
        probs = None  # no candidate reported (a server's top-N held none of them)

    def finite(value: float) -> float | None:  # -inf: not reported by a server's top N
        return None if value == -math.inf else value

    details = {
        "labels": {label: finite(v) for label, v in combined.items()},
        "candidates": {label: {pieces_of[t]: finite(by_id[t]) for t in ids}
                       for label, ids in tok.candidates.items()},
        "vocab_logsumexp": watched.logsumexp,
        "position": position,
    }
    return probs, details


@dataclass(frozen=True)
class DecodePlan:
    """What a request asks the decoder for: the label tokens to watch and the token budget."""

    watch_ids: list[int]
    max_new: int


def plan_decode(backend: Tokenizing, tok: Tokenized) -> DecodePlan:
    """The watched label tokens and how many tokens may be generated (room for the cue kept)."""
    rendered = tok.prepared.rendered
    watch_ids = sorted({t for ids in tok.candidates.values() for t in ids})
    room = backend.n_ctx - len(tok.context_ids) - cue_room(backend, rendered.cue)
    return DecodePlan(watch_ids, max(1, min(tok.prepared.request.sampler.max_tokens, room)))


def base_row(tok: Tokenized, model_id: int) -> dict[str, Any]:
    """The `NewGeneration` fields every row of this request shares, whichever backend ran it."""
    prepared = tok.prepared
    request, rendered = prepared.request, prepared.rendered
    return dict(
        key=prepared.key, model_id=model_id, mode=request.mode, template=request.template,
        prompt=rendered.text, sampler=request.sampler.as_dict(), item_id=request.item.id,
        variant_id=request.variant_id, prefix=rendered.prefix,
        prefix_token_ids=tok.prefix_ids if rendered.prefix is not None else None,
        seed=request.sampler.seed, labels=rendered.labels, tokens_in=len(tok.context_ids),
    )


def error_row(tok: Tokenized, model_id: int, exc: BaseException, started: float
              ) -> NewGeneration:
    """The row stored when the backend failed (status 'error', retried on the next run)."""
    trace = "".join(traceback.format_exception(exc, limit=3))
    return NewGeneration(
        **base_row(tok, model_id), parse_status="error",
        latency_s=time.perf_counter() - started,
        error=f"{type(exc).__name__}: {exc}\n{trace}",
    )


NextLogits = Callable[[Sequence[int], Sequence[int]], Watched]


def finish_generation(backend: Tokenizing, tok: Tokenized, model_id: int, plan: DecodePlan,
                      decoded: Decoded, next_logits: NextLogits, started: float,
                      reset: Callable[[], None] | None = None) -> NewGeneration:
    """Parse a decoded output and read the option distribution at the answer position.

    Args:
        backend: tokenizes the cue and gives token pieces.
        tok: the request.
        model_id: stored with the row.
        plan: what was decoded (watched ids).
        decoded: the output ids and per-step watched logits.
        next_logits: evaluates extra tokens on top of the cache that holds this request's
            context and output (the backend's, or its batch slot's).
        started: `time.perf_counter()` when the request started (for `latency_s`).
        reset: forgets the cache after an error.
    """
    request, rendered = tok.prepared.request, tok.prepared.rendered
    watch_ids = plan.watch_ids
    try:
        pieces = [backend.piece(t) for t in decoded.token_ids]
        output = b"".join(pieces).decode("utf-8", errors="replace")
        parsed = parse_answer(output, rendered.labels, leading=request.mode == "direct")
        index = None
        if request.mode == "direct" and decoded.steps:
            watched, position = decoded.steps[0], "prompt"
        else:
            index = label_token_index(pieces, output, parsed.start)
            if index is not None and index < len(decoded.steps):
                watched, position = decoded.steps[index], "output"
            else:
                before = (rendered.prefix or "") + output
                separator = "" if not before or before[-1].isspace() else "\n"
                cue_ids = backend.tokenize(separator + rendered.cue, special=False)
                watched = next_logits(
                    list(tok.context_ids) + list(decoded.token_ids) + cue_ids, watch_ids)
                position = "appended"
        pieces_of = {t: backend.piece(t).decode("utf-8", errors="replace") for t in watch_ids}
        probs, details = _distribution(tok, watched, watch_ids, pieces_of, position)
    except Exception as exc:  # noqa: BLE001 - stored as status 'error', retried next run
        if reset is not None:
            reset()
        return error_row(tok, model_id, exc, started)
    return NewGeneration(
        **base_row(tok, model_id), output=output, output_token_ids=decoded.token_ids,
        answer=parsed.answer, parse_status=parsed.status, option_probs=probs,
        option_logits=details, tokens_out=len(decoded.token_ids),
        latency_s=time.perf_counter() - started, finish_reason=decoded.finish_reason,
    )


def execute(backend: Backend, tok: Tokenized, model_id: int) -> NewGeneration:
    """Generate one request and return the row to store (status 'error' if the backend failed)."""
    started = time.perf_counter()
    reset = getattr(backend, "reset", None)
    try:
        plan = plan_decode(backend, tok)
        decoded = backend.generate(tok.context_ids, tok.prepared.request.sampler, plan.max_new,
                                   plan.watch_ids)
    except Exception as exc:  # noqa: BLE001 - stored as status 'error', retried next run
        if reset is not None:
            reset()
        return error_row(tok, model_id, exc, started)
    return finish_generation(backend, tok, model_id, plan, decoded, backend.next_logits,
                             started, reset)
