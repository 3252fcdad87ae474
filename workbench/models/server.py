"""Scale-out: the runner's plan decoded by a pool of llama.cpp servers (or OpenAI-compatible ones).

The auditor's machine keeps the SQLite file, plans, keys, tokenizes (the model's own
vocabulary, loaded here vocabulary-only), parses and stores; the servers only decode.
How one generation is made depends on the kind of server (`workbench.models.endpoint`):

- `llama-server`: ONE request, `POST /completion` with the exact token ids (prompt and any
  continued chain), every sampler field pinned (`LLAMA_SERVER_PINNED`), `n_probs` top-N
  log-probs at every generated position and `return_tokens`: the output ids and the
  distribution at the answer token come from that reply, as in-process. Only an answer read
  at an appended cue needs a second request (prompt + output + cue ids, one token). The
  generation request is sent with `cache_prompt: false`: a slot that reuses what an
  earlier request left in its cache (positions filled while decoding, or a fully cached
  prompt whose last token it then evaluates alone) gives other logits, so a warm server's
  text could differ from a fresh one's (measured, docs/runner.md); the cue request reuses
  only this request's own cache, as the in-process runner does.
- `llama_cpp.server` and other OpenAI-compatible servers: `POST /v1/completions` with the
  prompt text (they take no token ids) and `logprobs`; the output ids are read back from
  the reply's token texts (each a piece of exactly one vocabulary id), else the text is
  re-tokenized here; the reply's top-N log-probs are used where its tokens are those ids,
  else (and for an appended cue) one more request reads the position.

The distribution is then built exactly as in-process (`execute.finish_generation`) from
the top-N log-probs: a label candidate outside the top N counts as probability 0.

Keys: a server generation's key adds `key_tag` = kind, build and slot mode (e.g.
`llama-server b1-0c1e570 serial`), so generations of different builds, kinds of server
or concurrency modes never share a key with each other or with in-process ones.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

from store.errors import UserError
from store.generations import NewGeneration
from store.records import ModelRecord
from workbench.models.decoded import Decoded, Watched
from workbench.models.endpoint import (
    KIND_LLAMA_SERVER,
    EndpointDown,
    SPLIT_ADVICE,
    RequestRefused,
    ServerError,
    ServerInfo,
    probe,
)
from workbench.models.openai_reply import Candidate, Reply
from workbench.models.pool_settings import (
    PoolSettings,
    load_vocabulary,
    parse_urls,
    pool_tag,
)
from workbench.models.server_settings import LLAMA_SERVER_PINNED, check_applied, check_neutral

class SplitGeneration(RequestRefused):
    """A generation's requests reached more than one server process behind one URL."""


class ServerPoolBackend:
    """The runner's backend for a pool of servers of one model.

    Args:
        model: the registered model (its file must be here too, for the vocabulary).
        settings: the pool (a `PoolSettings`, or just the list of URLs).

    Raises:
        UserError: no endpoint answers, the endpoints differ in kind or build, one serves
            another model, or a llama-server has a default PAW cannot pin.
    """

    def __init__(self, model: ModelRecord, settings: PoolSettings | Sequence[str]) -> None:
        if not isinstance(settings, PoolSettings):
            settings = PoolSettings(tuple(parse_urls(settings)))
        settings = dataclasses.replace(settings, urls=tuple(parse_urls(settings.urls)))
        if not settings.urls:
            raise UserError("--servers: the pool needs at least one URL")
        from urllib.parse import urlsplit

        for url in settings.urls:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise UserError(f"--servers: {url!r} is not a server URL "
                                "(expected http://HOST:PORT)")
        self.settings = settings
        self.http = settings.http()
        self.model = model
        self.threads = None
        self.top_n = settings.top_n
        self.infos: dict[str, ServerInfo] = {}
        down: dict[str, str] = {}  # url -> why it does not answer
        for url in settings.urls:
            try:
                self.infos[url] = probe(url, self.http)
            except EndpointDown as exc:
                down[url] = str(exc)
        if not self.infos:
            raise UserError(f"--servers: no server of the pool answers "
                            f"({'; '.join(down.values())}); "
                            "start them with `paw serve`, or check the URLs")
        self.vocab = load_vocabulary(model.path)
        self._model = self.vocab._model
        self._pieces: dict[int, bytes] = {}
        self._by_text: dict[bytes, int] | None = None
        eog = [t for t in range(self.vocab.n_vocab()) if self._is_eog(t)]
        self._eog = set(eog)
        self.no_eog_list = [[t, False] for t in eog]  # end of generation banned (llama-server)
        self.no_eog_map = {str(t): -100.0 for t in eog}  # the same, OpenAI's logit_bias
        self.fingerprint_gap: dict[str, float] = {}  # endpoint -> its identity probe's |Δp|
        self.numerics: dict[str, str] = {}  # serial llama-server endpoint -> its signature
        try:
            for info in self.infos.values():
                self.admissible(info)
        except BaseException:
            self.vocab.close()
            raise
        first = next(iter(self.infos.values()))
        self.kind, self.build = first.kind, first.build
        self.concurrency = {url: self._concurrency(info) for url, info in self.infos.items()}
        widest = max(self.concurrency.values())
        self.serial = widest <= 1  # one request per endpoint at a time (key mode `serial`)
        self.key_tag = pool_tag(first, widest, self.numerics.get(first.url))
        self.engine = self.key_tag  # recorded on each generation (`generations.engine`)
        ctxs = [i.slot_ctx for i in self.infos.values() if i.slot_ctx]
        self.n_ctx = min(ctxs) if ctxs else (settings.ctx or 4096)
        self.down = set(down)  # endpoints not answering now (kept across stages)
        self.down_reasons = down
        self.pins: dict[Any, str] = {}  # item id -> endpoint, kept across stages
        self.peak: dict[str, int] = {}  # endpoint -> most requests it had in flight at once
        self.add_bos = bool(self._model.add_bos_token())

    def admissible(self, info: ServerInfo) -> None:
        """Raise unless `info` may join this pool (same kind and build, the registered
        model's weights by content, pinnable defaults).

        Raises:
            UserError: says what differs.
        """
        first = next(iter(self.infos.values()))
        if not info.version_known and len(self.settings.urls) > 1:
            raise UserError(f"--servers: {info.url} publishes no version (no "
                            "system_fingerprint, /version or /info), so PAW cannot tell that "
                            "two endpoints run one build and will not pool their results "
                            "under one key: run it as the only --servers URL (its rows are "
                            "keyed to that URL), or use a server that says its version")
        if (info.kind, info.build) != (first.kind, first.build):
            raise UserError(f"--servers: the pool mixes builds: {first.url} is {first.kind} "
                            f"{first.build}, {info.url} is {info.kind} {info.build}; results "
                            "of different builds must not share keys, so use one build")
        if info.kind == KIND_LLAMA_SERVER:
            check_neutral(info)
            check_applied(self.http, info.url)
        from workbench.models.identity import check_endpoint

        self.fingerprint_gap[info.url], numerics = check_endpoint(self, info)
        if info.kind == KIND_LLAMA_SERVER:
            from workbench.models.identity import check_one_process

            check_one_process(self, info)
        if numerics is None or self._concurrency(info) > 1:
            return  # shared slots batch requests together: not bit-reproducible anyway
        if self.numerics and numerics not in self.numerics.values():  # incl. its own, earlier
            url, theirs = next(iter(self.numerics.items()))
            raise UserError(
                f"--servers: the pool mixes arithmetic: {url} and {info.url} run build "
                f"{info.build} but answer the probe prompt with different bits (numerics "
                f"{theirs} vs {numerics}: a CPU and a GPU build of one commit, or other "
                "-fa/-b/-ub/--no-repack flags); their results must not share keys, so pool "
                "servers of one device class and one set of flags")
        self.numerics[info.url] = numerics

    def _concurrency(self, info: ServerInfo) -> int:
        return self.settings.concurrency or max(1, info.slots)

    def _is_eog(self, token: int) -> bool:
        import llama_cpp

        return bool(llama_cpp.llama_vocab_is_eog(self._model.vocab, token))

    def tokenize(self, text: str, *, special: bool, add_special: bool = False) -> list[int]:
        """Token ids of `text` (BOS/EOS only with `add_special`, as the model asks)."""
        return self.vocab.tokenize(text.encode("utf-8"), add_bos=add_special, special=special)

    def piece(self, token_id: int) -> bytes:
        """The bytes of one token."""
        piece = self._pieces.get(token_id)
        if piece is None:
            piece = self._model.detokenize([token_id], special=False)
            self._pieces[token_id] = piece
        return piece

    def close(self) -> None:
        """Free the vocabulary."""
        self.vocab.close()

    def run_pool(self, work: Sequence[Any], model_id: int, plan_of: Callable[[Any], Any],
                 record: Callable[[Any, NewGeneration], None],
                 should_stop: Callable[[], bool] | None = None,
                 emit: Callable[[Any], None] | None = None) -> bool:
        """Run `work` across the endpoints (`workbench.models.dispatch`); True when stopped."""
        from workbench.models.dispatch import Dispatcher

        return Dispatcher(self, model_id, plan_of, record, emit).run(work, should_stop)

    # ------------------------------------------------------------ one request

    def serve(self, url: str, tok: Any, model_id: int, plan: Any) -> NewGeneration:
        """Generate one request on endpoint `url` and build its row.

        Raises:
            EndpointDown: the endpoint failed (the dispatcher retries elsewhere).
            RequestRefused: the endpoint refused this request (4xx).
        """
        from workbench.models.execute import finish_generation

        started = time.perf_counter()
        failures: list[ServerError] = []

        made: list[int] = []  # tokens the generation request left in its slot's cache

        def next_logits(ids: Sequence[int], watch: Sequence[int]) -> Watched:
            # The slot that made this generation holds its prompt and output: a follow-up
            # request that finds less of it cached reached another server process.
            held = min(len(ids), len(tok.context_ids) + len(made)) - 1
            try:
                return self._position(url, tok, ids, watch, held)
            except ServerError as exc:
                failures.append(exc)
                raise

        if self.kind == KIND_LLAMA_SERVER:
            decoded = self._generate_ids(url, tok, plan)
        else:
            decoded = self._generate_text(url, tok, plan)
        made.extend(decoded.token_ids)
        if tok.prepared.request.mode == "direct" and not decoded.steps:
            decoded = dataclasses.replace(
                decoded, steps=(next_logits(tok.context_ids, plan.watch_ids),))
        row = finish_generation(self, tok, model_id, plan, decoded, next_logits, started)
        if failures:
            raise failures[-1]
        if row.option_logits is None:
            return row
        details = dict(row.option_logits)
        details.update(endpoint=url, source=self.kind, build=self.build, top_n=self.top_n,
                       slots="serial" if self.concurrency.get(url, 1) <= 1 else "shared",
                       missing=sorted(label for label, value in
                                      (details.get("labels") or {}).items() if value is None))
        return dataclasses.replace(row, option_logits=details)

    def _watched(self, top: dict[int, float], watch: Sequence[int]) -> Watched:
        """Watched 'logits' from top-N log-probs (log p = logit − logsumexp: same softmax)."""
        return Watched(tuple(top.get(t, float("-inf")) for t in watch), 0.0)

    def _generate_ids(self, url: str, tok: Any, plan: Any) -> Decoded:
        sampler = tok.prepared.request.sampler
        reply = self.http.post(url + "/completion", {
            **LLAMA_SERVER_PINNED, "prompt": list(tok.context_ids), "n_predict": plan.max_new,
            "n_probs": self.top_n, "return_tokens": True, "cache_prompt": False,
            "temperature": sampler.temperature,
            "top_k": sampler.top_k, "top_p": sampler.top_p, "min_p": sampler.min_p,
            "repeat_penalty": sampler.repeat_penalty, "seed": sampler.seed,
        })
        try:
            ids = [int(t) for t in reply["tokens"]]
            probs = reply.get("completion_probabilities") or []
            steps = [self._watched({int(p["id"]): float(p["logprob"])
                                    for p in step["top_logprobs"]}, plan.watch_ids)
                     for step in probs]
        except (KeyError, TypeError, ValueError):
            raise EndpointDown(f"{url}: malformed /completion reply") from None
        finish = "stop" if reply.get("stop_type") == "eos" else "length"
        if ids and ids[-1] in self._eog:
            ids = ids[:-1]
        return Decoded(tuple(ids), finish, tuple(steps))

    def _prompt_text(self, tok: Any, extra: Sequence[int] = ()) -> str:
        rendered = tok.prepared.rendered
        text = rendered.text + (rendered.prefix or "")
        bos = self._model.token_get_text(self.vocab.token_bos()) if self.add_bos else ""
        # The server prepends BOS itself when the model asks for one; the chat template's
        # own BOS text would make it two.
        if bos and text.startswith(bos):
            text = text[len(bos):]
        return text + b"".join(self.piece(t) for t in extra).decode("utf-8", "replace")

    def _openai_payload(self, url: str, tok: Any, prompt: str | list[int], max_tokens: int
                        ) -> dict[str, Any]:
        sampler = tok.prepared.request.sampler
        info = self.infos.get(url) or next(iter(self.infos.values()))
        return {
            "model": info.model_ids[0] if info.model_ids else None, "prompt": prompt,
            "max_tokens": max_tokens, "temperature": sampler.temperature,
            "top_p": sampler.top_p, "top_k": sampler.top_k, "min_p": sampler.min_p,
            "repeat_penalty": sampler.repeat_penalty, "seed": sampler.seed,
            "presence_penalty": 0.0, "frequency_penalty": 0.0, "mirostat_mode": 0,
            "logprobs": self.top_n, "stream": False,
            **({"return_tokens_as_token_ids": True} if info.token_id_texts else {}),
        }

    def _openai_prompt(self, url: str, tok: Any, extra: Sequence[int] = ()
                       ) -> str | list[int]:
        """The exact ids where the server takes ids (the chain is never re-tokenized), else
        the prompt text."""
        info = self.infos.get(url)
        if info is not None and info.token_ids:
            return list(tok.context_ids) + list(extra)
        return self._prompt_text(tok, extra)

    def complete(self, url: str, payload: dict[str, Any]) -> Reply:
        """POST /v1/completions and read the reply (either log-probability format).

        Raises:
            RequestRefused: the reply has no log-probabilities (names the capability).
            EndpointDown: the reply is not a completion.
        """
        from workbench.models.openai_reply import MalformedReply, NoLogprobs, read_reply

        reply = self.http.post(url + "/v1/completions", payload)
        try:
            return read_reply(reply)
        except NoLogprobs as exc:
            raise RequestRefused(f"{url}: {exc}: PAW reads the answer from them") from None
        except MalformedReply as exc:
            raise EndpointDown(f"{url}: {exc}") from None

    def candidate_id(self, cand: Candidate) -> int | None:
        """The vocabulary id of a reply's token: its `id`, else the one id whose piece is
        its bytes or text (None when none or several are)."""
        if cand.id is not None:
            return cand.id
        if self._by_text is None:
            counts: dict[bytes, list[int]] = {}
            for t in range(self.vocab.n_vocab()):
                counts.setdefault(self.piece(t), []).append(t)
            self._by_text = {piece: ids[0] for piece, ids in counts.items() if len(ids) == 1}
        raw = cand.raw if cand.raw is not None else cand.text.encode("utf-8")
        return self._by_text.get(raw)

    def _top(self, top: Sequence[Candidate], watch: Sequence[int]) -> Watched:
        found = {self.candidate_id(c): c.logprob for c in top}
        return self._watched({t: v for t, v in found.items() if t is not None}, watch)

    def _generate_text(self, url: str, tok: Any, plan: Any) -> Decoded:
        reply = self.complete(url, self._openai_payload(
            url, tok, self._openai_prompt(url, tok), plan.max_new))
        ids = self._ids_of(reply)
        if ids is None:  # the reply's tokens do not spell the output: re-tokenize the text
            output = reply.text
            ids = tuple(self.tokenize(output, special=False)) if output else ()
            steps = [self._top(reply.tops[0], plan.watch_ids)] if reply.tops and \
                tok.prepared.request.mode == "direct" else []  # the prompt's end
        else:
            steps = [self._top(top, plan.watch_ids) for top in reply.tops[:len(ids) + 1]]
            if ids and ids[-1] in self._eog:
                ids = ids[:-1]
        return Decoded(ids, reply.finish, tuple(steps))

    def _ids_of(self, reply: Reply) -> tuple[int, ...] | None:
        """The generated ids, from the reply's tokens (their ids where the server gives
        them, else one id per distinct piece text), checked to spell the reply's text with
        this vocabulary's pieces; None when one is unknown or they do not spell it."""
        ids = [self.candidate_id(c) for c in reply.tokens]
        if None in ids or len(reply.tops) < len(ids):
            return None
        known = [t for t in ids if t is not None]
        text = b"".join(self.piece(t) for t in known if t not in self._eog)
        if text.decode("utf-8", "replace") != reply.text:
            return None
        return tuple(known)

    def _position(self, url: str, tok: Any, ids: Sequence[int], watch: Sequence[int],
                  held: int = 0) -> Watched:
        """The top-N log-probs after `ids` (one token drawn, end of generation banned, so the
        server always reports that position; the reported log-probs are pre-sampling).

        llama-server, serial slots: the request reuses the generation's own cache (nothing
        else of this pool runs on that server meanwhile), and its reply says how much it
        reused (`timings.cache_n`); less than `held` tokens means it reached another server
        process than the generation (a load balancer behind the URL), and the generation
        is refused rather than stored split (issue 36.3). Shared slots are not checked
        (another request may take the slot between the two; that mode is keyed `shared`
        and never claimed reproducible).

        Raises:
            SplitGeneration: as said.
        """
        if self.kind == KIND_LLAMA_SERVER:
            reply = self.http.post(url + "/completion", {
                **LLAMA_SERVER_PINNED, "prompt": list(ids), "n_predict": 1,
                "n_probs": self.top_n, "temperature": 0.0, "top_k": 0, "top_p": 1.0,
                "min_p": 0.0, "repeat_penalty": 1.0, "seed": 0,
                "logit_bias": self.no_eog_list,
            })
            cached = (reply.get("timings") or {}).get("cache_n")
            if self.serial and isinstance(cached, int) and cached < held:
                raise SplitGeneration(
                    f"{url}: the answer read of this generation reached another server "
                    f"process than the generation itself (it found {cached} of the "
                    f"generation's {held + 1} tokens cached): {SPLIT_ADVICE}")
            try:
                step = reply["completion_probabilities"][0]["top_logprobs"]
                return self._watched({int(p["id"]): float(p["logprob"]) for p in step}, watch)
            except (KeyError, IndexError, TypeError, ValueError):
                raise EndpointDown(f"{url}: no log-probs in the /completion reply") from None
        extra = list(ids[len(tok.context_ids):])
        payload = self._openai_payload(url, tok, self._openai_prompt(url, tok, extra), 1)
        payload.update(temperature=0.0, top_k=0, top_p=1.0, min_p=0.0, repeat_penalty=1.0,
                       logit_bias=self.no_eog_map)
        answer = self.complete(url, payload)
        if not answer.tops:
            raise EndpointDown(f"{url}: no log-probs in the completion reply")
        return self._top(answer.tops[0], watch)
