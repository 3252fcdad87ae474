"""The runner: content keys, skip what is stored, order by shared prefix, store each generation.

`Runner.run` is resumable by construction: a generation's key is computed from what
goes into it (model file hash, mode, exact prompt and continued token ids, sampler,
seed) before the model is loaded; keys already stored are skipped; each new generation
is committed in its own transaction the moment it finishes. A killed run therefore
loses at most the generation in flight, and a re-run does only what is missing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

import sqlite_utils

from store.errors import UserError
from store.generations import get_generations, insert_generation, stored_keys
from store.models import model_metadata
from store.records import ModelRecord
from workbench.models.answers import label_token_candidates
from workbench.models.backend import Backend, LlamaCppBackend
from workbench.models.events import (
    GenerationFinished,
    ModelLoaded,
    RunFinished,
    RunnerEvent,
    RunStarted,
    RunSummary,
)
from workbench.models.execute import Prepared, Tokenized, check_fits, execute
from workbench.models.prompts import (
    PLAIN_CHAT_TEMPLATE,
    ChatFormat,
    generation_key,
    render_request,
)
from workbench.models.registry import check_model_file
from workbench.models.request import GenerationRequest


class Runner:
    """Generates requests with one model and stores the results, resumably.

    Args:
        db: the store.
        model: the registered model.
        threads: CPU threads (default: all cores).
        gpu_layers: layers offloaded to a GPU.
        ctx: context size in tokens (default: min(trained context, 4096)).
        backend: a ready backend (tests pass `FakeBackend`); loaded lazily otherwise,
            and only if something needs generating.
    """

    def __init__(self, db: sqlite_utils.Database, model: ModelRecord, *,
                 threads: int | None = None, gpu_layers: int = 0, ctx: int | None = None,
                 backend: Backend | None = None) -> None:
        self.db = db
        self.model = model
        self.threads = threads
        self.gpu_layers = gpu_layers
        self.ctx = ctx
        self._backend = backend
        self._owns_backend = backend is None
        meta = model_metadata(db, model.id)
        self.chat = ChatFormat(template=model.chat_template or PLAIN_CHAT_TEMPLATE,
                               bos_token=meta.get("bos_token") or "",
                               eos_token=meta.get("eos_token") or "")
        self._candidates: dict[tuple[str, ...], dict[str, tuple[int, ...]]] = {}

    # ------------------------------------------------------------ keys

    def prepare(self, request: GenerationRequest) -> Prepared:
        """Render a request and compute its key (no model needed).

        Raises:
            UserError: the request cannot be built (no options, unknown template, …).
        """
        rendered = render_request(request, self.chat)
        return Prepared(request, rendered, generation_key(self.model.sha256, request, rendered))

    def key(self, request: GenerationRequest) -> str:
        """The generation key of a request, computed without running the model."""
        return self.prepare(request).key

    # ------------------------------------------------------------ backend

    @property
    def backend(self) -> Backend:
        """The model backend, loaded on first use."""
        if self._backend is None:
            check_model_file(self.model)
            self._backend = LlamaCppBackend(
                self.model.path, threads=self.threads, gpu_layers=self.gpu_layers,
                ctx=self.ctx, context_length=self.model.context_length,
                prefix_cache_safe=self.model.prefix_cache_safe,
            )
        return self._backend

    def close(self) -> None:
        """Free the model if this runner loaded it."""
        if self._backend is not None and self._owns_backend:
            self._backend.close()
            self._backend = None

    def tokenize(self, prepared: Prepared) -> Tokenized:
        """Token ids of a prepared request: chat prompt, then the continued chain's exact ids."""
        backend = self.backend
        rendered = prepared.rendered
        prompt_ids = tuple(backend.tokenize(rendered.text, special=True))
        if rendered.prefix_token_ids is not None:
            prefix_ids = tuple(rendered.prefix_token_ids)
        elif rendered.prefix:
            prefix_ids = tuple(backend.tokenize(rendered.prefix, special=False))
        else:
            prefix_ids = ()
        labels = rendered.labels
        if labels not in self._candidates:
            try:
                self._candidates[labels] = label_token_candidates(
                    labels, lambda text: backend.tokenize(text, special=False))
            except ValueError as exc:
                raise UserError(f"item {prepared.request.item.source_id!r}: labels: {exc}") \
                    from None
        return Tokenized(prepared, prompt_ids, prefix_ids, self._candidates[labels])

    # ------------------------------------------------------------ run

    def run(self, requests: Iterable[GenerationRequest],
            on_event: Callable[[RunnerEvent], None] | None = None,
            should_stop: Callable[[], bool] | None = None) -> RunSummary:
        """Generate every request whose key is not stored yet, storing each as it finishes.

        Requests are validated and keyed first (a bad one raises before any work);
        duplicates (same key) run once. Work is ordered by prompt token ids so prompts
        sharing a prefix run back to back and reuse the KV cache.

        Args:
            requests: what to generate.
            on_event: receives RunStarted, ModelLoaded, GenerationFinished, RunFinished.
            should_stop: polled before each generation; True stops cleanly.

        Returns:
            The summary over all requests (stored before or now).

        Raises:
            UserError: a request cannot be built or does not fit the context.
        """
        emit = on_event or (lambda event: None)
        unique: dict[str, Prepared] = {}
        for request in requests:
            prepared = self.prepare(request)
            unique.setdefault(prepared.key, prepared)
        done_before = stored_keys(self.db, unique)
        pending = [p for key, p in unique.items() if key not in done_before]
        work: list[Tokenized] = []
        loaded: ModelLoaded | None = None
        if pending:
            # Load, tokenize and check every prompt before reporting anything, so a
            # prompt that does not fit fails the run before any work or output.
            if self._backend is None:
                loading = time.perf_counter()
                _ = self.backend
                loaded = ModelLoaded(self.model.name, time.perf_counter() - loading,
                                     getattr(self._backend, "threads", None))
            work = [self.tokenize(p) for p in pending]
            for tok in work:
                check_fits(tok, self.backend)
            work.sort(key=lambda t: t.context_ids)
        emit(RunStarted(total=len(unique), skipped=len(unique) - len(pending)))
        if loaded is not None:
            emit(loaded)

        generated: list[str] = []
        tokens_in = tokens_out = errors = 0
        stopped = False
        elapsed = 0.0
        if work:
            started = time.perf_counter()
            for tok in work:
                if should_stop is not None and should_stop():
                    stopped = True
                    break
                row = execute(self.backend, tok, self.model.id)
                insert_generation(self.db, row)
                generated.append(row.key)
                tokens_in += row.tokens_in or 0
                tokens_out += row.tokens_out or 0
                errors += row.parse_status == "error"
                gold = tok.prepared.request.effective_gold
                emit(GenerationFinished(
                    done=len(generated), total=len(work), key=row.key,
                    tokens_in=row.tokens_in or 0, tokens_out=row.tokens_out or 0,
                    latency_s=row.latency_s or 0.0, answer=row.answer,
                    parse_status=row.parse_status,
                    correct=None if gold is None or row.parse_status == "error"
                    else row.answer == gold,
                ))
            elapsed = time.perf_counter() - started
        summary = self._summary(unique, len(unique) - len(pending), generated, errors,
                                tokens_in, tokens_out, elapsed, stopped)
        emit(RunFinished(summary))
        return summary

    def _summary(self, unique: dict[str, Prepared], skipped: int, generated: list[str],
                 errors: int, tokens_in: int, tokens_out: int, elapsed: float,
                 stopped: bool) -> RunSummary:
        stored = get_generations(self.db, unique)
        counts: dict[str, int] = {}
        correct = with_gold = 0
        for key, gen in stored.items():
            counts[gen.parse_status] = counts.get(gen.parse_status, 0) + 1
            gold = unique[key].request.effective_gold
            if gold is not None and gen.parse_status != "error":
                with_gold += 1
                correct += gen.answer == gold
        return RunSummary(
            total=len(unique), skipped=skipped, generated=len(generated), errors=errors,
            parsed_ok=counts.get("ok", 0), correct=correct, with_gold=with_gold,
            tokens_in=tokens_in, tokens_out=tokens_out, elapsed_s=elapsed, stopped=stopped,
            status_counts=counts, keys=tuple(unique),
        )
