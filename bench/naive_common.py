"""What both benchmarks' naive research-script loop shares: option probabilities from
`create_completion(logprobs=…)` and the text after which the answer letter is read."""

from __future__ import annotations

import math

from workbench.models.answers import parse_answer


def naive_probs(llm, text: str, labels) -> dict[str, float] | None:
    """The research-script way: top-20 logprobs of one completion token."""
    out = llm.create_completion(text, max_tokens=1, temperature=0.0, logprobs=20)
    logprobs = out["choices"][0].get("logprobs")
    if not logprobs or not logprobs.get("top_logprobs"):
        return None  # first sampled token was end-of-sequence: llama-cpp-python returns nothing
    top = logprobs["top_logprobs"][0]
    mass = {label: sum(math.exp(lp) for tok, lp in top.items() if tok.strip() == label)
            for label in labels}
    total = sum(mass.values())
    return {label: m / total for label, m in mass.items()} if total > 0 else None


def answer_context(prompt: str, text: str, labels) -> str:
    parsed = parse_answer(text, labels)
    if parsed.start is not None:
        start = parsed.start - 1 if parsed.start > 0 and text[parsed.start - 1] == " " \
            else parsed.start
        return prompt + text[:start]
    separator = "" if not text or text[-1].isspace() else "\n"
    return prompt + text + separator + "Answer:"
