"""Helpers of the server-pool tests: the llama-server binary, requests, and a run in a thread."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from store.datasets import get_items
from workbench.models import GenerationRequest, Sampler


def llama_server_or_skip() -> str:
    """The llama-server binary, or skip the test saying how to get one (never faked)."""
    from workbench.models.llama_server import find_llama_server

    binary = find_llama_server()
    if binary is None:
        pytest.skip("no llama-server binary: set PAW_LLAMA_SERVER=PATH, put llama-server on "
                    "PATH, or build one with `paw serve --build-llama-server` "
                    "(docs/runner.md, 'Getting llama-server')")
    return binary


def demo_requests(db: Any, n_items: int = 4, cot_tokens: int = 24,
                  direct_tokens: int = 4) -> list[GenerationRequest]:
    """CoT and direct requests on the first demo items (imported already)."""
    items = get_items(db, "demo")[:n_items]
    return [GenerationRequest(item=i, mode=mode, template=template,
                              sampler=Sampler(max_tokens=tokens))
            for i in items for mode, template, tokens in
            (("cot", "neutral_cot@1", cot_tokens), ("direct", "direct@1", direct_tokens))]


class Events:
    """An `on_event` sink keeping every event, and calling `when(event, self)` on each."""

    def __init__(self, when: Callable[[Any, Events], None] | None = None) -> None:
        self.events: list[Any] = []
        self.when = when
        self.lock = threading.Lock()

    def __call__(self, event: Any) -> None:
        with self.lock:
            self.events.append(event)
        if self.when is not None:
            self.when(event, self)

    def notices(self) -> list[str]:
        """The pool's notice lines."""
        return [e.message for e in self.events if type(e).__name__ == "PoolNotice"]

    def finished(self) -> int:
        """Generations stored so far."""
        return sum(type(e).__name__ == "GenerationFinished" for e in self.events)
