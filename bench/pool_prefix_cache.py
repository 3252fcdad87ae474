"""Benchmark (issue 40.3): does llama-server's prompt cache keep PAW's pooled results bit-identical?

PAW sends every pool generation with `cache_prompt: false` (docs/runner.md "No cache
carried between requests"), so a pool evaluates every context in full. This bench measures
what reuse would give and cost on the real C++ llama-server (`paw serve
--build-llama-server`), one server, one slot, on PAW's own requests for N demo items in a
pool's stage order: every item's greedy CoT, then every item's direct answer, then every
item's F1-style continuation of the first half of its own chain (the request that shares
the most with an earlier one: the chat prompt and tokens the server decoded).

Pass 1 sends each request with `cache_prompt: false` (PAW today); pass 2 sends the same
requests with `cache_prompt: true` and `id_slot: 0` (a pinned slot) on a freshly started
server (as an audit starts: reuse only within the pass; `--warm`: on pass 1's server, whose
prompt cache then holds every request, as on a rerun or a second sample of a context).
Prints, per pass, the prompt tokens the server evaluated (`timings.prompt_n`) and its
seconds, and for pass 2 how many replies are bit-identical to pass 1 (output ids and
every top-N log-prob), naming the first that differs.

    PYTHONPATH=. .venv/bin/python bench/pool_prefix_cache.py --items 10 --max-tokens 64
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from store import open_db
from store.datasets import get_items
from workbench.datasets.demo import import_demo
from workbench.models import GenerationRequest, Runner, Sampler, default_model
from workbench.models.pool import start_pool
from workbench.models.server_settings import LLAMA_SERVER_PINNED


def _post(url: str, payload: dict) -> dict:
    request = urllib.request.Request(url + "/completion", json.dumps(payload).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as reply:
        return json.loads(reply.read())


def _payload(ids: list[int], sampler: Sampler, max_new: int, cached: bool) -> dict:
    payload = {**LLAMA_SERVER_PINNED, "prompt": ids, "n_predict": max_new, "n_probs": 10,
               "return_tokens": True, "cache_prompt": cached, "temperature": 0.0,
               "top_k": sampler.top_k, "top_p": sampler.top_p, "min_p": sampler.min_p,
               "repeat_penalty": sampler.repeat_penalty, "seed": sampler.seed}
    if cached:
        payload["id_slot"] = 0
    return payload


def _bits(reply: dict) -> tuple:
    return (tuple(reply.get("tokens") or ()),
            json.dumps(reply.get("completion_probabilities"), sort_keys=True))


def main() -> None:
    """Run both passes and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--warm", action="store_true",
                        help="pass 2 on pass 1's server (its prompt cache holds every "
                             "request: a rerun, or a second sample of a context)")
    args = parser.parse_args()
    db = open_db(memory=True)
    import_demo(db)
    model = default_model(db)
    runner = Runner(db, model, threads=1, batch_size=1)
    items = get_items(db, "demo")[:args.items]
    greedy = Sampler(max_tokens=args.max_tokens)

    def ids_of(request: GenerationRequest) -> list[int]:
        return list(runner.tokenize(runner.prepare(request)).context_ids)

    cot = [ids_of(GenerationRequest(item=i, mode="cot", template="neutral_cot@1",
                                    sampler=greedy)) for i in items]
    direct = [ids_of(GenerationRequest(item=i, mode="direct", template="direct@1",
                                       sampler=Sampler(max_tokens=8))) for i in items]
    print(f"{args.items} demo items, max {args.max_tokens} tokens, llama-server x "
          f"{args.threads} thread(s), 1 slot; load {os.getloadavg()[0]:.2f}", flush=True)
    passes: dict[bool, list[dict]] = {}
    shared = start_pool(model.path, 1, engine="llama-server", threads=args.threads,
                        parallel=1) if args.warm else None
    for cached in (False, True):
        with (contextlib.nullcontext(shared) if shared is not None else
              start_pool(model.path, 1, engine="llama-server", threads=args.threads,
                         parallel=1)) as pool:
            url = pool.urls[0]
            replies = []
            started = time.perf_counter()
            for ids in cot:
                replies.append(_post(url, _payload(ids, greedy, args.max_tokens, cached)))
            for ids in direct:
                replies.append(_post(url, _payload(ids, greedy, 8, cached)))
            for item, reply in zip(items, replies[:len(cot)], strict=True):
                chain = [int(t) for t in reply["tokens"]]
                half = tuple(chain[:len(chain) // 2])
                text = b"".join(runner.backend.piece(t) for t in half).decode("utf-8",
                                                                            "replace")
                cont = ids_of(GenerationRequest(
                    item=item, mode="continue", template="neutral_cot@1", sampler=greedy,
                    prefix=text, prefix_token_ids=half))
                replies.append(_post(url, _payload(cont, greedy, args.max_tokens, cached)))
            seconds = time.perf_counter() - started
            passes[cached] = replies
            evaluated = sum(r["timings"]["prompt_n"] for r in replies)
            contexts = sum(r["tokens_evaluated"] for r in replies)
            print(f"cache_prompt {str(cached).lower():5s}: {len(replies)} requests, "
                  f"{contexts} context tokens, {evaluated} evaluated by the server "
                  f"({evaluated / contexts:.2f} of them), {seconds:.1f} s, load "
                  f"{os.getloadavg()[0]:.2f}", flush=True)
    if shared is not None:
        shared.close()
    fresh, reused = passes[False], passes[True]
    same = [a is not None and _bits(a) == _bits(b) for a, b in zip(fresh, reused, strict=True)]
    kinds = ["cot"] * len(cot) + ["direct"] * len(direct) + ["continue"] * len(cot)
    per = {kind: (sum(s for s, k in zip(same, kinds, strict=True) if k == kind),
                  kinds.count(kind)) for kind in ("cot", "direct", "continue")}
    print(f"bit-identical to cache_prompt false: {sum(same)}/{len(same)} ("
          + ", ".join(f"{kind} {n}/{total}" for kind, (n, total) in per.items()) + ")")
    for k, (ok, a, b) in enumerate(zip(same, fresh, reused, strict=True)):
        if not ok:
            texts_equal = a.get("tokens") == b.get("tokens")
            print(f"first difference: request {k} ({kinds[k]}): output ids "
                  f"{'equal' if texts_equal else 'differ'}, log-probs differ; cached "
                  f"{b['timings'].get('cache_n')} of {b['tokens_evaluated']} tokens")
            break
    runner.close()


if __name__ == "__main__":
    main()
