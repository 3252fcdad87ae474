"""Reading an OpenAI-compatible reply: the text, why it stopped, and the log-probabilities.

Servers answer log-probabilities in one of two formats, and PAW reads both:

- **legacy** (OpenAI's completions API, vLLM's and llama_cpp.server's `/v1/completions`):
  `choices[0].logprobs` = {`tokens`: [text, ...], `token_logprobs`: [lp, ...],
  `top_logprobs`: [{text: lp, ...}, ...]} — one entry per generated position; vLLM
  writes each token as `token_id:N` when asked (`return_tokens_as_token_ids`), read as
  the id itself;
- **current** (OpenAI's chat completions, vLLM's `/v1/chat/completions`, and both of
  llama-server's `/v1` endpoints): `choices[0].logprobs.content` = [{`token`, `logprob`,
  `bytes`, `top_logprobs`: [{`token`, `logprob`, `bytes`}, ...]}, ...]; llama-server adds
  each token's `id`.

The text is `choices[0].text` (completions) or `choices[0].message.content` (chat).
A reply with no log-probabilities where they were asked for is `NoLogprobs`, so the
caller can name the missing capability instead of calling the endpoint down.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


class MalformedReply(ValueError):
    """The reply is not a completion of either shape."""


class NoLogprobs(MalformedReply):
    """The reply has text but no log-probabilities."""


@dataclass(frozen=True)
class Candidate:
    """One token of a reply's log-probabilities.

    Attributes:
        text: the token's text as the server wrote it.
        logprob: its log-probability at that position.
        id: its vocabulary id where the server says (llama-server), else None.
        raw: its bytes where the server says (`bytes`), else None.
    """

    text: str
    logprob: float
    id: int | None = None
    raw: bytes | None = None


@dataclass(frozen=True)
class Reply:
    """A completion as PAW uses it.

    Attributes:
        text: the generated text.
        finish: `stop` or `length` (anything but `stop` counts as `length`).
        tokens: the generated tokens, one per position (empty where not reported).
        tops: the top candidates at each generated position.
        fingerprint: `system_fingerprint` where the server sends one.
    """

    text: str
    finish: str
    tokens: tuple[Candidate, ...]
    tops: tuple[tuple[Candidate, ...], ...]
    fingerprint: str | None = None


def _token_id(text: str) -> int | None:
    """The id in vLLM's `token_id:N` token text (`return_tokens_as_token_ids`), else None."""
    head, _, number = text.partition(":")
    return int(number) if head == "token_id" and number.isdigit() else None


def _candidate(entry: dict[str, Any]) -> Candidate:
    raw = entry.get("bytes")
    token_id = entry.get("id")
    text = str(entry.get("token", ""))
    return Candidate(text, float(entry["logprob"]),
                     int(token_id) if token_id is not None else _token_id(text),
                     bytes(raw) if isinstance(raw, list) and _token_id(text) is None
                     else None)


def read_reply(reply: Any, *, want_logprobs: bool = True) -> Reply:
    """The text, finish reason and log-probabilities of `choices[0]`, either format.

    Raises:
        NoLogprobs: `want_logprobs` and the reply carries none.
        MalformedReply: not a completion reply.
    """
    try:
        choice = reply["choices"][0]
        if "message" in choice:
            text = (choice["message"] or {}).get("content") or ""
        else:
            text = choice.get("text") or ""
        finish = "stop" if choice.get("finish_reason") == "stop" else "length"
        logprobs = choice.get("logprobs") or {}
        tokens: list[Candidate] = []
        tops: list[tuple[Candidate, ...]] = []
        if logprobs.get("content") is not None:
            for position in logprobs["content"]:
                tokens.append(_candidate(position))
                tops.append(tuple(_candidate(t) for t in position.get("top_logprobs") or ()))
        elif logprobs.get("tokens") is not None:
            texts = list(logprobs["tokens"])
            chosen = list(logprobs.get("token_logprobs") or [])
            chosen += [float("nan")] * (len(texts) - len(chosen))
            tokens = [Candidate(str(t), float(lp) if lp is not None else float("nan"),
                                _token_id(str(t)))
                      for t, lp in zip(texts, chosen, strict=True)]
            tops = [tuple(Candidate(str(k), float(v), _token_id(str(k)))
                          for k, v in (top or {}).items())
                    for top in logprobs.get("top_logprobs") or ()]
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        raise MalformedReply("not a completion reply (no choices[0] with text and "
                             "log-probabilities)") from None
    if want_logprobs and not logprobs:
        raise NoLogprobs("the reply has no log-probabilities (logprobs / top_logprobs)")
    fingerprint = reply.get("system_fingerprint") if isinstance(reply, dict) else None
    return Reply(text, finish, tuple(tokens), tuple(tops),
                 str(fingerprint) if fingerprint else None)


def spelled(tokens: Sequence[Candidate]) -> str:
    """The text the reply's tokens spell (their bytes where given, else their texts)."""
    if tokens and all(t.raw is not None for t in tokens):
        return b"".join(t.raw or b"" for t in tokens).decode("utf-8", "replace")
    return "".join(t.text for t in tokens)
