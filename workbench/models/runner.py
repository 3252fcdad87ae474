"""The runner: content keys, skip what is stored, order by shared prefix, store each generation.

`Runner.run` is resumable by construction: a generation's key is computed from what
goes into it (model file hash, mode, exact prompt and continued token ids, sampler,
seed) before the model is loaded; keys already stored are skipped; each new generation
is committed in its own transaction the moment it finishes. A killed run therefore
loses at most the generation in flight, and a re-run does only what is missing.
"""

from __future__ import annotations

import dataclasses

import time
from collections.abc import Callable, Iterable

import sqlite_utils

from store.errors import UserError
from store.generations import NewGeneration, get_generations, insert_generation, stored_keys
from store.models import model_metadata
from store.records import ModelRecord
from workbench.models.answers import label_token_candidates
from workbench.models.arrangement import Arrangement, choose_arrangement
from workbench.models.backend import Backend, LlamaCppBackend, Tokenizing, default_threads
from workbench.models.batch import DEFAULT_BATCH_SIZE
from workbench.models.events import (
    BatchingChecked,
    BatchingProgress,
    GenerationFinished,
    ModelLoaded,
    RunFinished,
    RunnerEvent,
    RunStarted,
    RunSummary,
    WidthChosen,
)
from workbench.models.execute import (
    Prepared,
    Tokenized,
    check_fits,
    execute,
    plan_decode,
)
from workbench.models.prompts import (
    PLAIN_CHAT_TEMPLATE,
    ChatFormat,
    generation_key,
    render_request,
)
from workbench.models.registry import check_model_file
from workbench.models.request import GenerationRequest
from workbench.models.selfcheck import BatchVerdict
from workbench.models.width import WidthChoice


class Runner:
    """Generates requests with one model and stores the results, resumably.

    Args:
        db: the store.
        model: the registered model.
        threads: CPU cores to use (default: those idle when the model loads; a ready
            `backend`: the threads it was loaded with).
        gpu_layers: layers offloaded to a GPU.
        ctx: context size in tokens (default: min(trained context, 4096)).
        backend: a ready backend (tests pass `FakeBackend`); loaded lazily otherwise,
            and only if something needs generating.
        batch_size: sequences decoded per `llama_decode` (default: chosen by measuring
            this machine on first use, `workbench.models.width`, `DEFAULT_BATCH_SIZE`
            until then; 1 decodes one at a time). Batching is used only where the
            backend supports it and the self-check on load found it bit-identical to
            one at a time.
        decoders: batch decoders run at once (default: `PAW_DECODERS`, else one per
            core on a CPU; `workbench.models.arrangement`).
    """

    def __init__(self, db: sqlite_utils.Database, model: ModelRecord, *,
                 threads: int | None = None, gpu_layers: int = 0, ctx: int | None = None,
                 backend: Tokenizing | None = None, batch_size: int | None = None,
                 decoders: int | None = None) -> None:
        self.db = db
        self.model = model
        self.threads = threads
        self.gpu_layers = gpu_layers
        self.ctx = ctx
        self.batch_size = DEFAULT_BATCH_SIZE if batch_size is None else max(1, batch_size)
        self.width_given = batch_size is not None
        self.width_choice: WidthChoice | None = None
        self.decoders = decoders
        self.batch_verdict: BatchVerdict | None = None
        self._backend = backend
        self._owns_backend = backend is None
        # A back-end that is not bit-identical to in-process decoding keys its own results.
        self.key_tag: str | None = getattr(backend, "key_tag", None)
        meta = model_metadata(db, model.id)
        self.chat = ChatFormat(template=model.chat_template or PLAIN_CHAT_TEMPLATE,
                               bos_token=meta.get("bos_token") or "",
                               eos_token=meta.get("eos_token") or "",
                               add_special=not model.chat_template)
        self._candidates: dict[tuple[str, ...], dict[str, tuple[int, ...]]] = {}

    # ------------------------------------------------------------ keys

    def prepare(self, request: GenerationRequest) -> Prepared:
        """Render a request and compute its key (no model needed).

        Raises:
            UserError: the request cannot be built (no options, unknown template, …).
        """
        rendered = render_request(request, self.chat)
        return Prepared(request, rendered,
                        generation_key(self.model.sha256, request, rendered, self.key_tag))

    def key(self, request: GenerationRequest) -> str:
        """The generation key of a request, computed without running the model."""
        return self.prepare(request).key

    # ------------------------------------------------------------ backend

    @property
    def backend(self) -> Tokenizing:
        """The model backend, loaded on first use.

        Its own context decodes one sequence at a time (the reference the self-check
        compares with, and the fallback): on a CPU with batching on, with one thread, as
        each decoder does (docs/runner.md: two threads decode one sequence slower than
        one on a small model); prompts are evaluated with every core.
        """
        if self._backend is None:
            check_model_file(self.model)
            cores = self.threads or default_threads()
            single = cores if self.gpu_layers or self.batch_size <= 1 else \
                choose_arrangement(cores, self.batch_size, decoders=self.decoders).threads
            self._backend = LlamaCppBackend(
                self.model.path, threads=single, batch_threads=cores,
                gpu_layers=self.gpu_layers, ctx=self.ctx,
                context_length=self.model.context_length,
                prefix_cache_safe=self.model.prefix_cache_safe,
            )
        return self._backend

    @property
    def engine(self) -> str:
        """What decodes this runner's generations, recorded on each (`generations.engine`):
        the backend's own `engine` (a pool: kind, build, slot mode), else in-process
        llama-cpp-python with its version and device, without loading the model."""
        own = getattr(self._backend, "engine", None)
        if own is not None:
            return str(own)
        if self._backend is not None and not isinstance(self._backend, LlamaCppBackend):
            return type(self._backend).__name__
        from importlib.metadata import version

        device = "gpu" if self.gpu_layers else "cpu"
        return f"in-process llama-cpp-python {version('llama-cpp-python')} {device}"

    def _local_backend(self) -> Backend:
        """The backend as one that decodes in this process (a server pool, which decodes
        through its `run_pool`, never gets here)."""
        backend = self.backend
        if not isinstance(backend, Backend):
            raise TypeError(f"{type(backend).__name__} does not decode in this process")
        return backend

    @property
    def arrangement(self) -> Arrangement:
        """Decoders × threads × width this runner batches with (loads the backend)."""
        backend = self.backend
        cores = self.threads or getattr(backend, "batch_threads", None) or 1
        return choose_arrangement(cores, self.batch_size, gpu_layers=self.gpu_layers,
                                  decoders=self.decoders)

    def close(self) -> None:
        """Free the model if this runner loaded it."""
        if self._backend is not None and self._owns_backend:
            self._backend.close()
            self._backend = None
            self.batch_verdict = None
            self.width_choice = None
            if not self.width_given:
                self.batch_size = DEFAULT_BATCH_SIZE

    def batching(self, emit: Callable[[RunnerEvent], None] | None = None) -> bool:
        """Whether this runner decodes several sequences per batch (self-check on first call).

        The verdict is looked up by fingerprint (model file, llama.cpp build, CPU, threads,
        width: `workbench.models.verdicts`) in the model's metadata; only if none is stored
        does the self-check run, and its verdict is stored. Reported once per runner as
        `BatchingChecked`.
        """
        backend = self.backend
        if not hasattr(backend, "batch_decoders") or (self.width_given
                                                        and self.batch_size <= 1):
            return False
        if not self.width_given and self.width_choice is None:
            from workbench.models.batching import settle_width

            self.width_choice = settle_width(self, backend)
            self.batch_size = self.width_choice.width
            if emit is not None:
                emit(WidthChosen(self.model.name, self.width_choice.message))
        if self.batch_verdict is None:
            from workbench.models.batching import settle_verdict

            name = self.model.name

            def progress(phase: str, done: int, total: int) -> None:
                if emit is not None:
                    emit(BatchingProgress(name, phase, done, total))

            self.batch_verdict = settle_verdict(self, backend, self.arrangement, progress)
            if not self.batch_verdict.identical and self.width_choice is not None:
                # The measured width differs from one at a time: the next fastest narrower.
                for width in self.width_choice.fallbacks(self.batch_size):
                    self.batch_size = width
                    verdict = settle_verdict(self, backend, self.arrangement, progress)
                    if verdict.identical:
                        self.batch_verdict = verdict
                        break
            if emit is not None:
                verdict = self.batch_verdict
                emit(BatchingChecked(self.model.name, verdict.identical, verdict.n_seq,
                                     verdict.detail, verdict.seconds, verdict.decoders,
                                     verdict.threads, verdict.stored_at,
                                     verdict.cpu_seconds))
        return self.batch_verdict.identical

    def tokenize(self, prepared: Prepared) -> Tokenized:
        """Token ids of a prepared request: chat prompt, then the continued chain's exact ids."""
        backend = self.backend
        rendered = prepared.rendered
        prompt_ids = tuple(backend.tokenize(rendered.text, special=True,
                                            add_special=rendered.add_special))
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
                                     getattr(self._backend, "batch_threads", None))
            work = [self.tokenize(p) for p in pending]
            for tok in work:
                check_fits(tok, self.backend)
            work.sort(key=lambda t: t.context_ids)
        emit(RunStarted(total=len(unique), skipped=len(unique) - len(pending)))
        if loaded is not None:
            emit(loaded)

        generated: list[str] = []
        totals = {"in": 0, "out": 0, "errors": 0}
        stopped = False
        elapsed = 0.0

        engine = self.engine

        def record(tok: Tokenized, row: NewGeneration) -> None:
            row = dataclasses.replace(row, engine=engine)
            insert_generation(self.db, row)  # its own transaction: a kill loses nothing stored
            generated.append(row.key)
            totals["in"] += row.tokens_in or 0
            totals["out"] += row.tokens_out or 0
            totals["errors"] += row.parse_status == "error"
            gold = tok.prepared.request.effective_gold
            emit(GenerationFinished(
                done=len(generated), total=len(work), key=row.key,
                tokens_in=row.tokens_in or 0, tokens_out=row.tokens_out or 0,
                latency_s=row.latency_s or 0.0, answer=row.answer,
                parse_status=row.parse_status,
                correct=None if gold is None or row.parse_status == "error"
                else row.answer == gold,
            ))

        if work:
            batched = self.batching(emit)
            started = time.perf_counter()
            run_pool = getattr(self.backend, "run_pool", None)
            if run_pool is not None:  # a server pool: requests spread over its endpoints
                stopped = run_pool(work, self.model.id,
                                   lambda tok: plan_decode(self.backend, tok), record,
                                   should_stop, emit=emit)
            elif batched:
                stopped = self._run_batched(work, record, should_stop)
            else:
                for tok in work:
                    if should_stop is not None and should_stop():
                        stopped = True
                        break
                    record(tok, execute(self._local_backend(), tok, self.model.id))
            elapsed = time.perf_counter() - started
        summary = self._summary(unique, len(unique) - len(pending), generated,
                                totals["errors"], totals["in"], totals["out"], elapsed,
                                stopped)
        emit(RunFinished(summary))
        return summary

    def _run_batched(self, work: list[Tokenized],
                     record: Callable[[Tokenized, NewGeneration], None],
                     should_stop: Callable[[], bool] | None) -> bool:
        """Decode `work` (in its order) on the arrangement's decoders; True if stopped."""
        from workbench.models.batching import run_batched

        assert self.batch_verdict is not None
        return run_batched(self.backend, self.arrangement, self.batch_verdict, work,
                           self.model.id, record, should_stop)

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
