"""How a pool is named and reached: the `--servers` family of options, URLs, the key tag,
and the model's vocabulary on the auditor's machine (`ServerPoolBackend` uses them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workbench.models.endpoint import Http, ServerInfo

TOP_N = 20
"""Log-probs asked for per position (a label candidate outside them counts 0)."""

@dataclass(frozen=True)
class PoolSettings:
    """How to reach and use a pool (the `--servers` family of options).

    Attributes:
        urls: the endpoints' base URLs.
        api_key: sent as `Authorization: Bearer KEY` (llama-server `--api-key`).
        headers: extra (name, value) headers for every request.
        concurrency: requests in flight per endpoint (None: the server's slot count).
        timeout_s: one request's time-out; longer counts as the endpoint hanging.
        ctx: context per request where the server does not say (llama_cpp.server, other
            OpenAI-compatible servers); llama-server's slot context is read from `/props`.
        top_n: log-probs per position.
    """

    urls: tuple[str, ...]
    api_key: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    concurrency: int | None = None
    timeout_s: float = 600.0
    ctx: int | None = None
    top_n: int = TOP_N

    def http(self) -> Http:
        """The HTTP client with this pool's headers and time-out."""
        headers = dict(self.headers)
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return Http(headers, self.timeout_s)


def parse_urls(text: str | Sequence[str] | None) -> list[str]:
    """Base URLs from `http://a:8081,http://b:8081` (or a list); commas, spaces or both
    separate them (a URL holds no whitespace); trailing slashes dropped."""
    import re

    if not text:
        return []
    given = [text] if isinstance(text, str) else list(text)
    parts = [p for chunk in given for p in re.split(r"[,\s]+", chunk)]
    return [base_url(p) for p in parts if p]


def base_url(url: str) -> str:
    """`http://h:8000/v1/` -> `http://h:8000`: PAW adds `/v1/...` itself (the URL an
    OpenAI client library is given ends in `/v1`; llama-server's own paths have none)."""
    url = url.rstrip("/")
    return url[:-3] if url.endswith("/v1") else url


def servers_from_env() -> list[str]:
    """The pool named by the `PAW_SERVERS` environment variable (comma-separated URLs)."""
    import os

    return parse_urls(os.environ.get("PAW_SERVERS"))


def pool_tag(info: ServerInfo, concurrency: int, numerics: str | None = None) -> str:
    """What a pool generation's key adds: kind, build, whether slots were shared, and for
    serial llama-servers the signature of their arithmetic (`identity.numerics_signature`:
    the device class and flags, which `build_info` does not show)."""
    mode = "serial" if concurrency <= 1 else "shared"
    tag = f"{info.kind} {info.build} {mode}"
    return f"{tag} numerics:{numerics}" if numerics and mode == "serial" else tag


def load_vocabulary(path: str) -> Any:
    """The model's vocabulary only (no weights), without llama.cpp's warning about it.

    A vocabulary-only model has no training context, so llama.cpp warns `n_ctx_seq (512) >
    n_ctx_train (0) -- possible training context overflow` when llama-cpp-python gives it
    its (unused) context; llama-cpp-python 0.3.36 maps llama.cpp's warning level to ERROR,
    so it reached every pool command's output. Nothing is decoded here (the servers decode,
    with the model's real training context), so that one line is dropped; any other line
    llama.cpp prints is passed on.
    """
    import contextlib
    import io
    import sys

    from llama_cpp import Llama

    heard = io.StringIO()
    try:
        with contextlib.redirect_stderr(heard):
            return Llama(model_path=path, vocab_only=True, verbose=False)
    finally:
        for line in heard.getvalue().splitlines(keepends=True):
            if "n_ctx_train (0)" not in line:
                sys.stderr.write(line)
