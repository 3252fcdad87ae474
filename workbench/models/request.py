"""What to generate: the sampler settings and the generation request (the runner's input)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from store.records import Item

MODES = ("cot", "direct", "continue", "judge")
"""Generation modes: chain of thought, direct answer, continuation of a chain, free judge prompt."""


@dataclass(frozen=True)
class Sampler:
    """Decoding settings; every field is part of the generation key.

    Greedy when `temperature` is 0 (the default, as in seed 002). With a temperature
    the llama.cpp chain is top-k → top-p → min-p → temperature → seeded draw; `top_k` 0
    and `top_p` 1 and `min_p` 0 switch those filters off.
    """

    temperature: float = 0.0
    top_p: float = 1.0
    top_k: int = 0
    min_p: float = 0.0
    repeat_penalty: float = 1.0
    max_tokens: int = 384
    seed: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The settings as stored in `generations.sampler_json`."""
        return asdict(self)


@dataclass(frozen=True)
class GenerationRequest:
    """One generation to run (or to find already stored).

    Args:
        item: the question; its options (labels) and gold come from here unless overridden.
        mode: 'cot', 'direct', 'continue' or 'judge'.
        template: a template id from `workbench.models.templates` ('neutral_cot@1', …);
            for 'judge' any `name@version` naming the caller's prompt.
        sampler: decoding settings (seed included).
        question: replaces the item's question (an M-block variant's text).
        options: replaces the item's options (an option shuffle); its keys are the labels.
        gold: the correct label when `options` reorders them (for the run summary only).
        prefix: 'continue': the chain the model continues, final answer already stripped.
        prefix_token_ids: 'continue': the exact token ids of `prefix` (a token-prefix of a
            stored output), used instead of re-tokenizing it.
        messages: 'judge': the chat messages ({'role', 'content'} dicts).
        labels: 'judge': the answer labels to read the distribution over.
        variant_id: the variant this generation answers (stored with it).
    """

    item: Item
    mode: str
    template: str
    sampler: Sampler = Sampler()
    question: str | None = None
    options: dict[str, str] | None = None
    gold: str | None = None
    prefix: str | None = None
    prefix_token_ids: tuple[int, ...] | None = None
    messages: tuple | None = None
    labels: tuple[str, ...] | None = None
    variant_id: int | None = None

    @property
    def effective_options(self) -> dict[str, str]:
        """The options shown to the model (override or the item's)."""
        return dict(self.options) if self.options is not None else dict(self.item.options)

    @property
    def effective_labels(self) -> tuple[str, ...]:
        """The labels the option distribution is read over."""
        if self.labels is not None:
            return tuple(self.labels)
        return tuple(self.effective_options)

    @property
    def effective_gold(self) -> str | None:
        """The correct label, or None when unknown (reordered options without `gold`)."""
        if self.gold is not None:
            return self.gold
        if self.mode == "judge" or self.options is not None:
            return None
        return self.item.gold
