"""One pool endpoint over HTTP: requests, the kinds of error, and what the server says it is.

Three kinds of server are told apart from the server itself:

- `llama-server` (llama.cpp's C++ server): `GET /props` answers with
  `default_generation_settings`, `total_slots` and `build_info`;
- `llama_cpp.server` (`python -m llama_cpp.server`): no `/props`; `GET /openapi.json`
  names the llama-cpp-python version it runs on;
- `openai`: any other server with `GET /v1/models` and `POST /v1/completions` that
  returns log-probabilities (its build is the `system_fingerprint` of a reply).

Errors: `RequestRefused` (a 4xx for this request: the request fails, the endpoint
stays), `EndpointDown` (refused connection, time-out, 5xx, a reply that is not JSON: the
endpoint is dropped and probed again later); 401/403 at probe time is a `UserError`
naming `--api-key`.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from store.errors import UserError

KIND_LLAMA_SERVER = "llama-server"
KIND_PYTHON = "llama_cpp.server"
KIND_OPENAI = "openai"

PROBE_TIMEOUT_S = 10.0
"""Time-out of the small requests that probe an endpoint."""


SPLIT_ADVICE = ("the URL is a load balancer in front of several servers, and one "
                "generation's requests must reach one server process: list the servers "
                "behind it in --servers (one URL each; Kubernetes: a headless Service)")
"""What a refusal of a URL that spreads one generation over several processes advises."""


class ServerError(RuntimeError):
    """An endpoint did not give a usable reply."""


class RequestRefused(ServerError):
    """The endpoint answered 4xx to this request: this request fails, the endpoint stays."""


class EndpointDown(ServerError):
    """Refused connection, time-out, 5xx or a malformed reply: the endpoint is dropped."""


@dataclass(frozen=True)
class Http:
    """Requests to endpoints with the pool's headers (API key, extra headers).

    Args:
        headers: sent with every request (`Authorization: Bearer KEY` for `--api-key`).
        timeout_s: time-out of one generation request (the socket waits this long).
    """

    headers: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = 600.0

    def call(self, url: str, payload: dict[str, Any] | None = None,
             timeout: float | None = None) -> tuple[int, Any]:
        """GET (no payload) or POST JSON; returns (status, parsed JSON body).

        Raises:
            EndpointDown: no connection, a time-out, or a body that is not JSON.
        """
        data = None if payload is None else json.dumps(payload).encode("utf-8")
        headers = {"Content-Type": "application/json", **self.headers}
        request = urllib.request.Request(url, data=data, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout or self.timeout_s) as reply:
                status, body = reply.status, reply.read()
        except urllib.error.HTTPError as exc:
            status, body = exc.code, exc.read()
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise EndpointDown(f"{url}: {unreachable_reason(exc)}") from None
        try:
            return status, json.loads(body.decode("utf-8")) if body else None
        except ValueError:
            if status >= 400:
                return status, body.decode("utf-8", "replace")[:300]
            raise EndpointDown(f"{url}: the reply is not JSON") from None

    @property
    def sends_key(self) -> bool:
        """Whether requests carry credentials (`--api-key`, or an Authorization/key header)."""
        return any(name.lower() in ("authorization", "x-api-key", "api-key")
                   for name in self.headers)

    def post(self, url: str, payload: dict[str, Any], timeout: float | None = None
             ) -> dict[str, Any]:
        """POST and return the JSON reply of a 200.

        Raises:
            RequestRefused: a 4xx (but 408/429, which mean "busy": EndpointDown).
            EndpointDown: anything else that is not a 200 with a JSON object.
        """
        status, body = self.call(url, payload, timeout)
        if status == 200 and isinstance(body, dict):
            return body
        text = _error_text(body)
        if 400 <= status < 500 and status not in (408, 429):
            raise RequestRefused(f"{url}: HTTP {status}: {text}")
        raise EndpointDown(f"{url}: HTTP {status}: {text}")


def unreachable_reason(exc: BaseException) -> str:
    """Why a request got no HTTP answer, in words that tell the faults apart (refused
    connection, a host name DNS does not know, TLS, a time-out), with the system's text."""
    import socket
    import ssl

    reason = getattr(exc, "reason", exc)
    if isinstance(reason, BaseException):
        exc = reason
    text = str(exc) or type(exc).__name__
    if isinstance(exc, ConnectionRefusedError):
        return f"connection refused (nothing listens there?): {text}"
    if isinstance(exc, socket.gaierror):
        return f"host name not found (DNS): {text}"
    if isinstance(exc, ssl.SSLError):
        return (f"TLS failed (an https URL for a plain-http server, or a certificate this "
                f"machine does not trust?): {text}")
    if isinstance(exc, TimeoutError | socket.timeout):
        return f"timed out: {text}"
    if isinstance(exc, ConnectionError):
        return f"connection failed: {text}"
    return text


def _error_text(body: Any) -> str:
    if isinstance(body, dict):
        error = body.get("error", body.get("detail", body))
        if isinstance(error, dict):
            error = error.get("message", error)
        return str(error)[:300]
    return str(body)[:300]


@dataclass(frozen=True)
class ServerInfo:
    """What an endpoint says about itself.

    Attributes:
        url: the base URL.
        kind: `llama-server`, `llama_cpp.server` or `openai`.
        build: the server's build (`/props` `build_info`, the llama-cpp-python version,
            or a reply's `system_fingerprint`).
        model_file: the file name of the model it serves, where it says (None otherwise).
        model_ids: the ids `/v1/models` lists (a file path, or an `--alias`).
        slots: parallel slots (`/props` `total_slots`; 1 where the server does not say).
        slot_ctx: context of one slot in tokens (`/props`), None where unknown.
        defaults: the server's default generation settings (`/props`), {} where unknown.
        meta: what the server says about the weights it serves (`/v1/models` `meta`:
            `n_vocab`, `n_params`, `size`, ...), {} where it says nothing.
        token_ids: whether its completion endpoint takes a prompt of token ids (llama-server
            always; a generic server where a probe with ids was answered).
        token_id_texts: whether it writes reply tokens as `token_id:N` when asked
            (vLLM's `return_tokens_as_token_ids`, sent with every request then).
        version_known: False where a generic server gave no version at all (its key then
            names the endpoint, `openai unknown@URL`).
    """

    url: str
    kind: str
    build: str
    model_file: str | None
    model_ids: tuple[str, ...]
    slots: int = 1
    slot_ctx: int | None = None
    defaults: Mapping[str, Any] = field(default_factory=dict)
    meta: Mapping[str, Any] = field(default_factory=dict)
    token_ids: bool = False
    token_id_texts: bool = False
    version_known: bool = True

    @property
    def served(self) -> str:
        """What it serves, for messages."""
        return self.model_file or ", ".join(self.model_ids) or "nothing it names"


def probe(url: str, http: Http) -> ServerInfo:
    """Ask an endpoint what it is.

    Raises:
        EndpointDown: it does not answer (or is still loading its model).
        UserError: it needs an API key (401/403) or is not a completion server.
    """
    status, props = http.call(url + "/props", timeout=PROBE_TIMEOUT_S)
    _check_auth(url, status, http)
    if status == 200 and isinstance(props, dict) and "default_generation_settings" in props:
        return _llama_server_info(url, http, props)
    if status == 503:
        raise EndpointDown(f"{url}: HTTP 503 (loading the model?)")
    status, models = http.call(url + "/v1/models", timeout=PROBE_TIMEOUT_S)
    _check_auth(url, status, http)
    if status >= 500:
        raise EndpointDown(f"{url}: HTTP {status}")
    if status != 200 or not isinstance(models, dict):
        raise UserError(f"{url}: not an OpenAI-compatible completion server "
                        f"(GET /v1/models gave HTTP {status})")
    ids = tuple(str(m.get("id")) for m in models.get("data") or () if isinstance(m, dict))
    status, api = http.call(url + "/openapi.json", timeout=PROBE_TIMEOUT_S)
    title = str((api or {}).get("info", {}).get("title", "")) if isinstance(api, dict) else ""
    if status == 200 and "llama.cpp" in title:
        version = api["info"].get("version", "unknown")
        file_name = os.path.basename(ids[0]) if ids and ids[0].endswith(".gguf") else None
        return ServerInfo(url, KIND_PYTHON, f"llama-cpp-python {version}", file_name, ids)
    entry = next((m for m in models.get("data") or () if isinstance(m, dict)), {})
    meta = dict(entry.get("meta") or {}) if isinstance(entry.get("meta"), dict) else {}
    ctx = entry.get("max_model_len") or meta.get("n_ctx")
    token_ids, id_texts, fingerprint = _capabilities(url, http, ids)
    version = fingerprint or _version(url, http)
    return ServerInfo(url, KIND_OPENAI, version or f"unknown@{url}", None, ids,
                      slot_ctx=int(ctx) if ctx else None, meta=meta, token_ids=token_ids,
                      token_id_texts=id_texts, version_known=version is not None)


def _check_auth(url: str, status: int, http: Http) -> None:
    """A 401/403 as one line: a key PAW sent and the server refused, or no key sent."""
    if status not in (401, 403):
        return
    if http.sends_key:
        raise UserError(f"{url}: HTTP {status}: the server refused the API key PAW sent "
                        "(--api-key / PAW_SERVER_API_KEY, or --server-header); check it "
                        "against the server's --api-key")
    raise UserError(f"{url}: HTTP {status}: the server wants an API key and none was given; "
                    "pass --api-key (or PAW_SERVER_API_KEY), or --server-header 'Name: value'")


def _llama_server_info(url: str, http: Http, props: dict[str, Any]) -> ServerInfo:
    settings = props.get("default_generation_settings") or {}
    ids: tuple[str, ...] = ()
    meta: dict[str, Any] = {}
    status, models = http.call(url + "/v1/models", timeout=PROBE_TIMEOUT_S)
    if status == 200 and isinstance(models, dict):
        entries = [m for m in models.get("data") or () if isinstance(m, dict)]
        ids = tuple(str(m.get("id")) for m in entries)
        if entries and isinstance(entries[0].get("meta"), dict):
            meta = dict(entries[0]["meta"])
    path = props.get("model_path")
    return ServerInfo(
        url, KIND_LLAMA_SERVER, str(props.get("build_info") or "unknown"),
        os.path.basename(str(path)) if path else None, ids,
        slots=int(props.get("total_slots") or 1),
        slot_ctx=int(settings["n_ctx"]) if settings.get("n_ctx") else None,
        defaults=dict(settings.get("params") or {}), meta=meta, token_ids=True,
    )


def _capabilities(url: str, http: Http, ids: tuple[str, ...]
                  ) -> tuple[bool, bool, str | None]:
    """Whether a generic server's `/v1/completions` takes token ids, writes reply tokens as
    `token_id:N` when asked, and answers with log-probabilities, and its
    `system_fingerprint`: a one-token completion of token id 0 (any vocabulary has it),
    else of the text "a"; each first with vLLM's `return_tokens_as_token_ids`, then
    without (a server that refuses unknown fields answers 4xx to it).

    Raises:
        UserError: it has no completion endpoint, or answers without log-probabilities.
        EndpointDown: it fails (5xx, no answer).
    """
    from workbench.models.openai_reply import MalformedReply, NoLogprobs, read_reply

    base = {"model": ids[0] if ids else None, "max_tokens": 1, "temperature": 0.0,
            "logprobs": 1}
    for prompt, as_ids in (([0], True), ([0], False), ("a", True), ("a", False)):
        extra = {"return_tokens_as_token_ids": True} if as_ids else {}
        status, reply = http.call(url + "/v1/completions",
                                  {**base, "prompt": prompt, **extra},
                                  timeout=PROBE_TIMEOUT_S * 3)
        _check_auth(url, status, http)
        if status in (404, 405):
            raise UserError(f"{url}: the server has no /v1/completions (HTTP {status}); PAW's "
                            "modes need a completion endpoint that returns log-probabilities "
                            "(a chat-only API runs only the closed-source tier, "
                            "docs/runner.md)")
        if status >= 500 or status in (408, 429):
            raise EndpointDown(f"{url}: HTTP {status}: {_error_text(reply)}")
        if status != 200:
            continue  # token ids refused: try text
        try:
            parsed = read_reply(reply)
        except NoLogprobs:
            raise UserError(f"{url}: /v1/completions answers without log-probabilities "
                            "(asked with `logprobs`); PAW reads the answer distribution from "
                            "them, so this server cannot run an audit") from None
        except MalformedReply as exc:
            raise UserError(f"{url}: /v1/completions: {exc}") from None
        id_texts = as_ids and any(t.text.startswith("token_id:") for t in parsed.tokens)
        return prompt == [0], id_texts, parsed.fingerprint
    raise UserError(f"{url}: /v1/completions refused a one-token completion "
                    f"(HTTP {status}: {_error_text(reply)})")


def _version(url: str, http: Http) -> str | None:
    """A generic server's version where it publishes one: vLLM `GET /version`, TGI
    `GET /info` (`version` and `sha`)."""
    for path in ("/version", "/info"):
        try:
            status, body = http.call(url + path, timeout=PROBE_TIMEOUT_S)
        except EndpointDown:
            continue
        if status == 200 and isinstance(body, dict) and body.get("version"):
            sha = body.get("sha")
            return f"{body['version']}" + (f"+{str(sha)[:12]}" if sha else "")
    return None


def health(url: str, http: Http, kind: str) -> bool:
    """Whether an endpoint answers and is ready (`/health` for llama-server)."""
    path = "/health" if kind == KIND_LLAMA_SERVER else "/v1/models"
    try:
        status, _ = http.call(url + path, timeout=PROBE_TIMEOUT_S)
    except EndpointDown:
        return False
    return status == 200
