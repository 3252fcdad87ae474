"""Benchmark: the PAW Runner against the naive loop research scripts use, on the same workload.

Workload (plan order): N demo vignettes answered with chain of thought (greedy), each with
its option distribution; then one continuation per item of its own chain cut at half its
tokens (an F1-style truncation), again with the option distribution.

- Runner: `workbench.models.Runner` (all cores, logits_all=False, prefix-ordered, the
  distribution read from the last logits, continuation from exact token ids).
- Naive: `Llama(logits_all=True)` with llama-cpp-python's defaults (half the cores for
  generation); per prompt one `create_chat_completion` (stage 1) or `create_completion`
  of prompt + chain text (stage 2), then `create_completion(max_tokens=1, logprobs=20)`
  on prompt + output cut at the answer (or + "\\nAnswer:") for the option probabilities;
  prompts in plan order.

- Bare: `bench/bare_batched.py`, a bare batched `llama_decode` loop over the same context
  ids and the output ids the Runner generated (the engine's ceiling; PAW's overhead is
  what separates the Runner from it). Same threads and batch width as the Runner.

Prints the three throughputs in generated tokens/s, PAW/bare and PAW/naive, and the largest
absolute difference between the option distributions (over items where both produced the
same text, and overall).

    .venv/bin/python bench/runner_vs_naive.py --items 40 --max-tokens 128
"""

from __future__ import annotations

import argparse
import os
import time

from bare_batched import bare_batched_pass, replay_of
from naive_common import answer_context, naive_probs

from store import open_db
from store.datasets import get_items
from store.generations import get_generations
from workbench.datasets.demo import import_demo
from workbench.models import GenerationRequest, Runner, Sampler, default_model
from workbench.models.answers import label_token_candidates, option_distribution, parse_answer
from workbench.models.backend import default_threads, model_params, use_extra_buffers
from workbench.models.execute import label_token_index
from workbench.models.registry import register_model
from workbench.models.prompts import ChatFormat, build_messages
from workbench.models.templates import get_template

TEMPLATE = "neutral_cot@1"


def runner_pass(db, items, max_tokens: int, threads: int | None, batch: int | None):
    """Both stages through the Runner; returns (seconds, {(item, stage): (output, probs)})."""
    model = default_model(db)
    runner = Runner(db, model, threads=threads, batch_size=batch)
    started = time.perf_counter()
    _ = runner.backend  # model load counted, as in the naive pass
    stage1 = [GenerationRequest(item=i, mode="cot", template=TEMPLATE,
                                sampler=Sampler(max_tokens=max_tokens)) for i in items]
    keys1 = [runner.key(r) for r in stage1]
    runner.run(stage1)
    stored = get_generations(db, keys1)
    stage2, chains = [], {}
    for item, key in zip(items, keys1):
        chain = stored[key]
        cut = len(chain.output_token_ids) // 2
        ids = chain.output_token_ids[:cut]
        prefix = b"".join(runner.backend.piece(t) for t in ids).decode("utf-8", "replace")
        chains[item.id] = prefix
        stage2.append(GenerationRequest(item=item, mode="continue", template=TEMPLATE,
                                        sampler=Sampler(max_tokens=max_tokens - cut),
                                        prefix=prefix, prefix_token_ids=ids))
    keys2 = [runner.key(r) for r in stage2]
    runner.run(stage2)
    elapsed = time.perf_counter() - started
    decoder = getattr(runner.backend, "_decoder", None)
    print(f"runner: {runner.backend.threads} threads, batch {runner.batch_size}, self-check "
          f"{runner.batch_verdict}, decoder stats {decoder.stats if decoder else None}")
    stored.update(get_generations(db, keys2))
    results = {}
    for stage, keys in ((1, keys1), (2, keys2)):
        for item, key in zip(items, keys):
            results[(item.id, stage)] = (stored[key].output, stored[key].option_probs,
                                         stored[key])
    runner_info = (runner.backend.threads, runner.batch_size if runner.batch_verdict and
                   runner.batch_verdict.identical else 1,
                   lambda text, special: runner.backend.tokenize(text, special=special))
    replays = [replay_of(stored[key], runner_info[2]) for key in keys1 + keys2]
    runner.close()
    return elapsed, results, chains, replays, runner_info[:2]


def naive_pass(items, max_tokens: int, model_path: str, chat: ChatFormat, chains):
    """Both stages the naive way; returns (seconds, {(item, stage): (output, probs)})."""
    from llama_cpp import Llama

    started = time.perf_counter()
    with model_params(use_extra_buffers()):
        llm = Llama(model_path=model_path, n_ctx=4096, logits_all=True, verbose=False)
    template = get_template(TEMPLATE)
    results = {}
    for item in items:  # stage 1, plan order
        messages = build_messages(GenerationRequest(item=item, mode="cot", template=TEMPLATE),
                                  template)
        reply = llm.create_chat_completion(messages=messages, temperature=0.0,
                                           max_tokens=max_tokens)
        text = reply["choices"][0]["message"]["content"] or ""
        context = answer_context(chat.render(messages), text, item.labels)
        results[(item.id, 1)] = (text, naive_probs(llm, context, item.labels), context)
    for item in items:  # stage 2, plan order
        messages = build_messages(GenerationRequest(item=item, mode="cot", template=TEMPLATE),
                                  template)
        prompt = chat.render(messages) + chains[item.id]
        cut_tokens = len(llm.tokenize(chains[item.id].encode(), add_bos=False))
        out = llm.create_completion(prompt, max_tokens=max(1, max_tokens - cut_tokens),
                                    temperature=0.0)
        text = out["choices"][0]["text"]
        context = answer_context(prompt, text, item.labels)
        results[(item.id, 2)] = (text, naive_probs(llm, context, item.labels), context)
    elapsed = time.perf_counter() - started
    return elapsed, results, llm


def exact_ids_probs(llm, gen) -> tuple[dict[str, float], list[int]]:
    """The runner's answer context as exact token ids, evaluated fresh by the naive Llama.

    Separates numeric effects (logits_all, prefix reuse) from text effects (re-tokenizing
    prompt + output, top-20 truncation) in the runner-vs-naive difference. Not timed.
    """
    def tokenize(text: str, special: bool = False) -> list[int]:
        return llm.tokenize(text.encode("utf-8"), add_bos=False, special=special)

    ids = tokenize(gen.prompt, special=True) + list(gen.prefix_token_ids or ())
    out = list(gen.output_token_ids)
    if gen.option_logits["position"] == "output":
        pieces = [llm._model.detokenize([t], special=False) for t in out]
        index = label_token_index(pieces, gen.output, parse_answer(gen.output, gen.labels).start)
        context = ids + out[:index]
    else:
        before = (gen.prefix or "") + gen.output
        separator = "" if not before or before[-1].isspace() else "\n"
        context = ids + out + tokenize(separator + "Answer:")
    llm.reset()
    llm.eval(context)
    row = llm.scores[len(context) - 1]
    candidates = label_token_candidates(gen.labels, tokenize)
    probs, _ = option_distribution(candidates, {t: float(row[t]) for ids_ in
                                                candidates.values() for t in ids_})
    return probs, context


def main() -> None:
    """Run both passes and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=40)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--model", default=None,
                        help="A GGUF file to benchmark instead of the embedded SmolLM2")
    parser.add_argument("--threads", type=int, default=None, help="Runner threads (default all)")
    parser.add_argument("--batch", type=int, default=None,
                        help="Runner sequences per batch (default: the runner's)")
    parser.add_argument("--rounds", type=int, choices=(1, 2), default=2,
                        help="2: runner, bare, naive, then naive, bare, runner (ratios from "
                             "the sums, so a change of machine load favours no pass)")
    args = parser.parse_args()
    # One thread count for every pass and round (chosen once from the idle cores), so a
    # pass that starts while the machine is busy does not run with fewer threads.
    args.threads = args.threads or default_threads()

    db = open_db(memory=True)
    import_demo(db)
    if args.model:  # benchmarked under the name the passes use
        register_model(db, args.model, "default")
    items = [i for i in get_items(db, "demo") if i.kind == "mcq"][: args.items]
    model = default_model(db)
    chat = Runner(db, model).chat  # the model's chat template, as the runner renders it
    print(f"{len(items)} items x 2 stages, max {args.max_tokens} tokens, "
          f"cores {os.cpu_count()}, load {os.getloadavg()[0]:.2f}")
    runner_s, runner_results, chains, replays, (threads, width) = runner_pass(
        db, items, args.max_tokens, args.threads, args.batch)
    tokens = sum(len(r[2].output_token_ids) for r in runner_results.values())
    print(f"runner: {runner_s:.1f} s  ({2 * len(items) / runner_s:.3f} gen/s, "
          f"{tokens / runner_s:.1f} tok/s)", flush=True)
    bare_s = bare_batched_pass(model.path, threads, width, replays)
    print(f"bare:   {bare_s:.1f} s  ({tokens / bare_s:.1f} tok/s; {width} per batch, "
          f"{threads} threads)", flush=True)
    naive_s, naive_results, llm = naive_pass(items, args.max_tokens, model.path, chat, chains)
    print(f"naive:  {naive_s:.1f} s  ({2 * len(items) / naive_s:.3f} gen/s, "
          f"{tokens / naive_s:.1f} tok/s)")
    if args.rounds == 2:  # the same three passes in reverse order: load changes even out
        llm2 = naive_pass(items, args.max_tokens, model.path, chat, chains)
        llm2[2].close()
        bare2 = bare_batched_pass(model.path, threads, width, replays)
        db2 = open_db(memory=True)
        import_demo(db2)
        if args.model:
            register_model(db2, args.model, "default")
        items2 = [i for i in get_items(db2, "demo") if i.kind == "mcq"][: args.items]
        runner2 = runner_pass(db2, items2, args.max_tokens, args.threads, args.batch)[0]
        print(f"round 2 (reversed): naive {llm2[0]:.1f} s, bare {bare2:.1f} s, "
              f"runner {runner2:.1f} s", flush=True)
        runner_s, bare_s, naive_s = runner_s + runner2, bare_s + bare2, naive_s + llm2[0]
        print(f"both rounds: runner {runner_s:.1f} s ({2 * tokens / runner_s:.1f} tok/s), "
              f"bare {bare_s:.1f} s ({2 * tokens / bare_s:.1f} tok/s), naive {naive_s:.1f} s")
    print(f"throughput ratio runner/bare: {bare_s / runner_s:.2f}   runner/naive: "
          f"{naive_s / runner_s:.2f}", flush=True)

    same_text, missing, retokenized = 0, 0, 0
    diff_same, diff_all, floor, worst = [], [], [], []
    for key, (text, probs, gen) in runner_results.items():
        naive_text, naive_probs, naive_context = naive_results[key]
        exact, exact_ids = exact_ids_probs(llm, gen)
        floor.append(max(abs(probs[k] - exact[k]) for k in probs))
        if naive_probs is None:
            missing += 1
            continue
        diff = max(abs(probs[k] - naive_probs[k]) for k in probs)
        diff_all.append(diff)
        if text == naive_text:
            same_text += 1
            diff_same.append(diff)
            naive_ids = llm.tokenize(naive_context.encode("utf-8"), add_bos=False, special=True)
            retokenized += naive_ids != exact_ids
            worst.append((diff, key[1], gen.option_logits["position"], naive_ids != exact_ids,
                          naive_probs))
    llm.close()
    n = len(runner_results)
    print(f"identical output text: {same_text}/{n}; naive gave no distribution: {missing}; "
          f"re-tokenized differently (among identical texts): {retokenized}")
    print(f"max |p_runner - p_naive| where texts match: {max(diff_same or [0]):.2e}; "
          f"overall: {max(diff_all or [0]):.2e}")
    for diff, stage, position, retok, naive_probs in sorted(worst, reverse=True)[:5]:
        print(f"  {diff:.2e}  stage {stage}  position {position}  re-tokenized {retok}  "
              f"naive labels found {sum(v > 0 for v in naive_probs.values())}")
    within = sum(d <= 1e-3 for d in diff_same)
    print(f"pairs with identical text within 1e-3: {within}/{len(diff_same)}")
    print(f"decode-vs-batch floor (runner vs the same ids re-evaluated in one batch): "
          f"max {max(floor):.2e}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
