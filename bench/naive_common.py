"""The careful loop both naive benchmarks run: what a competent user writes with llama-cpp-python."""

from __future__ import annotations

# ---------------------------------------------------------------- the careful loop
# What a competent user writes with llama-cpp-python (issue 27): one `Llama` with
# `logits_all=False`, the thread counts that measured best, `Llama.generate` (greedy, its
# own prefix reuse between prompts) and one read of the last logits after appending the
# answer cue, requests in item-major order so an item's prompts follow each other.

def careful_llama(model_path: str, threads: int, batch_threads: int):
    """`Llama(logits_all=False)` with the given decode and prompt threads (PAW's buffer
    settings, so both loops run the same kernels)."""
    import os

    from llama_cpp import Llama

    from workbench.models.backend import model_params, use_extra_buffers

    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    with model_params(use_extra_buffers()):
        return Llama(model_path=model_path, n_ctx=4096, n_threads=threads,
                     n_threads_batch=batch_threads, logits_all=False, verbose=False)


def careful_generate(llm, prompt_ids, max_tokens: int) -> list[int]:
    """Greedy `Llama.generate` until end of generation or `max_tokens`; the output ids."""
    import llama_cpp

    out: list[int] = []
    stream = llm.generate(list(prompt_ids), temp=0.0, top_k=0, top_p=1.0, min_p=0.0,
                          repeat_penalty=1.0, reset=True)
    try:
        for token in stream:
            if llama_cpp.llama_vocab_is_eog(llm._model.vocab, token):
                break
            out.append(token)
            if len(out) >= max_tokens:
                break
    finally:
        stream.close()
    return out


def careful_probs(llm, context_ids, labels) -> dict[str, float]:
    """Evaluate what of `context_ids` is not cached yet, read the last logits once, and
    take the softmax over the labels' first tokens (" A" and "A", as PAW does)."""
    import numpy as np

    from workbench.models.answers import label_token_candidates, option_distribution

    ids = list(context_ids)
    cached = 0
    for a, b in zip(llm._input_ids.tolist(), ids):
        if a != b:
            break
        cached += 1
    cached = min(cached, llm.n_tokens, len(ids) - 1)  # the last token is always evaluated
    if cached < llm.n_tokens:
        llm._ctx.kv_cache_seq_rm(-1, cached, -1)
        llm.n_tokens = cached
    llm.eval(ids[cached:])
    logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),))
    candidates = label_token_candidates(
        labels, lambda text: llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))
    probs, _ = option_distribution(candidates, {t: float(logits[t])
                                                for ids_ in candidates.values() for t in ids_})
    return probs


def careful_answer(llm, prompt_ids, output_ids, labels) -> tuple[str, dict[str, float]]:
    """The output text and the option distribution after the appended `Answer:` cue."""
    text = llm.detokenize(list(output_ids)).decode("utf-8", errors="replace")
    separator = "" if not text or text[-1].isspace() else "\n"
    cue = llm.tokenize((separator + "Answer:").encode("utf-8"), add_bos=False, special=False)
    return text, careful_probs(llm, list(prompt_ids) + list(output_ids) + cue, labels)
