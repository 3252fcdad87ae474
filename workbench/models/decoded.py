"""What a decode returns: watched next-token logits per step, and reading them from llama.cpp;
how much of a cached sequence a new prompt shares (the KV positions it can keep).

Shared by the single-sequence backend (`workbench.models.backend`) and the batch decoder
(`workbench.models.batch`); it imports neither, so the two never import each other back.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Watched:
    """Next-token logits of the watched token ids at one position, and the vocabulary logsumexp."""

    logits: tuple[float, ...]
    logsumexp: float


@dataclass(frozen=True)
class Decoded:
    """A finished decode: output ids (no end-of-generation token) and per-step watched logits.

    `steps[k]` holds the logits that produced token k (and, when generation ended with
    an end-of-generation token, one more step for the position that produced it).
    """

    token_ids: tuple[int, ...]
    finish_reason: str
    steps: tuple[Watched, ...]


def read_watched(ctx: Any, index: int, n_vocab: int, watch_ids: Sequence[int]) -> Watched:
    """The watched ids' logits and the vocabulary logsumexp at output row `index` of `ctx`.

    `index` is a batch position whose logits were requested (-1: the last one).
    """
    import llama_cpp
    import numpy as np

    pointer = llama_cpp.llama_get_logits_ith(ctx, index)
    logits = np.ctypeslib.as_array(pointer, shape=(n_vocab,))
    top = float(logits.max())
    lse = top + math.log(float(np.exp(logits - top, dtype=np.float64).sum()))
    return Watched(tuple(float(logits[i]) for i in watch_ids), lse)


def common_prefix(cached: Sequence[int], ids: Sequence[int]) -> int:
    """How many leading token ids `cached` and `ids` share: the KV positions a prompt
    evaluated after `cached` may keep (callers cap it below the prompt's length)."""
    n = 0
    for a, b in zip(cached, ids, strict=False):  # the shorter one bounds the prefix
        if a != b:
            break
        n += 1
    return n
