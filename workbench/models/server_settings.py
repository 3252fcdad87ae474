"""What a llama-server request pins, and which server defaults refuse a server.

In-process decoding (llama-cpp-python's `Llama.generate`) runs the chain penalties →
top-k → typical-p → top-p → min-p → temperature → seeded draw with `min_keep` 1 and a
64-token repeat window; a llama-server's own defaults (`--samplers`, `--dry-multiplier`,
`--xtc-probability`, `--temp`, …) would otherwise apply to every field a request leaves
out. Each request therefore spells out every field (`LLAMA_SERVER_PINNED`); a default that
a request cannot clear, or that PAW does not know, refuses the server (`check_neutral`).
"""

from __future__ import annotations

from typing import Any

from store.errors import UserError
from workbench.models.endpoint import Http, ServerError, ServerInfo

REPEAT_LAST_N = 64
"""Tokens the repeat penalty looks back over: llama-cpp-python's `last_n_tokens_size`."""

LLAMA_SERVER_PINNED: dict[str, Any] = {
    "dynatemp_range": 0.0, "dynatemp_exponent": 1.0, "typical_p": 1.0, "top_n_sigma": -1.0,
    "xtc_probability": 0.0, "xtc_threshold": 0.1, "repeat_last_n": REPEAT_LAST_N,
    "presence_penalty": 0.0, "frequency_penalty": 0.0, "dry_multiplier": 0.0,
    "dry_base": 1.75, "dry_allowed_length": 2, "dry_penalty_last_n": 64, "mirostat": 0,
    "mirostat_tau": 5.0, "mirostat_eta": 0.1, "adaptive_target": -1.0,
    "adaptive_decay": 0.9, "min_keep": 1, "ignore_eos": False, "logit_bias": [],
    "samplers": ["penalties", "top_k", "typ_p", "top_p", "min_p", "temperature"],
    "n_keep": 0, "n_cmpl": 1, "n_indent": 0, "t_max_predict_ms": -1,
    "backend_sampling": False, "post_sampling_probs": False, "n_cache_reuse": 0,
    "reasoning_budget_tokens": -1, "stream": False, "cache_prompt": True,
}
"""Every llama-server sampler field PAW does not set from its `Sampler`, pinned to what
in-process decoding does (llama-cpp-python's chain: penalties, top-k, typical, top-p, min-p,
temperature, seeded draw; min_keep 1), so a server's own defaults (`--dry-multiplier`,
`--xtc-probability`, `--samplers`, …) never leak in."""

MUST_BE_EMPTY = {"stop": "--reverse-prompt", "grammar": "--grammar",
                 "speculative.types": "--spec-type/--model-draft"}
"""Server defaults a request cannot clear (an empty `stop` falls back to the server's), so
a server with any of them set is refused; values `[]`, `""` and `none` count as empty."""

APPLIED_UNCHECKED = {"logit_bias", "n_cmpl", "n_indent", "t_max_predict_ms", "n_cache_reuse",
                     "reasoning_budget_tokens", "cache_prompt", "stream"}
"""Pinned fields a reply's `generation_settings` spells differently or leaves out."""

NOT_SAMPLING = {"n_predict", "max_tokens", "n_probs", "chat_format", "reasoning_format",
                "reasoning_in_content", "generation_prompt", "timings_per_token", "lora",
                "grammar_lazy", "grammar_triggers", "preserved_tokens", "n_discard",
                "seed", "temperature", "top_k", "top_p", "min_p", "repeat_penalty",
                "dry_sequence_breakers", "stream", "logit_bias", "thinking_forced_open",
                "reasoning_control"}
"""Default settings that PAW sets per request from its `Sampler`, or that do not change
which token is drawn; any other field the server lists must be pinned or empty."""


def check_neutral(info: ServerInfo) -> None:
    """Refuse a llama-server whose defaults a request cannot override or PAW does not know.

    Raises:
        UserError: names the setting and its value.
    """
    for name, value in info.defaults.items():
        if name in MUST_BE_EMPTY:
            if value not in ([], "", None, "none"):
                raise UserError(f"{info.url}: the server's default {name} = {value!r} applies "
                                f"to every request; restart it without "
                                f"{MUST_BE_EMPTY[name]}")
        elif name not in LLAMA_SERVER_PINNED and name not in NOT_SAMPLING:
            raise UserError(f"{info.url}: the server's default setting {name} = {value!r} is "
                            f"one PAW does not know and cannot pin, so its results would not "
                            f"be reproducible (build {info.build})")


def check_applied(http: Http, url: str) -> None:
    """Refuse a llama-server whose applied settings differ from what PAW pinned.

    `/props` does not show every default (`--reverse-prompt`, `--grammar`); the reply's
    `generation_settings` does, so one token is generated and they are compared.

    Raises:
        UserError: names the setting, the server's value and PAW's.
    """
    try:
        reply = http.post(url + "/completion", {
            **LLAMA_SERVER_PINNED, "prompt": [0], "n_predict": 1, "temperature": 0.0,
            "top_k": 0, "top_p": 1.0, "min_p": 0.0, "repeat_penalty": 1.0, "seed": 0})
    except ServerError as exc:
        raise UserError(f"--servers: {url} did not run a one-token check: {exc}") from None
    applied = reply.get("generation_settings") or {}
    for name, flag in MUST_BE_EMPTY.items():
        if applied.get(name) not in ([], "", None, "none"):
            raise UserError(f"{url}: the server applies {name} = {applied[name]!r} to "
                            f"every request; restart it without {flag}")
    for name, wanted in LLAMA_SERVER_PINNED.items():
        got = applied.get(name, wanted)
        same = abs(got - wanted) < 1e-6 if isinstance(wanted, float) and \
            isinstance(got, (int, float)) else got == wanted or name in APPLIED_UNCHECKED
        if not same:
            raise UserError(f"{url}: the server applied {name} = {got!r} where PAW "
                            f"sent {wanted!r}; its results would not be reproducible")
