"""A small HTTP proxy for the pool tests: round-robin over real servers, or faults injected.

It forwards each request, as it came, to the next of its targets in turn (one target: a
plain pass-through; several: a round-robin load balancer as a Kubernetes Service or nginx
`upstream` would be). `fault(path, payload)` may answer a request itself instead (e.g. an
HTTP 500 for generation requests only), so a real server behind it shows the fault PAW
must handle. Nothing in it knows PAW.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Fault = Callable[[str, Any], "tuple[int, dict] | None"]


class Proxy:
    """Listens on 127.0.0.1 (a free port) until `close()`; `url` is its base URL.

    Attributes:
        hits: (method, path, target) of every forwarded request, in order.
    """

    def __init__(self, targets: Sequence[str], fault: Fault | None = None) -> None:
        self.targets = list(targets)
        self.fault = fault
        self.hits: list[tuple[str, str, str]] = []
        self._turn = 0
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                proxy._handle(self, None)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                proxy._handle(self, self.rfile.read(length))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def __enter__(self) -> Proxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _handle(self, handler: BaseHTTPRequestHandler, body: bytes | None) -> None:
        payload = json.loads(body) if body else None
        answer = self.fault(handler.path, payload) if self.fault else None
        if answer is not None:
            status, reply = answer
            self._send(handler, status, json.dumps(reply).encode())
            return
        with self._lock:
            target = self.targets[self._turn % len(self.targets)]
            self._turn += 1
            self.hits.append((handler.command, handler.path, target))
        headers = {k: v for k, v in handler.headers.items()
                   if k.lower() in ("content-type", "authorization")}
        request = urllib.request.Request(target + handler.path, data=body, headers=headers,
                                         method=handler.command)
        try:
            with urllib.request.urlopen(request, timeout=600) as reply:
                status, data = reply.status, reply.read()
        except urllib.error.HTTPError as exc:
            status, data = exc.code, exc.read()
        except (urllib.error.URLError, OSError):
            status, data = 502, b'{"error": "bad gateway"}'
        self._send(handler, status, data)

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, data: bytes) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
