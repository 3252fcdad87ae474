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
            raise EndpointDown(f"{url}: {getattr(exc, 'reason', exc)}") from None
        try:
            return status, json.loads(body.decode("utf-8")) if body else None
        except ValueError:
            if status >= 400:
                return status, body.decode("utf-8", "replace")[:300]
            raise EndpointDown(f"{url}: the reply is not JSON") from None

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
    """

    url: str
    kind: str
    build: str
    model_file: str | None
    model_ids: tuple[str, ...]
    slots: int = 1
    slot_ctx: int | None = None
    defaults: Mapping[str, Any] = field(default_factory=dict)

    def serves(self, file_name: str, name: str, sha256: str) -> bool:
        """Whether it serves this model: same file name, or an id that is the model's
        registered name, its sha256 or a sha256 prefix of at least 12 hex digits."""
        if self.model_file is not None and self.model_file == file_name:
            return True
        for model_id in self.model_ids:
            short = os.path.basename(model_id)
            if short == file_name or model_id == name:
                return True
            if len(model_id) >= 12 and sha256.startswith(model_id.lower()):
                return True
        return False

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
    _check_auth(url, status)
    if status == 200 and isinstance(props, dict) and "default_generation_settings" in props:
        return _llama_server_info(url, http, props)
    if status == 503:
        raise EndpointDown(f"{url}: HTTP 503 (loading the model?)")
    status, models = http.call(url + "/v1/models", timeout=PROBE_TIMEOUT_S)
    _check_auth(url, status)
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
    return ServerInfo(url, KIND_OPENAI, _fingerprint(url, http, ids), None, ids)


def _check_auth(url: str, status: int) -> None:
    if status in (401, 403):
        raise UserError(f"{url}: HTTP {status}: the server wants an API key; pass --api-key "
                        "(or PAW_SERVER_API_KEY), or --server-header 'Name: value'")


def _llama_server_info(url: str, http: Http, props: dict[str, Any]) -> ServerInfo:
    settings = props.get("default_generation_settings") or {}
    ids: tuple[str, ...] = ()
    status, models = http.call(url + "/v1/models", timeout=PROBE_TIMEOUT_S)
    if status == 200 and isinstance(models, dict):
        ids = tuple(str(m.get("id")) for m in models.get("data") or () if isinstance(m, dict))
    path = props.get("model_path")
    return ServerInfo(
        url, KIND_LLAMA_SERVER, str(props.get("build_info") or "unknown"),
        os.path.basename(str(path)) if path else None, ids,
        slots=int(props.get("total_slots") or 1),
        slot_ctx=int(settings["n_ctx"]) if settings.get("n_ctx") else None,
        defaults=dict(settings.get("params") or {}),
    )


def _fingerprint(url: str, http: Http, ids: tuple[str, ...]) -> str:
    """The `system_fingerprint` of a one-token completion (the build of a generic server)."""
    try:
        reply = http.post(url + "/v1/completions", {
            "model": ids[0] if ids else None, "prompt": "a", "max_tokens": 1,
            "temperature": 0.0}, timeout=PROBE_TIMEOUT_S * 3)
    except ServerError:
        return "unknown"
    return str(reply.get("system_fingerprint") or "unknown")


def health(url: str, http: Http, kind: str) -> bool:
    """Whether an endpoint answers and is ready (`/health` for llama-server)."""
    path = "/health" if kind == KIND_LLAMA_SERVER else "/v1/models"
    try:
        status, _ = http.call(url + path, timeout=PROBE_TIMEOUT_S)
    except EndpointDown:
        return False
    return status == 200
