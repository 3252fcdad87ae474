"""OpenAI-compatible replies as servers send them (issue 37.1/37.2): both log-probability
formats, read by one parser (`workbench.models.openai_reply`).

The fixtures in `fixtures/openai_shapes/` are written from vLLM's and OpenAI's published
API references (README there); the `model` tests read live `/v1` answers of
llama_cpp.server and llama-server with the same parser, so a fixture cannot drift into a
shape no real server sends.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from workbench.models.openai_reply import MalformedReply, NoLogprobs, read_reply

SHAPES = Path(__file__).parent / "fixtures" / "openai_shapes"


def _load(name: str) -> dict:
    return json.loads((SHAPES / name).read_text(encoding="utf-8"))


def test_vllm_legacy_completion_with_token_ids() -> None:
    reply = read_reply(_load("vllm_completion.json"))
    assert reply.text == " the patient" and reply.finish == "length"
    assert [t.id for t in reply.tokens] == [260, 1041]
    assert [[c.id for c in top] for top in reply.tops] == [[260, 253], [1041, 5625]]
    assert reply.tops[0][1].logprob == -2.2228 and reply.fingerprint is None


def test_vllm_and_openai_chat_completions_current_format() -> None:
    chat = read_reply(_load("vllm_chat.json"))
    assert chat.text == "A" and chat.finish == "stop"
    assert [(c.text, c.raw, c.logprob) for c in chat.tops[0]] == [
        ("A", b"A", -0.2107), ("B", b"B", -1.7611)]
    openai = read_reply(_load("openai_chat.json"))
    assert openai.text == "Answer: B" and openai.fingerprint == "fp_44709d6fcb"
    assert b"".join(t.raw or b"" for t in openai.tokens).decode() == openai.text
    assert [c.raw for c in openai.tops[2]] == [b" B", b" A"]
    assert math.isclose(sum(math.exp(c.logprob) for c in openai.tops[2]), 0.999, abs_tol=0.01)


def test_openai_legacy_completion() -> None:
    reply = read_reply(_load("openai_completion.json"))
    assert reply.text == " Paris" and reply.finish == "stop"
    assert [(c.text, c.id) for c in reply.tops[0]] == [(" Paris", None), (" the", None)]
    assert reply.fingerprint == "fp_44709d6fcb"


def test_missing_log_probabilities_and_other_shapes_are_named() -> None:
    bare = _load("openai_chat.json")
    bare["choices"][0]["logprobs"] = None
    with pytest.raises(NoLogprobs, match="no log-probabilities"):
        read_reply(bare)
    assert read_reply(bare, want_logprobs=False).text == "Answer: B"
    with pytest.raises(MalformedReply, match="not a completion reply"):
        read_reply(_load("vllm_models.json"))


def _live(url: str, payload: dict) -> dict:
    from workbench.models.endpoint import Http

    return Http(timeout_s=120).post(url, payload)


@pytest.mark.model
def test_the_parser_reads_live_llama_cpp_server_answers(tmp_path) -> None:
    pytest.importorskip("fastapi", reason="the server extra: pip install 'paw-workbench[server]'")
    from store import open_db
    from workbench.models import default_model
    from workbench.models.pool import start_pool

    model = default_model(open_db(memory=True))
    with start_pool(model.path, 1, engine="python", threads=1, log_dir=tmp_path) as pool:
        reply = read_reply(_live(pool.urls[0] + "/v1/completions", {
            "prompt": "The patient was admitted", "max_tokens": 3, "temperature": 0.0,
            "logprobs": 3}))
    assert len(reply.tokens) == len(reply.tops) == 3
    assert "".join(t.text for t in reply.tokens) == reply.text  # legacy texts spell it


@pytest.mark.model
def test_the_parser_reads_live_llama_server_v1_answers(tmp_path) -> None:
    from store import open_db
    from tests.models.servers import llama_server_or_skip
    from workbench.models import default_model
    from workbench.models.pool import start_pool

    binary = llama_server_or_skip()
    model = default_model(open_db(memory=True))
    with start_pool(model.path, 1, engine="llama-server", threads=1, binary=binary,
                    log_dir=tmp_path) as pool:
        url = pool.urls[0]
        legacy = read_reply(_live(url + "/v1/completions", {
            "prompt": "The patient was admitted", "max_tokens": 3, "temperature": 0.0,
            "logprobs": 3}))
        chat = read_reply(_live(url + "/v1/chat/completions", {
            "messages": [{"role": "user", "content": "Say A or B."}], "max_tokens": 3,
            "temperature": 0.0, "logprobs": True, "top_logprobs": 3}))
    for reply in (legacy, chat):
        assert len(reply.tops) == len(reply.tokens) >= 1
        assert all(len(top) >= 1 for top in reply.tops)
        assert reply.fingerprint  # llama-server's build, as system_fingerprint


def _v1_only(path: str, payload: object) -> tuple[int, dict] | None:
    """A proxy that shows only the OpenAI API (`/v1/...`), as many gateways do."""
    return None if path.startswith("/v1/") else (404, {"error": "not found"})


@pytest.mark.model
def test_llama_server_reached_as_a_generic_server_runs_the_small_audit(tmp_path) -> None:
    from store import open_db
    from tests.models.proxy import Proxy
    from tests.models.servers import llama_server_or_skip
    from workbench.audit import AuditSpec, run_audit
    from workbench.datasets.demo import import_demo
    from workbench.engine import AuditEngine
    from workbench.models import default_model
    from workbench.models.pool import start_pool
    from workbench.models.server import PoolSettings, ServerPoolBackend
    from workbench.perturb import resolve_operators

    binary = llama_server_or_skip()
    db = open_db(memory=True)
    import_demo(db)
    model = default_model(db)
    spec = AuditSpec(dataset="demo", models=("default",), templates=("neutral_cot@1",),
                     operators=resolve_operators("F1_truncate_50,M2_sex,shuffle"),
                     item_ids=("demo-003", "demo-001", "triage-001"), max_tokens=24)
    with start_pool(model.path, 1, engine="llama-server", threads=1, ctx=1024,
                    binary=binary, log_dir=tmp_path) as pool, \
            Proxy(pool.urls, _v1_only) as gateway:
        settings = PoolSettings((gateway.url + "/v1",), concurrency=1)
        backend = ServerPoolBackend(model, settings)
        info = backend.infos[gateway.url]
        assert backend.kind == "openai" and info.token_ids  # ids taken, as llama-server does
        assert backend.n_ctx == 1024  # /v1/models meta.n_ctx, not the 4096 default
        assert info.version_known and backend.build != "unknown"  # its system_fingerprint
        backend.close()
        engine = AuditEngine(db, servers=settings)
        outcome = run_audit(db, spec, engine=engine, judge=False)
        engine.close()
    assert not outcome.stopped and not outcome.job_counts.get("error")
    rows = db.execute("SELECT key, engine FROM generations").fetchall()
    assert len(rows) == len({r[0] for r in rows}) == outcome.generated > 6  # each once
    assert {r[1] for r in rows} == {f"openai {backend.build} serial"}
