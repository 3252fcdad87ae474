"""Fast checks of the pool's pure parts: model matching, sampler neutrality, keys, options."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from store.errors import UserError
from workbench.models.endpoint import ServerInfo
from workbench.models.server import pool_tag
from workbench.models.server_settings import LLAMA_SERVER_PINNED, check_neutral

SHA = "ab12cd34ef56" + "0" * 52


def _info(**fields) -> ServerInfo:
    base = {"url": "http://h:1", "kind": "llama-server", "build": "b1-abc",
            "model_file": None, "model_ids": ()}
    return ServerInfo(**{**base, **fields})


def test_identity_is_content_reported_sizes_then_the_probe_fingerprint() -> None:
    import math

    from store.records import ModelRecord
    from workbench.models.identity import FLOOR, LocalFacts, check_fingerprint, check_reported

    model = ModelRecord(id=1, name="default", path="/m/SmolLM2.gguf", sha256=SHA)
    facts = LocalFacts(49152, 134515008, 90000000, (1, 2), ((7, 0.5), (8, 0.2), (9, 0.01)))
    check_reported("http://h:1", {"n_vocab": 49152, "n_params": 134515008}, facts, model, "x")
    check_reported("http://h:1", {}, facts, model, "x")  # a server that reports nothing
    with pytest.raises(UserError, match="reports n_params 268098176 .* has 134515008"):
        check_reported("http://h:1", {"n_params": 268098176}, facts, model, "m.gguf")
    same = {7: math.log(0.5 + FLOOR / 2), 8: math.log(0.2), 9: math.log(0.01)}
    assert check_fingerprint("http://h:1", same, facts, model, "x", str) <= FLOOR
    other = {7: math.log(0.3), 8: math.log(0.2)}  # token 9 absent: p 0 there
    with pytest.raises(UserError, match="'7' p=0.3000 where the registered file .* p=0.5000"):
        check_fingerprint("http://h:1", other, facts, model, "SmolLM2.gguf", str)


def test_defaults_a_request_cannot_clear_or_paw_does_not_know_are_refused() -> None:
    pinned = {name: value for name, value in LLAMA_SERVER_PINNED.items()}
    check_neutral(_info(defaults={**pinned, "dry_multiplier": 0.8, "stop": [],
                                  "speculative.types": "none"}))  # pinned per request
    with pytest.raises(UserError, match="stop = \\['Answer'\\].*--reverse-prompt"):
        check_neutral(_info(defaults={"stop": ["Answer"]}))
    with pytest.raises(UserError, match="grammar"):
        check_neutral(_info(defaults={"grammar": "root ::= \"A\""}))
    with pytest.raises(UserError, match="new_sampler_knob = 0.3 is one PAW does not know"):
        check_neutral(_info(defaults={"new_sampler_knob": 0.3}))


def test_the_key_tag_names_kind_build_slot_mode_and_serial_numerics() -> None:
    from workbench.models.identity import numerics_signature

    assert pool_tag(_info(), 1) == "llama-server b1-abc serial"
    assert pool_tag(_info(), 4) == "llama-server b1-abc shared"
    cpu = numerics_signature({282: -0.46372, 1041: -2.22277})
    gpu = numerics_signature({282: -0.46372001, 1041: -2.22277})  # last bits differ
    assert cpu != gpu and len(cpu) == 8
    assert cpu == numerics_signature({1041: -2.22277, 282: -0.46372})  # order-free
    assert pool_tag(_info(), 1, cpu) == f"llama-server b1-abc serial numerics:{cpu}"
    assert pool_tag(_info(), 4, cpu) == "llama-server b1-abc shared"  # not reproducible


def test_a_bad_server_header_is_one_clear_line(tmp_path) -> None:
    from workbench.cli import cli

    db = tmp_path / "paw.db"
    runner = CliRunner()
    assert runner.invoke(cli, ["demo", "--import-only", "--db", str(db)]).exit_code == 0
    result = runner.invoke(cli, ["run", "--dataset", "demo", "--limit", "1", "--db", str(db),
                                 "--servers", "http://127.0.0.1:9", "--server-header", "nocolon"])
    assert result.exit_code != 0
    assert "--server-header: 'nocolon' is not 'Name: value'" in str(result.exception or "") + \
        result.output


def test_a_pool_url_that_is_not_a_url_is_one_clear_line() -> None:
    from store import open_db
    from workbench.models import default_model
    from workbench.models.server import ServerPoolBackend

    model = default_model(open_db(memory=True))
    for bad in ("notaurl", "ftp://h:1", "http://"):
        with pytest.raises(UserError, match="is not a server URL"):
            ServerPoolBackend(model, [bad])


def test_paw_serve_s_llama_server_command_line() -> None:
    from workbench.models.llama_server import server_command

    command = server_command("llama-server", "m.gguf", host="127.0.0.1", port=8081,
                             threads=2, ctx=4096, parallel=4, gpu_layers=0,
                             extra_buffers=False, api_key="k")
    flags = dict(zip(command[1::2], command[2::2]))
    assert flags["-c"] == "16384" and flags["-np"] == "4"  # per-slot context = -c / -np
    assert flags["-fa"] == "off" and flags["-b"] == flags["-ub"] == "512"  # as in-process
    assert "--no-repack" in command  # CPUs that report AMX (extra buffers off)
    assert command[-2:] == ["--api-key", "k"]
    assert "--no-repack" not in server_command(
        "llama-server", "m.gguf", host="h", port=1, threads=1, ctx=512, parallel=1,
        gpu_layers=0, extra_buffers=True)
