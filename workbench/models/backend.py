"""The llama.cpp backend: one in-process model, token-level generation, last-position logits.

Only this module imports `llama_cpp` (lazily). The runner talks to any backend through
the small `Backend` protocol, which the fake backend (`workbench.models.fake`) also
implements for fast tests.

Two llama.cpp details this module relies on (llama-cpp-python 0.3.36):

- With `logits_all=False` llama.cpp computes logits only for the last position of
  each decoded batch; `llama_get_logits_ith(ctx, -1)` reads them in place. During
  `Llama.generate` those are, at every yielded token, the logits that produced it.
- `Llama.generate(reset=True)` keeps the longest common token prefix of the previous
  call in the KV cache and evaluates only the rest. For models where that is unsafe
  (sliding-window or recurrent state, as the loaded model itself tells:
  `llama_facts.prefix_cache_verdict`) we `reset()` first, so each prompt is fresh.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol, runtime_checkable

from store.errors import UserError
from workbench.models.decoded import Decoded, Watched, common_prefix, read_watched
from workbench.models.llama_facts import prefix_cache_verdict
from workbench.models.request import Sampler

DEFAULT_CTX = 4096
"""Context size when `--ctx` is not given (capped by the model's trained context)."""


class Tokenizing(Protocol):
    """What planning a request and reading its answer need of a model: its context and its
    tokenizer. The server pool (`workbench.models.server`) offers this much and decodes
    through its own `run_pool`."""

    n_ctx: int

    def tokenize(self, text: str, *, special: bool, add_special: bool = False) -> list[int]:
        """Token ids of `text` (`special` parses special-token text; `add_special` adds the
        BOS/EOS the model's metadata asks for, as llama.cpp's `llama_tokenize` does)."""

    def piece(self, token_id: int) -> bytes:
        """The bytes a token stands for."""

    def close(self) -> None:
        """Free the model."""


@runtime_checkable
class Backend(Tokenizing, Protocol):
    """What the runner needs from a model it decodes with in this process."""

    def generate(self, prompt_ids: Sequence[int], sampler: Sampler, max_tokens: int,
                 watch_ids: Sequence[int]) -> Decoded:
        """Decode from `prompt_ids` until end of generation or `max_tokens`."""

    def next_logits(self, context_ids: Sequence[int], watch_ids: Sequence[int]) -> Watched:
        """Logits of `watch_ids` for the token after `context_ids`."""


def default_threads() -> int:
    """All cores minus those other work keeps busy right now (whole cores), at least 1.

    llama.cpp's threads meet at a barrier after every operation; when another process
    holds one of the cores, the others wait for it. On the reference 2-core machine with
    one core busy, 2 threads decoded at 593 ms/token against 24 ms/token for 1 thread.
    On an idle machine this is every core (llama-cpp-python's own default is half).
    """
    cores = os.cpu_count() or 1
    return max(1, cores - int(_busy_cores(cores)))


def cpu_busy_fraction(before: Sequence[int], after: Sequence[int]) -> float:
    """Share of CPU time not idle between two samples of /proc/stat's `cpu` line.

    Args:
        before, after: the line's counters (user nice system idle iowait irq softirq steal).

    Returns:
        1 − Δ(idle + iowait) / Δtotal, in [0, 1] (0 when no time passed).
    """
    total = sum(after[:8]) - sum(before[:8])
    idle = (after[3] + after[4]) - (before[3] + before[4])
    return 0.0 if total <= 0 else min(1.0, max(0.0, 1.0 - idle / total))


def _read_cpu_counters() -> list[int]:
    with open("/proc/stat", encoding="ascii") as handle:
        return [int(x) for x in handle.readline().split()[1:9]]


def _busy_cores(cores: int, window_s: float = 0.25) -> float:
    """Cores busy with other work now: /proc/stat sampled over `window_s`.

    The 1-minute load average lags by a minute: right after a test run or a benchmark it
    still reports busy cores on an idle machine and would halve the threads. Where
    /proc/stat is missing, fall back to the load average, then to 0.
    """
    import time

    try:
        before = _read_cpu_counters()
        time.sleep(window_s)
        return cpu_busy_fraction(before, _read_cpu_counters()) * cores
    except (OSError, ValueError, IndexError):
        try:
            return os.getloadavg()[0]
        except OSError:  # no load average on this platform
            return 0.0


def _cpu_has_amx() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("flags"):
                    return "amx_int8" in line.split() or "amx_tile" in line.split()
    except OSError:
        return False
    return False


def use_extra_buffers() -> bool:
    """Whether llama.cpp may repack weights into extra buffer types (AMX, CPU_REPACK).

    Default: yes, except on CPUs that report AMX: there llama.cpp's AMX matmul crashed
    the process (SIGSEGV in `ggml_backend_amx_mul_mat`) on every batch of more than one
    token on our reference machine, a crash no Python code can catch. `PAW_LLAMA_EXTRA_BUFFERS`
    =1/0 overrides.
    """
    setting = os.environ.get("PAW_LLAMA_EXTRA_BUFFERS")
    if setting is not None:
        return setting.strip().lower() not in ("0", "false", "no", "off", "")
    return not _cpu_has_amx()


@contextmanager
def model_params(extra_buffers: bool) -> Iterator[None]:
    """While open, `Llama()` loads without extra buffer types unless `extra_buffers`.

    Llama() builds its model params from `llama_model_default_params()`; adjust that.
    The embedder (`workbench.embed.llama`) and the pool server (`serve_worker`) use it too.
    """
    import llama_cpp.llama as llama_module

    original = llama_module.llama_cpp.llama_model_default_params
    if extra_buffers:
        yield
        return

    def without_extra_buffers() -> Any:
        params = original()
        params.use_extra_bufts = False
        return params

    llama_module.llama_cpp.llama_model_default_params = without_extra_buffers
    try:
        yield
    finally:
        llama_module.llama_cpp.llama_model_default_params = original


class LlamaCppBackend:
    """A GGUF model loaded in-process with llama-cpp-python."""

    def __init__(self, path: str, *, threads: int | None = None, gpu_layers: int = 0,
                 ctx: int | None = None, context_length: int | None = None,
                 prefix_cache_safe: bool = True, extra_buffers: bool | None = None,
                 batch_threads: int | None = None) -> None:
        """Load the model.

        Args:
            path: the GGUF file.
            threads: CPU threads for generation, one token at a time (default: all cores,
                where llama-cpp-python's own default for generation is half of them).
            batch_threads: CPU threads for prompt evaluation (default: `threads`).
            gpu_layers: layers to offload to a GPU (0: CPU only; -1: all).
            ctx: context size in tokens (default: min(trained context, 4096)).
            context_length: the model's trained context (from its metadata).
            prefix_cache_safe: False to evaluate every prompt fresh (also off when the
                loaded model reports sliding-window or recurrent state).
            extra_buffers: allow weight repacking buffers (default: `use_extra_buffers()`).

        Raises:
            UserError: llama.cpp cannot load the file.
        """
        # Threads that wait at llama.cpp's barriers sleep instead of spinning, so a core
        # taken by other work does not stall the rest (set before libgomp first loads;
        # an explicit OMP_WAIT_POLICY wins).
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        from llama_cpp import Llama

        threads = threads or default_threads()
        n_ctx = ctx or min(context_length or DEFAULT_CTX, DEFAULT_CTX)
        self.path = path
        self.threads = threads
        self.batch_threads = batch_threads or threads
        self.extra_buffers = use_extra_buffers() if extra_buffers is None else extra_buffers
        try:
            with model_params(self.extra_buffers):
                self.llm = Llama(
                    model_path=path, n_ctx=n_ctx, n_batch=512, n_threads=threads,
                    n_threads_batch=self.batch_threads, n_gpu_layers=gpu_layers,
                    logits_all=False, verbose=False,
                )
        except (ValueError, RuntimeError, OSError) as exc:
            raise UserError(f"{path}: llama.cpp could not load the model ({exc})") from None
        # The registered flag came from llama.cpp at `paw models add` (or, for a model
        # registered before that, from a list of architectures): the loaded model decides.
        self.prefix_cache_safe = prefix_cache_safe and prefix_cache_verdict(self.llm.model)[0]
        # llama.cpp may pad the context it allocates, but Llama's token buffer has the
        # size asked for: the smaller of the two is the real limit.
        self.n_ctx = min(n_ctx, self.llm.n_ctx())
        self._n_vocab = self.llm.n_vocab()
        self._pieces: dict[int, bytes] = {}
        # Cached positions filled by a batch evaluation (prompt and continued prefix).
        # Only these are reused by later prompts: positions filled token by token while
        # decoding carry slightly different numbers (llama.cpp uses other kernels for a
        # one-token batch), and reusing them would make results depend on the schedule.
        self._reusable = 0
        self._decoders: list[Any] = []
        # Batch decoders on other threads tokenize cues and read token pieces too.
        self._vocab_lock = threading.Lock()

    def batch_decoders(self, count: int, n_seq: int, ctx_seq: int, *, threads: int,
                       prefix_reuse: bool | None = None) -> list[Any]:
        """`count` `BatchDecoder`s of `n_seq` sequences of at least `ctx_seq` tokens each
        (kept, and reused while their settings fit and there are enough of them).

        Each sequence's KV stream is padded to a multiple of 256 cells, as llama.cpp does.

        Args:
            count: decoders (each its own llama.cpp context on this model).
            n_seq: sequences per decoder.
            ctx_seq: KV cells each sequence needs.
            threads: threads of each decoder's context.
            prefix_reuse: reuse cached prefixes (default: whether the model is safe for it).
        """
        from workbench.models.batch import BatchDecoder

        reuse = self.prefix_cache_safe if prefix_reuse is None else prefix_reuse
        ctx_seq = min(-(-ctx_seq // 256) * 256, max(self.n_ctx, 256))
        kept = self._decoders
        if len(kept) >= count and all(d.n_seq == n_seq and d.ctx_seq >= ctx_seq
                                      and d.threads == threads and d.prefix_reuse == reuse
                                      for d in kept):
            return kept[:count]
        self.close_decoders()
        for _ in range(count):
            self._decoders.append(BatchDecoder(
                self.llm, n_seq, ctx_seq, prefix_cache_safe=self.prefix_cache_safe,
                threads=threads, prefix_reuse=reuse))
        return list(self._decoders)

    def close_decoders(self) -> None:
        """Free the batch decoders' contexts."""
        for decoder in self._decoders:
            decoder.close()
        self._decoders = []

    def kv_bytes_per_cell(self) -> int:
        """Bytes of K and V cache per token position (f16, every layer), for sizing decoders."""
        import llama_cpp

        model = self.llm._model.model
        layers = llama_cpp.llama_model_n_layer(model)
        heads = max(1, llama_cpp.llama_model_n_head(model))
        kv_width = llama_cpp.llama_model_n_embd(model) * llama_cpp.llama_model_n_head_kv(model)
        return 2 * 2 * layers * kv_width // heads

    def tokenize(self, text: str, *, special: bool, add_special: bool = False) -> list[int]:
        """Token ids of `text`; BOS/EOS only with `add_special` (chat templates carry their
        own; llama-cpp-python's `add_bos` is llama.cpp's `add_special`, which adds BOS and
        EOS as the GGUF's `tokenizer.ggml.add_bos_token`/`add_eos_token` say)."""
        with self._vocab_lock:
            return self.llm.tokenize(text.encode("utf-8"), add_bos=add_special,
                                     special=special)

    def piece(self, token_id: int) -> bytes:
        """The bytes of one token (cached)."""
        piece = self._pieces.get(token_id)
        if piece is None:
            with self._vocab_lock:
                piece = self.llm._model.detokenize([token_id], special=False)
            self._pieces[token_id] = piece
        return piece

    def _is_eog(self, token_id: int) -> bool:
        import llama_cpp

        return bool(llama_cpp.llama_vocab_is_eog(self.llm._model.vocab, token_id))

    def _watch(self, watch_ids: Sequence[int]) -> Watched:
        return read_watched(self.llm.ctx, -1, self._n_vocab, watch_ids)

    def generate(self, prompt_ids: Sequence[int], sampler: Sampler, max_tokens: int,
                 watch_ids: Sequence[int],
                 stop_at: Callable[[int, Watched, int], bool] | None = None) -> Decoded:
        """Decode with llama.cpp's sampler chain, reusing the cached prefix when safe.

        `stop_at(step, watched, token)`, when given, is asked after every step; True ends
        the decode there with finish 'stopped' (the self-check, at a first difference)."""
        llm = self.llm
        self._keep_reusable_prefix(prompt_ids)
        llm.set_seed(sampler.seed)
        tokens: list[int] = []
        steps: list[Watched] = []
        finish = "length"
        stream = llm.generate(
            list(prompt_ids), temp=sampler.temperature, top_k=sampler.top_k,
            top_p=sampler.top_p, min_p=sampler.min_p, repeat_penalty=sampler.repeat_penalty,
            reset=True,
        )
        try:
            if max_tokens > 0:
                for token in stream:
                    # Before the generator resumes, the context's last logits are the
                    # ones this token was sampled from.
                    steps.append(self._watch(watch_ids))
                    if stop_at is not None and stop_at(len(steps) - 1, steps[-1], token):
                        finish = "stopped"
                        break
                    if self._is_eog(token):
                        finish = "stop"
                        break
                    tokens.append(token)
                    if len(tokens) >= max_tokens:
                        break
        finally:
            stream.close()
        self._reusable = len(prompt_ids)
        return Decoded(tuple(tokens), finish, tuple(steps))

    def _common_prefix(self, ids: Sequence[int]) -> int:
        return common_prefix(self.llm._input_ids.tolist(), ids)

    def _cut_cache(self, keep: int) -> None:
        """Keep the first `keep` cached positions (or none, when cutting is unsafe)."""
        llm = self.llm
        if keep >= llm.n_tokens:
            return
        if self.prefix_cache_safe and keep > 0 and llm._ctx.kv_cache_seq_rm(-1, keep, -1):
            llm.n_tokens = keep
        else:
            llm.reset()
        self._reusable = min(self._reusable, llm.n_tokens)

    def _keep_reusable_prefix(self, prompt_ids: Sequence[int]) -> None:
        """Leave in the cache only what `Llama.generate` may reuse for this prompt.

        That is the batch-evaluated part shared with the previous prompt, and never so
        much that fewer than two prompt tokens are left to evaluate: llama-cpp-python
        would re-evaluate a single token, i.e. with the one-token kernels.
        """
        if not self.prefix_cache_safe:
            self.llm.reset()
            self._reusable = 0
            return
        keep = min(self._common_prefix(prompt_ids), self._reusable, len(prompt_ids) - 2)
        self._cut_cache(max(keep, 0))

    def next_logits(self, context_ids: Sequence[int], watch_ids: Sequence[int]) -> Watched:
        """Evaluate `context_ids` on top of the cached context and read the last logits.

        Used right after `generate` to append the answer cue: the cache then holds this
        request's own prompt and output, which every schedule computes the same way.
        At least two tokens are evaluated, so the batch kernels are used.
        """
        ids = list(context_ids)
        self._cut_cache(max(min(self._common_prefix(ids), len(ids) - 2), 0))
        self.llm.eval(ids[self.llm.n_tokens:])
        return self._watch(watch_ids)

    def reset(self) -> None:
        """Forget the cached context (after an error mid-decode)."""
        self.llm.reset()
        self._reusable = 0

    def close(self) -> None:
        """Free the model and its contexts."""
        self.close_decoders()
        self.llm.close()
