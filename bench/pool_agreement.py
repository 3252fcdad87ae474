"""Measure (A8): how pool generations compare with in-process ones, and with each other.

On N demo items (CoT and direct, greedy) the same requests run in-process (the pinned
llama-cpp-python) and on llama-server in several modes; each is compared with the
in-process run: answers equal, output texts equal, output ids equal, the largest |Δp| of
the option distribution over generations with the same text, and overall.

- `serial`: llama-server built from the same llama.cpp source, one request at a time;
- `serial, warm rerun`: the same server again after other work (prefix cache filled);
- `shared`: 4 slots, 4 requests in flight (several sequences per batch);
- `python`: llama_cpp.server (the in-process library behind HTTP);
- `other build`: a llama-server binary of another build (`--other PATH`), serial.

    PYTHONPATH=. .venv/bin/python bench/pool_agreement.py --items 10 --max-tokens 64 \\
        --other /path/to/other/llama-server
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from store import open_db
from store.datasets import get_items
from store.generations import get_generations
from workbench.datasets.demo import import_demo
from workbench.models import GenerationRequest, Runner, Sampler, default_model
from workbench.models.pool import start_pool
from workbench.models.server import PoolSettings, ServerPoolBackend


def _requests(db, items: int, max_tokens: int) -> list[GenerationRequest]:
    return [GenerationRequest(item=i, mode=mode, template=template,
                              sampler=Sampler(max_tokens=tokens))
            for i in get_items(db, "demo")[:items] for mode, template, tokens in
            (("cot", "neutral_cot@1", max_tokens), ("direct", "direct@1", 4))]


def _run(items: int, max_tokens: int, backend_of=None) -> dict:
    db = open_db(memory=True)
    import_demo(db)
    model = default_model(db)
    backend = backend_of(model) if backend_of else None
    runner = Runner(db, model, threads=2, backend=backend)
    summary = runner.run(_requests(db, items, max_tokens))
    runner.close()
    return {(g.item_id, g.mode): g for g in get_generations(db, summary.keys).values()}


def _compare(name: str, local: dict, other: dict) -> str:
    answers = texts = ids = 0
    same_text, overall = 0.0, 0.0
    for key, mine in local.items():
        theirs = other[key]
        answers += mine.answer == theirs.answer
        texts += mine.output == theirs.output
        ids += tuple(mine.output_token_ids or ()) == tuple(theirs.output_token_ids or ())
        if mine.option_probs and theirs.option_probs:
            delta = max(abs(mine.option_probs[k] - theirs.option_probs[k])
                        for k in mine.option_probs)
            overall = max(overall, delta)
            if mine.output == theirs.output:
                same_text = max(same_text, delta)
    n = len(local)
    return (f"{name:<22} answers {answers}/{n}  texts {texts}/{n}  ids {ids}/{n}  "
            f"max|dp| same text {same_text:.2g}  overall {overall:.2g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--other", help="a llama-server binary of another build")
    args = parser.parse_args()
    path = default_model(open_db(memory=True)).path
    local = _run(args.items, args.max_tokens)
    lines = []

    def pooled(engine, parallel=1, concurrency=1, binary=None, warm=False):
        with start_pool(path, 1, engine=engine, threads=2, parallel=parallel,
                        binary=binary) as pool:
            settings = PoolSettings(tuple(pool.urls), concurrency=concurrency)
            first = _run(args.items, args.max_tokens,
                         lambda m: ServerPoolBackend(m, settings))
            if warm:
                return first, _run(args.items, args.max_tokens,
                                   lambda m: ServerPoolBackend(m, settings))
            return first, None

    serial, warm = pooled("llama-server", warm=True)
    lines.append(_compare("llama-server serial", local, serial))
    lines.append(_compare("  warm rerun", local, warm))
    lines.append(_compare("  rerun vs first", serial, warm))
    shared, _ = pooled("llama-server", parallel=4, concurrency=4)
    lines.append(_compare("llama-server shared x4", local, shared))
    lines.append(_compare("  shared vs serial", serial, shared))
    python, _ = pooled("python")
    lines.append(_compare("llama_cpp.server", local, python))
    if args.other:
        other, _ = pooled("llama-server", binary=args.other)
        lines.append(_compare("other build serial", local, other))
    print(f"{args.items} items x (CoT {args.max_tokens} tokens, direct), greedy; "
          "each line against in-process unless named")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
