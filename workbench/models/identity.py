"""Is an endpoint serving the registered model? Checked by content, never by file name.

Before an endpoint takes work (`ServerPoolBackend.admissible`) PAW compares:

1. what the server reports about its weights, where it reports it (llama-server's
   `/v1/models` `meta`): vocabulary size `n_vocab`, parameter count `n_params` and tensor
   bytes `size`, each equal to what the bundled llama.cpp reads from the local file;
2. a **fingerprint** no file name can fake: the next-token distribution after a fixed
   probe prompt (`PROBE_TEXT`, exact token ids where the server takes ids; end of
   generation banned so the position is always reported — the reported log-probs are
   the raw logits', before any bias). The local
   file's top `FINGERPRINT_TOKENS` tokens are computed in-process once per file content
   (memo in ~/.cache/paw/fingerprints.json, keyed by sha256 and llama-cpp-python version)
   and every one of their probabilities must be within `FLOOR` of the server's (a token
   outside the server's reported top N counts as 0 there).

`FLOOR` is the numerical floor stated for server against in-process decoding of the same
file (`tests/models/test_llama_server.py` BOUND, measured largest 4e-4, docs/runner.md):
a different model, or a differently quantized file, moves the top tokens' probabilities
by far more (measured in docs/runner.md, "Server identity").
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store.errors import UserError
from store.records import ModelRecord

PROBE_TEXT = "The patient was admitted to the hospital because"
"""The fixed prompt whose next-token distribution is the fingerprint."""

FINGERPRINT_TOKENS = 10
"""The local file's most probable next tokens that are compared."""

FLOOR = 0.01
"""Largest |p_server − p_local| accepted for each fingerprint token."""


@dataclass(frozen=True)
class LocalFacts:
    """What the local file is, as the bundled llama.cpp reads it.

    Attributes:
        n_vocab: vocabulary size.
        n_params: parameters.
        size: bytes of its tensors (`llama_model_size`, what llama-server reports).
        prompt_ids: the probe prompt's token ids (BOS as the model asks).
        top: the fingerprint: (token id, probability) of the most probable next tokens.
    """

    n_vocab: int
    n_params: int
    size: int
    prompt_ids: tuple[int, ...]
    top: tuple[tuple[int, float], ...]

    def describe(self) -> str:
        """One phrase for messages."""
        return f"n_vocab {self.n_vocab}, n_params {self.n_params}, size {self.size}"


_FACTS: dict[str, LocalFacts] = {}


def _memo_file() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "paw" / "fingerprints.json"


def local_facts(model: ModelRecord) -> LocalFacts:
    """The local file's facts and fingerprint (computed once per content; memoised).

    Raises:
        UserError: llama.cpp cannot load the file.
    """
    import llama_cpp

    from store.memo import read_json_memo, write_json_memo

    memo_key = f"{model.sha256}|{llama_cpp.__version__}|{PROBE_TEXT}|{FINGERPRINT_TOKENS}"
    if memo_key in _FACTS:
        return _FACTS[memo_key]
    stored = read_json_memo(_memo_file())
    entry = stored.get(memo_key)
    if isinstance(entry, dict):
        facts = LocalFacts(entry["n_vocab"], entry["n_params"], entry["size"],
                           tuple(entry["prompt_ids"]),
                           tuple((int(t), float(p)) for t, p in entry["top"]))
    else:
        facts = _compute(model.path)
        stored[memo_key] = {"n_vocab": facts.n_vocab, "n_params": facts.n_params,
                            "size": facts.size, "prompt_ids": list(facts.prompt_ids),
                            "top": [list(pair) for pair in facts.top]}
        write_json_memo(_memo_file(), stored)
    _FACTS[memo_key] = facts
    return facts


def _compute(path: str) -> LocalFacts:
    import numpy as np
    from llama_cpp import Llama

    try:
        llm = Llama(model_path=path, n_ctx=64, n_batch=64, n_threads=1, logits_all=True,
                    verbose=False)
    except ValueError as exc:
        raise UserError(f"{path}: llama.cpp could not load the model to fingerprint it "
                        f"({exc})") from None
    try:
        import llama_cpp

        add_bos = bool(llm._model.add_bos_token())
        ids = llm.tokenize(PROBE_TEXT.encode("utf-8"), add_bos=add_bos, special=False)
        llm.eval(ids)
        logits = np.asarray(llm.scores[llm.n_tokens - 1], dtype=np.float64)
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        order = np.argsort(-probs, kind="stable")[:FINGERPRINT_TOKENS]
        return LocalFacts(
            n_vocab=int(llm.n_vocab()),
            n_params=int(llama_cpp.llama_model_n_params(llm.model)),
            size=int(llama_cpp.llama_model_size(llm.model)),
            prompt_ids=tuple(int(t) for t in ids),
            top=tuple((int(t), float(probs[t])) for t in order))
    finally:
        llm.close()


def check_reported(url: str, meta: Mapping[str, Any], facts: LocalFacts, model: ModelRecord,
                   served: str) -> None:
    """Refuse a server whose reported `n_vocab`, `n_params` or `size` differ from the file's.

    Raises:
        UserError: names both identities.
    """
    for name, mine in (("n_vocab", facts.n_vocab), ("n_params", facts.n_params),
                       ("size", facts.size)):
        theirs = meta.get(name)
        if theirs is not None and int(theirs) != mine:
            raise UserError(
                f"--servers: {url} serves another model than {model.name!r}: it reports "
                f"{name} {theirs} for {served}, the registered file "
                f"{os.path.basename(model.path)} (sha256 {model.sha256[:12]}…) has {mine}")


def fingerprint_gap(server_top: Mapping[int, float], facts: LocalFacts
                    ) -> tuple[float, tuple[int, float]]:
    """The largest |p_server − p_local| over the fingerprint tokens, and (token, p_local)
    where it is (a token outside the server's reported top N counts 0 there)."""
    worst, where = 0.0, facts.top[0]
    for token, p in facts.top:
        theirs = math.exp(server_top[token]) if token in server_top else 0.0
        if abs(theirs - p) > worst:
            worst, where = abs(theirs - p), (token, p)
    return worst, where


def check_fingerprint(url: str, server_top: Mapping[int, float], facts: LocalFacts,
                      model: ModelRecord, served: str, decode: Any) -> float:
    """Refuse a server whose probe distribution is not the local file's within `FLOOR`.

    Args:
        server_top: token id -> log-probability the server reported after the probe.
        decode: token id -> its text (for the message).

    Returns:
        The largest |Δp| over the fingerprint tokens.

    Raises:
        UserError: names both identities and the token that differs most.
    """
    worst, where = fingerprint_gap(server_top, facts)
    if worst > FLOOR:
        token, p = where
        theirs = math.exp(server_top[token]) if token in server_top else 0.0
        raise UserError(
            f"--servers: {url} serves another model than {model.name!r}: after the probe "
            f"prompt {PROBE_TEXT!r} it gives {decode(token)!r} p={theirs:.4f} where the "
            f"registered file {os.path.basename(model.path)} (sha256 {model.sha256[:12]}…, "
            f"{facts.describe()}) gives p={p:.4f} (|Δp| {worst:.4f} > floor {FLOOR}); it "
            f"serves {served}: serve the registered file, or register the served one")
    return worst


def numerics_signature(top: Mapping[int, float]) -> str:
    """8 hex digits of the exact log-probabilities a server gave after the probe prompt:
    equal for two servers of one build that compute alike, different for a CPU and a CUDA
    build of one commit (which share `build_info`) or for flags that change the arithmetic
    (`-fa`, `-b`/`-ub`, `--no-repack`)."""
    import hashlib

    text = ";".join(f"{token}:{value!r}" for token, value in sorted(top.items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def check_endpoint(backend: Any, info: Any) -> tuple[float, str | None]:
    """Refuse an endpoint serving other weights than `backend.model`'s file: the sizes it
    reports, then the probe fingerprint (asked the way `backend` asks that kind of server).

    Args:
        backend: the `ServerPoolBackend` (its `http`, `model`, `top_n`, `complete`,
            `candidate_id`, `piece`).
        info: the endpoint's `ServerInfo`.

    Returns:
        The fingerprint's largest |Δp|, and for llama-server (whose probe is sent with
        `cache_prompt: false`, so its arithmetic never depends on what the slot held) the
        `numerics_signature` of its exact answer (None for other kinds, whose prefix
        caches can change the last bits).

    Raises:
        UserError: names both identities.
    """
    from workbench.models.endpoint import KIND_LLAMA_SERVER
    from workbench.models.server_settings import LLAMA_SERVER_PINNED

    facts = local_facts(backend.model)
    check_reported(info.url, info.meta, facts, backend.model, info.served)
    top: dict[int, float] = {}
    if info.kind == KIND_LLAMA_SERVER:
        reply = backend.http.post(info.url + "/completion", {
            **LLAMA_SERVER_PINNED, "prompt": list(facts.prompt_ids), "n_predict": 1,
            "n_probs": backend.top_n, "cache_prompt": False, "temperature": 0.0,
            "top_k": 0, "top_p": 1.0, "min_p": 0.0, "repeat_penalty": 1.0, "seed": 0,
            "logit_bias": backend.no_eog_list})
        try:
            top = {int(p["id"]): float(p["logprob"])
                   for p in reply["completion_probabilities"][0]["top_logprobs"]}
        except (KeyError, IndexError, TypeError, ValueError):
            raise UserError(f"--servers: {info.url} gave no log-probs for the identity "
                            "probe") from None
    else:
        prompt = list(facts.prompt_ids) if info.token_ids else PROBE_TEXT
        tops = backend.complete(info.url, {
            "model": info.model_ids[0] if info.model_ids else None, "prompt": prompt,
            "max_tokens": 1, "temperature": 0.0, "logprobs": backend.top_n,
            "logit_bias": backend.no_eog_map, "stream": False}).tops
        for cand in tops[0] if tops else ():
            token = backend.candidate_id(cand)
            if token is not None:
                top[token] = cand.logprob
    gap = check_fingerprint(info.url, top, facts, backend.model, info.served,
                            lambda t: backend.piece(t).decode("utf-8", "replace"))
    return gap, numerics_signature(top) if info.kind == KIND_LLAMA_SERVER else None


ONE_PROCESS_ROUNDS = 3
"""Generation-then-follow-up pairs sent to tell one llama-server process from several
behind one URL (a random balancer passes all of them by chance with (1/N)^3)."""


def check_one_process(backend: Any, info: Any) -> None:
    """Refuse a llama-server URL whose requests reach more than one server process.

    Each round generates one token after the probe prompt plus a token chosen for that
    round (`cache_prompt: false`, as a generation is sent), then asks for the position
    after it with the slot's cache allowed, as an answer cue is: the same process finds the
    round's prompt cached (`timings.cache_n`), another process never saw it. A
    round-robin balancer sends the two to different servers every time.

    Raises:
        UserError: names the URL and says to list the servers behind it.
    """
    from workbench.models.server_settings import LLAMA_SERVER_PINNED

    facts = local_facts(backend.model)
    pinned = {**LLAMA_SERVER_PINNED, "n_predict": 1, "n_probs": 1, "temperature": 0.0,
              "top_k": 0, "top_p": 1.0, "min_p": 0.0, "repeat_penalty": 1.0, "seed": 0}
    for round_ in range(ONE_PROCESS_ROUNDS):
        # A token of the vocabulary's middle, different each round and in each process run.
        marker = (facts.n_vocab // 2 + round_ * 7919 + os.getpid()) % facts.n_vocab
        ids = [*facts.prompt_ids, marker]
        backend.http.post(info.url + "/completion",
                          {**pinned, "prompt": ids, "cache_prompt": False})
        reply = backend.http.post(info.url + "/completion",
                                  {**pinned, "prompt": [*ids, ids[-2]], "cache_prompt": True})
        cached = (reply.get("timings") or {}).get("cache_n")
        # The whole round prompt (its marker included) is cached only where it ran:
        # another process may hold the probe prompt itself from the fingerprint request.
        if isinstance(cached, int) and cached < len(ids):
            from workbench.models.endpoint import SPLIT_ADVICE

            raise UserError(f"--servers: {info.url} answered one generation's two requests "
                            f"from different server processes (the second found {cached} "
                            f"of {len(ids)} tokens cached): {SPLIT_ADVICE}")
