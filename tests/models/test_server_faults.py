"""Pool faults (issue 37.5): a 5xx moves the request, URLs separated by spaces, a wrong key
told from a missing one, the reason an endpoint is unreachable kept.

The fast tests talk to plain local HTTP servers (a refused port, a host name DNS cannot
know, an https URL to a plain-http server, a server that answers 401); the `model` tests
put the fault in front of real llama-server processes through `tests/models/proxy.py`.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from click.testing import CliRunner

from store.errors import UserError
from workbench.models.endpoint import EndpointDown, Http, probe
from workbench.models.pool import free_port
from workbench.models.server import parse_urls


def test_urls_may_be_separated_by_commas_spaces_or_both_and_may_end_in_v1() -> None:
    assert parse_urls("http://a:1 http://b:2") == ["http://a:1", "http://b:2"]
    assert parse_urls(" http://a:1 ,\thttp://b:2/,\n") == ["http://a:1", "http://b:2"]
    assert parse_urls("http://a:1/v1,http://b:2/v1/") == ["http://a:1", "http://b:2"]
    assert parse_urls("https://h/openai/v1") == ["https://h/openai"]


class _Stub:
    """A plain local HTTP server answering every request with one status and JSON body."""

    def __init__(self, status: int, body: bytes = b'{"error": "no"}') -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _reason(url: str) -> str:
    with pytest.raises(EndpointDown) as caught:
        Http(timeout_s=5).call(url)
    return str(caught.value)


def test_each_unreachable_endpoint_keeps_its_reason() -> None:
    assert "connection refused" in _reason(f"http://127.0.0.1:{free_port()}/props")
    assert "host name not found (DNS)" in _reason("http://no-such-host.invalid:8081/props")
    plain = _Stub(200, b"{}")
    try:
        assert "TLS failed" in _reason(f"https://127.0.0.1:{plain.port}/props")
    finally:
        plain.close()


def test_a_wrong_key_is_told_from_a_missing_one() -> None:
    guarded = _Stub(401)
    url = f"http://127.0.0.1:{guarded.port}"
    try:
        with pytest.raises(UserError, match="wants an API key and none was given"):
            probe(url, Http())
        with pytest.raises(UserError, match="refused the API key PAW sent"):
            probe(url, Http({"Authorization": "Bearer wrong"}))
    finally:
        guarded.close()


def test_a_pool_none_of_which_answers_names_each_reason_in_one_line(tmp_path) -> None:
    from workbench.cli import cli

    db = tmp_path / "paw.db"
    runner = CliRunner()
    assert runner.invoke(cli, ["demo", "--import-only", "--db", str(db)]).exit_code == 0
    one, two = free_port(), free_port()
    result = runner.invoke(cli, ["run", "--dataset", "demo", "--limit", "1", "--db", str(db),
                                 "--servers", f"http://127.0.0.1:{one} http://127.0.0.1:{two}"])
    assert result.exit_code != 0
    assert isinstance(result.exception, UserError)  # one line, exit 1 (the CLI's handler)
    line = str(result.exception)
    assert "\n" not in line and "no server of the pool answers" in line
    assert f":{one}/props: connection refused" in line
    assert f":{two}/props: connection refused" in line


@pytest.mark.model
def test_a_5xx_moves_the_request_to_a_healthy_endpoint_and_counts_endpoints(tmp_path) -> None:
    from store import open_db
    from store.generations import get_generations
    from tests.models.proxy import Proxy
    from tests.models.servers import Events
    from workbench.datasets.demo import import_demo
    from workbench.models import Runner, default_model
    from workbench.models.pool import start_pool
    from workbench.models.server import PoolSettings, ServerPoolBackend

    pytest.importorskip("fastapi", reason="the server extra: pip install 'paw-workbench[server]'")

    def failing(path: str, payload: Any) -> tuple[int, dict] | None:
        # Generations fail with a 500; the one-token identity probe and GETs pass.
        if payload and payload.get("max_tokens", 1) > 1:
            return 500, {"error": {"message": "internal error"}}
        return None

    db = open_db(memory=True)
    import_demo(db)
    model = default_model(db)
    from tests.models.servers import demo_requests

    requests = [r for r in demo_requests(db, 3, 8, 4) if r.mode == "direct"]
    with start_pool(model.path, 1, engine="python", threads=1, log_dir=tmp_path) as server, \
            Proxy(server.urls, failing) as broken:
        # The failing endpoint listed first: it takes items at the start.
        backend = ServerPoolBackend(model, PoolSettings((broken.url, server.urls[0]),
                                                        timeout_s=60))
        events = Events()
        summary = Runner(db, model, backend=backend).run(requests, on_event=events)
        assert summary.generated == 3 and summary.errors == 0
        rows = get_generations(db, summary.keys).values()
        assert {g.option_logits["endpoint"] for g in rows} == {server.urls[0]}
        assert any(broken.url in line and "dropped" in line and "HTTP 500" in line
                   for line in events.notices())
        # Alone, the failing endpoint: one endpoint, three attempts, said so.
        db2 = open_db(memory=True)
        import_demo(db2)
        model2 = default_model(db2)
        alone = ServerPoolBackend(model2, PoolSettings((broken.url,), timeout_s=60))
        failed = Runner(db2, model2, backend=alone).run(
            [r for r in demo_requests(db2, 1, 8, 4) if r.mode == "direct"])
    assert failed.errors == 1
    error = db2.execute("SELECT error FROM generations").fetchone()[0]
    assert "failed on 1 endpoint(s) in 3 attempt(s)" in error and "HTTP 500" in error
