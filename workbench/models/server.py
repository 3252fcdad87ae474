"""Scale-out: the runner's plan sent to a pool of OpenAI-compatible llama.cpp servers.

A pool is a list of base URLs of `python -m llama_cpp.server` processes (started by
`paw serve` here, or on other machines). The auditor's machine keeps the SQLite file,
plans, keys, parses and stores; the servers only decode. Per request:

1. `POST /v1/completions` with the prompt text (chat prompt + any continued chain) and
   every sampler setting spelled out (the server's own defaults differ from PAW's);
2. the output is parsed here, and its token ids are the output text re-tokenized with the
   model's own vocabulary (loaded here vocabulary-only; the API returns text, not ids);
3. the option distribution is read with one more request at the answer position — the
   prompt + the output up to the label token ("output"), the prompt itself for a direct
   answer ("prompt"), or + the cue ("appended") — `max_tokens=1`, `logprobs=TOP_N`, end of
   generation biased away so the server always returns that position's top-N log-probs
   (computed from the raw logits). A label candidate outside the top N counts as 0.

Scheduling: every request of an item goes to one endpoint (its prefix cache then holds the
item's prompt); items are spread over endpoints by load; each endpoint gets one request at
a time (llama_cpp.server serves one at a time). An endpoint that fails (refused, HTTP
error, time-out) is dropped for the rest of the run and its items move to the others; the
failed request is retried there. Results are stored by the calling thread only, once per
key. If every endpoint is down, what is left is stored as status 'error' (retried on the
next run, like any backend failure).

Keys: a server generation is keyed with `backend: llama_cpp.server` added, so it never
shares a key with an in-process one — its token ids and distributions are not bit-identical
to in-process decoding (docs/runner.md, "Server pool", gives the measured bound).
"""

from __future__ import annotations

import json
import queue
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from store.generations import NewGeneration
from store.records import ModelRecord
from workbench.models.answers import option_distribution, parse_answer

KEY_TAG = "llama_cpp.server"
"""Added to the generation key of every server generation."""

TOP_N = 20
"""Log-probs asked for at the answer position (a label candidate outside them counts 0)."""

TIMEOUT_S = 600.0
"""One request's time-out; longer means the endpoint is treated as failed."""


class ServerError(RuntimeError):
    """An endpoint did not answer (refused, HTTP error, time-out, malformed reply)."""


def parse_urls(text: str | Sequence[str] | None) -> list[str]:
    """Base URLs from `http://a:8081,http://b:8081` (or a list); trailing slashes dropped."""
    if not text:
        return []
    parts = text.split(",") if isinstance(text, str) else list(text)
    return [p.strip().rstrip("/") for p in parts if p.strip()]


def post_json(url: str, payload: dict[str, Any], timeout: float = TIMEOUT_S) -> dict[str, Any]:
    """POST `payload` as JSON and return the JSON reply.

    Raises:
        ServerError: anything but a 200 with a JSON body.
    """
    request = urllib.request.Request(url, data=json.dumps(payload).encode("utf-8"),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return json.loads(reply.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        body = exc.read().decode("utf-8", "replace")[:300]
        raise ServerError(f"{url}: HTTP {exc.code}: {body}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise ServerError(f"{url}: {exc}") from None


def is_up(base_url: str, timeout: float = 2.0) -> bool:
    """Whether `GET /v1/models` answers 200."""
    try:
        with urllib.request.urlopen(base_url + "/v1/models", timeout=timeout) as reply:
            return reply.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def servers_from_env() -> list[str]:
    """The pool named by the `PAW_SERVERS` environment variable (comma-separated URLs)."""
    import os

    return parse_urls(os.environ.get("PAW_SERVERS"))


def served_model(base_url: str) -> str | None:
    """The file name of the model an endpoint serves (from `GET /v1/models`), if it answers."""
    import os

    try:
        with urllib.request.urlopen(base_url + "/v1/models", timeout=5.0) as reply:
            data = json.loads(reply.read().decode("utf-8"))
        return os.path.basename(str(data["data"][0]["id"]))
    except (urllib.error.URLError, OSError, ValueError, KeyError, IndexError, TypeError):
        return None


def pool_serves(urls: Sequence[str], model: ModelRecord) -> bool:
    """Whether every endpoint that answers serves `model`'s file (by file name).

    Raises:
        UserError: no endpoint answers at all.
    """
    import os

    from store.errors import UserError

    names = {url: served_model(url) for url in urls}
    answering = {url: name for url, name in names.items() if name is not None}
    if not answering:
        raise UserError(f"no server of the pool answers ({', '.join(urls)}); start them "
                        "with `paw serve` or check PAW_SERVERS")
    return all(name == os.path.basename(model.path) for name in answering.values())


class ServerPoolBackend:
    """The runner's backend for a pool of llama_cpp.server endpoints.

    Tokenizing is done here with the model's vocabulary (the same GGUF file, loaded
    vocabulary-only, which the registry has already hashed); decoding on the servers.

    Args:
        model: the registered model (its file must be here too, for the vocabulary).
        urls: the endpoints' base URLs.
        ctx: the servers' context size (`paw serve --ctx`, default 4096).
        top_n: log-probs asked for at the answer position.
    """

    key_tag = KEY_TAG

    def __init__(self, model: ModelRecord, urls: Sequence[str], *, ctx: int = 4096,
                 top_n: int = TOP_N) -> None:
        from llama_cpp import Llama

        if not urls:
            raise ValueError("a server pool needs at least one URL")
        self.urls = list(urls)
        self.n_ctx = ctx
        self.top_n = top_n
        self.threads = None
        self.vocab = Llama(model_path=model.path, vocab_only=True, verbose=False)
        self.add_bos = bool(self.vocab._model.add_bos_token())
        self._pieces: dict[int, bytes] = {}
        eog = [t for t in range(self.vocab.n_vocab()) if self._is_eog(t)]
        self._no_eog = {str(t): -1e9 for t in eog}

    def _is_eog(self, token: int) -> bool:
        import llama_cpp

        return bool(llama_cpp.llama_vocab_is_eog(self.vocab._model.vocab, token))

    def tokenize(self, text: str, *, special: bool) -> list[int]:
        """Token ids of `text`, no BOS."""
        return self.vocab.tokenize(text.encode("utf-8"), add_bos=False, special=special)

    def piece(self, token_id: int) -> bytes:
        """The bytes of one token."""
        piece = self._pieces.get(token_id)
        if piece is None:
            piece = self.vocab._model.detokenize([token_id], special=False)
            self._pieces[token_id] = piece
        return piece

    def close(self) -> None:
        """Free the vocabulary."""
        self.vocab.close()

    # ------------------------------------------------------------ one request

    def _prompt_text(self, tok: Any) -> str:
        rendered = tok.prepared.rendered
        text = rendered.text + (rendered.prefix or "")
        bos = self.vocab._model.token_get_text(self.vocab.token_bos()) if self.add_bos else ""
        # The server prepends BOS itself when the model asks for one; the chat template's
        # own BOS text would make it two.
        return text[len(bos):] if bos and text.startswith(bos) else text

    def _top(self, url: str, context: str) -> dict[str, float]:
        reply = post_json(url + "/v1/completions", {
            "prompt": context, "max_tokens": 1, "temperature": 0.0, "top_k": 0, "top_p": 1.0,
            "min_p": 0.0, "repeat_penalty": 1.0, "logprobs": self.top_n,
            "logit_bias": self._no_eog,
        })
        try:
            return dict(reply["choices"][0]["logprobs"]["top_logprobs"][0])
        except (KeyError, IndexError, TypeError):
            raise ServerError(f"{url}: no log-probs in the reply") from None

    def serve(self, url: str, tok: Any, model_id: int, max_new: int) -> NewGeneration:
        """Generate one request on the endpoint `url` and build its row.

        Raises:
            ServerError: the endpoint failed (the caller retries elsewhere).
        """
        from workbench.models.execute import base_row, label_token_index

        started = time.perf_counter()
        request, rendered = tok.prepared.request, tok.prepared.rendered
        sampler = request.sampler
        prompt = self._prompt_text(tok)
        reply = post_json(url + "/v1/completions", {
            "prompt": prompt, "max_tokens": max_new, "temperature": sampler.temperature,
            "top_p": sampler.top_p, "top_k": sampler.top_k, "min_p": sampler.min_p,
            "repeat_penalty": sampler.repeat_penalty, "seed": sampler.seed,
            "presence_penalty": 0.0, "frequency_penalty": 0.0,
        })
        try:
            choice = reply["choices"][0]
            output, finish = choice["text"] or "", choice.get("finish_reason") or "length"
        except (KeyError, IndexError, TypeError):
            raise ServerError(f"{url}: malformed completion reply") from None
        ids = tuple(self.tokenize(output, special=False)) if output else ()
        pieces = [self.piece(t) for t in ids]
        parsed = parse_answer(output, rendered.labels, leading=request.mode == "direct")
        index = None if request.mode == "direct" else \
            label_token_index(pieces, output, parsed.start)
        if request.mode == "direct":
            context, position = prompt, "prompt"
        elif index is not None:
            context = prompt + b"".join(pieces[:index]).decode("utf-8", "replace")
            position = "output"
        else:
            before = (rendered.prefix or "") + output
            separator = "" if not before or before[-1].isspace() else "\n"
            context, position = prompt + output + separator + rendered.cue, "appended"
        top = self._top(url, context)
        probs, details = self._distribution(tok, top, position)
        details["endpoint"] = url
        return NewGeneration(
            **base_row(tok, model_id), output=output, output_token_ids=ids,
            answer=parsed.answer, parse_status=parsed.status, option_probs=probs,
            option_logits=details, tokens_out=len(ids),
            latency_s=time.perf_counter() - started,
            finish_reason="stop" if finish == "stop" else "length",
        )

    def _distribution(self, tok: Any, top: dict[str, float], position: str
                      ) -> tuple[dict[str, float] | None, dict[str, Any]]:
        """Label probabilities from top-N log-probs (logprob = logit − logsumexp)."""
        found: dict[int, float] = {}
        shown: dict[str, dict[str, float]] = {}
        for label, ids in tok.candidates.items():
            shown[label] = {}
            for t in ids:
                text = self.piece(t).decode("utf-8", "replace")
                if text in top:
                    found[t] = float(top[text])
                    shown[label][text] = float(top[text])
        present = {label: tuple(t for t in ids if t in found)
                   for label, ids in tok.candidates.items()}
        present = {label: ids for label, ids in present.items() if ids}
        details: dict[str, Any] = {"candidates": shown, "vocab_logsumexp": 0.0,
                                   "position": position, "source": KEY_TAG,
                                   "top_n": self.top_n,
                                   "missing": sorted(set(tok.candidates) - set(present))}
        if not present:
            details["labels"] = {label: None for label in tok.candidates}
            return None, details
        probs, combined = option_distribution(present, found)
        details["labels"] = {label: combined.get(label) for label in tok.candidates}
        return {label: probs.get(label, 0.0) for label in tok.candidates}, details

    # ------------------------------------------------------------ the pool

    def run_pool(self, work: Sequence[Any], model_id: int, plan_of: Callable[[Any], Any],
                 record: Callable[[Any, NewGeneration], None],
                 should_stop: Callable[[], bool] | None = None) -> bool:
        """Run `work` (in its order) across the endpoints; `record` is called here, once per key.

        Returns:
            True when stopped early.
        """
        from workbench.models.execute import error_row

        lock = threading.Lock()
        queues: dict[str, deque] = {url: deque() for url in self.urls}
        pinned: dict[Any, str] = {}
        load = dict.fromkeys(self.urls, 0)
        for tok in work:  # every request of an item to one endpoint, items by load
            item = tok.prepared.request.item.id
            url = pinned.get(item)
            if url is None:
                url = pinned[item] = min(self.urls, key=lambda u: load[u])
            queues[url].append(tok)
            load[url] += 1
        live = set(self.urls)
        results: queue.Queue = queue.Queue()
        stop = threading.Event()

        def move_away(dead: str, pending: list, exc: Exception) -> None:
            """Re-pin a failed endpoint's items (whole items) to the least-loaded live ones."""
            by_item: dict[Any, list] = {}
            for tok in pending:
                by_item.setdefault(tok.prepared.request.item.id, []).append(tok)
            for item, toks in by_item.items():
                if not live:
                    for tok in toks:
                        results.put((tok, error_row(tok, model_id, ServerError(
                            f"every endpoint failed (last: {exc})"), time.perf_counter())))
                    continue
                url = min(live, key=lambda u: len(queues[u]))
                pinned[item] = url
                queues[url].extend(toks)

        running: set[str] = set()
        threads: list[threading.Thread] = []

        def worker(url: str) -> None:
            while True:
                with lock:  # leave and deregister atomically, so no work is stranded
                    if stop.is_set() or url not in live or not queues[url]:
                        running.discard(url)
                        return
                    tok = queues[url].popleft()
                try:
                    row = self.serve(url, tok, model_id, plan_of(tok).max_new)
                except ServerError as exc:
                    with lock:
                        live.discard(url)
                        pending = [tok, *queues[url]]
                        queues[url].clear()
                        move_away(url, pending, exc)
                        revive = [u for u in live if queues[u] and u not in running]
                        running.discard(url)
                    for other in revive:
                        start(other)
                    return
                except Exception as exc:  # noqa: BLE001 - a bug for this request only
                    row = error_row(tok, model_id, exc, time.perf_counter())
                results.put((tok, row))

        def start(url: str) -> None:
            with lock:
                if url in running:
                    return
                running.add(url)
            thread = threading.Thread(target=worker, args=(url,), daemon=True)
            threads.append(thread)
            thread.start()

        for url in self.urls:
            if queues[url]:
                start(url)
        stored: set[str] = set()
        stopped = False
        while True:
            if should_stop is not None and not stopped and should_stop():
                stopped = True
                stop.set()
            try:
                message = results.get(timeout=0.2)
            except queue.Empty:
                with lock:
                    idle = not running
                if idle and results.empty():
                    break
                continue
            tok, row = message
            if row.key in stored:  # never store one key twice
                continue
            stored.add(row.key)
            record(tok, row)
        for thread in threads:
            thread.join(timeout=1.0)
        return stopped
